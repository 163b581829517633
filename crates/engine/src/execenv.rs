//! How tools start processes: an optional OS sandbox wrapper and the vault environment
//! (per-agent secrets injected into subprocesses, scrubbed from everything the model, the
//! events and the logs see).

use std::path::PathBuf;
use std::sync::Arc;

/// A command line ready to start, with what must stay alive as long as its process runs.
pub struct WrappedCommand {
    /// The argv to execute.
    pub argv: Vec<String>,
    /// Dropped when the process has ended (e.g. removes the sandbox's host mount points).
    pub guard: Option<Box<dyn std::any::Any + Send + Sync>>,
    /// When set, the process starts from exactly these variables (the sandbox's explicit
    /// environment) instead of Cairn's own; the caller then adds its own (vault, marker).
    pub env: Option<Vec<(String, String)>>,
}

impl std::fmt::Debug for WrappedCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WrappedCommand")
            .field("argv", &self.argv)
            .field("guard", &self.guard.is_some())
            .field(
                "env",
                &self
                    .env
                    .as_ref()
                    .map(|e| e.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>()),
            )
            .finish()
    }
}

impl WrappedCommand {
    /// A command that needs nothing kept alive.
    pub fn plain(argv: Vec<String>) -> Self {
        WrappedCommand {
            argv,
            guard: None,
            env: None,
        }
    }
}

/// Wraps a command's argv to run it inside an OS sandbox.
pub trait CommandWrapper: Send + Sync {
    /// The argv that runs `argv` in the sandbox; `extra_writable` are granted folders.
    fn wrap(&self, argv: Vec<String>, extra_writable: &[PathBuf]) -> Vec<String>;
    /// Like [`CommandWrapper::wrap`], plus a guard the caller keeps until the process ended.
    fn wrap_guarded(&self, argv: Vec<String>, extra_writable: &[PathBuf]) -> WrappedCommand {
        WrappedCommand::plain(self.wrap(argv, extra_writable))
    }
    /// Like [`CommandWrapper::wrap_guarded`], with `hidden` (paths read-denied by the
    /// permission rules) mounted away too; a wrapper that cannot hide paths ignores them.
    fn wrap_hiding(
        &self,
        argv: Vec<String>,
        extra_writable: &[PathBuf],
        hidden: &[PathBuf],
    ) -> WrappedCommand {
        let _ = hidden;
        self.wrap_guarded(argv, extra_writable)
    }
    /// Like [`CommandWrapper::wrap_hiding`] for one tool call's command, whose network
    /// (when the wrapper proxies it) is decided by `net`; a wrapper without a proxy ignores
    /// it.
    fn wrap_call(
        &self,
        argv: Vec<String>,
        extra_writable: &[PathBuf],
        hidden: &[PathBuf],
        net: Option<Arc<dyn cairn_netproxy::gate::NetGate>>,
    ) -> WrappedCommand {
        let _ = net;
        self.wrap_hiding(argv, extra_writable, hidden)
    }
    /// A short description (`bubblewrap`, …) for the prompt and the UI.
    fn describe(&self) -> String;
}

/// Keeps "always for this project" for a host (writes a `Network(host)` rule limited to the
/// project); set by whoever owns the rules files (the runtime).
pub type KeepHost = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// Names a vault may not override: they control how every program runs.
pub const HARDENED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "SHELL",
    "PWD",
    "LD_PRELOAD",
    "LD_LIBRARY_PATH",
    "IFS",
    "ENV",
    "BASH_ENV",
];

/// Environment variables Cairn reads as credentials: never passed to the commands the agent
/// runs (a vault entry of the same name puts one back on purpose), and their values are
/// scrubbed from tool output. Every other variable named like a secret
/// ([`crate::secret_env::is_secret_name`]) is removed and scrubbed too.
pub const CREDENTIAL_ENV: &[&str] = crate::secret_env::KNOWN_SECRET_ENV;

/// Shortest secret that is scrubbed (shorter values would mangle ordinary text).
const MIN_SECRET: usize = 8;

/// The execution environment of a session.
#[derive(Clone, Default)]
pub struct ExecEnvironment {
    /// Sandbox wrapper; `None` = commands run unconfined.
    pub wrapper: Option<Arc<dyn CommandWrapper>>,
    /// Vault variables (hardened names already removed).
    pub vault: Vec<(String, String)>,
    /// Variables removed from every command's environment ([`CREDENTIAL_ENV`] by default).
    pub removed_env: Vec<String>,
    /// What protects the commands, layer by layer (`turn_start.data.sandbox`); `None` when
    /// whoever built this environment did not say.
    pub sandbox: Option<cairn_protocol::SandboxReport>,
    /// Hosts sandboxed commands reach without asking (the defaults, `--allow-domain`),
    /// besides the `Network(...)` rules.
    pub net_allowed: cairn_policy::net_rules::HostList,
    /// Keeps a host "always for this project" (set by the runtime).
    pub net_keep: Option<KeepHost>,
    /// Credentials scrubbed from everything tools return: the session's API keys and the
    /// values of the removed variables. Shared with subagents; updated when the LLM client
    /// changes.
    secrets: Arc<std::sync::RwLock<Vec<String>>>,
}

impl std::fmt::Debug for ExecEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecEnvironment")
            .field("sandbox", &self.wrapper.as_ref().map(|w| w.describe()))
            .field(
                "vault_names",
                &self.vault.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl ExecEnvironment {
    /// An environment whose commands do not inherit the credential variables of this process
    /// ([`CREDENTIAL_ENV`] and every name the secret rule matches, sealed or not); their
    /// values are scrubbed from tool output.
    pub fn without_credentials(mut self) -> Self {
        let mut found = Vec::new();
        let names = CREDENTIAL_ENV.iter().map(|n| (*n).to_string());
        let present = crate::secret_env::secret_vars();
        for name in names.chain(present.iter().map(|(k, _)| k.clone())) {
            if !self.removed_env.contains(&name) {
                self.removed_env.push(name);
            }
        }
        for (_, v) in present {
            found.push(v);
        }
        self.add_secrets(found);
        self
    }

    /// Also scrubs these values (API keys) from tool output.
    pub fn add_secrets(&self, values: impl IntoIterator<Item = String>) {
        let mut secrets = self.secrets.write().unwrap_or_else(|e| e.into_inner());
        for v in values {
            let v = v.trim().to_string();
            if v.len() >= MIN_SECRET && !secrets.contains(&v) {
                secrets.push(v);
            }
        }
    }

    /// An environment with a vault; hardened names and invalid names are dropped.
    pub fn with_vault(mut self, vault: impl IntoIterator<Item = (String, String)>) -> Self {
        self.vault = vault
            .into_iter()
            .filter(|(k, _)| {
                !k.is_empty()
                    && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    && !HARDENED_ENV.contains(&k.to_ascii_uppercase().as_str())
            })
            .collect();
        self
    }

    /// Replaces every vault value in `text` by `[vault:NAME]` and every credential by
    /// `[redacted credential]`.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (k, v) in &self.vault {
            if v.len() >= 4 && out.contains(v.as_str()) {
                out = out.replace(v.as_str(), &format!("[vault:{k}]"));
            }
        }
        let secrets = self.secrets.read().unwrap_or_else(|e| e.into_inner());
        for v in secrets.iter() {
            if out.contains(v.as_str()) {
                out = out.replace(v.as_str(), "[redacted credential]");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hardened_names_cannot_be_overridden_and_values_are_scrubbed() {
        let env = ExecEnvironment::default().with_vault(vec![
            ("PATH".to_string(), "/evil".to_string()),
            ("home".to_string(), "/evil".to_string()),
            ("API_TOKEN".to_string(), "tok-123456".to_string()),
            ("bad name".to_string(), "x".to_string()),
        ]);
        assert_eq!(
            env.vault,
            vec![("API_TOKEN".to_string(), "tok-123456".to_string())]
        );
        assert_eq!(env.scrub("token=tok-123456!"), "token=[vault:API_TOKEN]!");
        assert!(!format!("{env:?}").contains("tok-123456"));
    }

    #[test]
    fn credentials_are_scrubbed_and_shared_with_clones() {
        let env = ExecEnvironment::default();
        let child = env.clone();
        env.add_secrets(vec!["sk-live-0123456789".to_string(), "short".to_string()]);
        assert_eq!(
            child.scrub("key=sk-live-0123456789 and short"),
            "key=[redacted credential] and short"
        );
        assert!(!format!("{env:?}").contains("sk-live"));
        let env = ExecEnvironment::default().without_credentials();
        assert!(env.removed_env.iter().any(|n| n == "OPENAI_API_KEY"));
    }

    #[test]
    fn every_variable_named_like_a_secret_is_removed_and_scrubbed() {
        let vars = [
            ("BRAVE_API_KEY", "brave-key-0123456789"),
            ("TAVILY_API_KEY", "tvly-key-0123456789"),
            ("CAIRN_TEST_DEPLOY_TOKEN", "deploy-token-0123456789"),
            ("CAIRN_TEST_DB_PASSWORD", "db-password-0123456789"),
        ];
        for (k, v) in vars {
            std::env::set_var(k, v);
        }
        let env = ExecEnvironment::default().without_credentials();
        for (k, v) in vars {
            assert!(env.removed_env.iter().any(|n| n == k), "{k} not removed");
            assert_eq!(
                env.scrub(&format!("x{v}y")),
                "x[redacted credential]y",
                "{k}"
            );
        }
        assert!(!env
            .removed_env
            .iter()
            .any(|n| n == "PATH" || n == "SSH_AUTH_SOCK"));
        for (k, _) in vars {
            std::env::remove_var(k);
        }
    }
}
