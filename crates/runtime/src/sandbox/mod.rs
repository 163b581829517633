//! The session's execution environment: bubblewrap sandbox selection (`--sandbox`,
//! `CAIRN_SANDBOX` or the sandbox settings = auto | off | required) and the vault
//! (`<state_dir>/vault.toml`, a flat table of strings).

/// Each layer of the sandbox, active or not, and why not.
pub mod status;
/// Whether bubblewrap can create its user namespace here, and what to do when not.
pub mod userns;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_engine::{CommandWrapper, ExecEnvironment, ShellPolicy, WrappedCommand};
use cairn_policy::sandbox::{bwrap_guarded, bwrap_path, bwrap_works, SandboxMode, SandboxSpec};

use crate::error::RuntimeError;

/// Runs commands inside bubblewrap.
pub struct BwrapWrapper {
    bwrap: PathBuf,
    spec: SandboxSpec,
    /// Where mount-point markers go (under the state dir, which the sandbox cannot write
    /// unless it was placed inside a writable folder).
    markers: PathBuf,
    /// The asking proxy of `--sandbox-network proxy`, when set up.
    net: Option<crate::sandbox_net::NetProxy>,
}

impl CommandWrapper for BwrapWrapper {
    fn wrap(&self, argv: Vec<String>, extra_writable: &[PathBuf]) -> Vec<String> {
        self.wrap_guarded(argv, extra_writable).argv
    }

    fn wrap_guarded(&self, argv: Vec<String>, extra_writable: &[PathBuf]) -> WrappedCommand {
        self.wrap_hiding(argv, extra_writable, &[])
    }

    fn wrap_hiding(
        &self,
        argv: Vec<String>,
        extra_writable: &[PathBuf],
        hidden: &[PathBuf],
    ) -> WrappedCommand {
        self.wrap_call(argv, extra_writable, hidden, None)
    }

    fn wrap_call(
        &self,
        argv: Vec<String>,
        extra_writable: &[PathBuf],
        hidden: &[PathBuf],
        gate: Option<Arc<dyn cairn_netproxy::gate::NetGate>>,
    ) -> WrappedCommand {
        let mut spec = std::borrow::Cow::Borrowed(&self.spec);
        if !hidden.is_empty() {
            let more = cairn_policy::sandbox_home::hidden_paths(Path::new("/nonexistent"), hidden);
            let spec = spec.to_mut();
            for p in more {
                if !spec.hidden.contains(&p) {
                    spec.hidden.push(p);
                }
            }
        }
        let mut env = explicit_env(&self.spec);
        let proxy = match &self.net {
            Some(net) => match net.start_for(spec.to_mut(), gate) {
                Ok(handle) => {
                    env.retain(|(k, _)| !k.to_ascii_lowercase().ends_with("_proxy"));
                    env.extend(cairn_netproxy::proxy_env());
                    Some(handle)
                }
                Err(e) => {
                    // No proxy: the command still runs in its own network namespace, with
                    // no network at all.
                    tracing::warn!("sandbox network: the proxy did not start: {e}");
                    let spec = spec.to_mut();
                    spec.proxy = None;
                    spec.network = false;
                    None
                }
            },
            None => None,
        };
        let (argv, guard) = bwrap_guarded(
            &self.bwrap,
            &spec,
            extra_writable,
            &argv,
            Some(&self.markers),
        );
        WrappedCommand {
            argv,
            guard: Some(Box::new((guard, proxy))),
            env: Some(env),
        }
    }

    fn describe(&self) -> String {
        let mut writable = vec!["workspace".to_string(), "a private /tmp".to_string()];
        writable.extend(
            self.spec
                .extra_writable
                .iter()
                .map(|p| p.display().to_string()),
        );
        writable.push("private package caches".into());
        let (read_only, absent) = match &self.spec.allow_list {
            Some(_) => (
                "the system folders and your home's toolchains",
                "; absent: the rest of your home, other homes, /run, /srv, /mnt, /media, \
                 /var/lib, /etc's secrets",
            ),
            None => ("the rest of the system", ""),
        };
        format!(
            "bubblewrap (writable: {}; read-only: {}, {read_only}{absent}; hidden: \
             credentials such as ~/.ssh, Cairn's own state; environment: named variables \
             only; no terminal input (own session, seccomp))",
            writable.join(", "),
            self.spec.read_only_inside.join(", ")
        )
    }
}

/// The environment a sandboxed command starts with: the named variables of Cairn's own
/// ([`cairn_policy::sandbox_env`]: base, `LC_*`, proxies, the settings' `env`), never a
/// desktop door or a secret. Cairn adds the vault and its own variables when it starts it.
pub fn explicit_env(spec: &SandboxSpec) -> Vec<(String, String)> {
    cairn_policy::sandbox_env::sandbox_env(
        std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        &spec.pass_env,
        &cairn_engine::secret_env::is_secret_name,
    )
}

/// The sandbox mode from `CAIRN_SANDBOX`.
pub fn sandbox_mode_from_env() -> Result<SandboxMode, RuntimeError> {
    match std::env::var("CAIRN_SANDBOX")
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        None => Ok(SandboxMode::Auto),
        Some(v) => SandboxMode::parse(&v).ok_or_else(|| {
            RuntimeError::Config(format!(
                "CAIRN_SANDBOX=`{v}`: expected auto, off or required"
            ))
        }),
    }
}

/// Whether a session's commands run sandboxed, as the user is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SandboxState {
    /// Commands run inside the sandbox described here.
    On(String),
    /// The user turned it off (`--sandbox off`, `CAIRN_SANDBOX=off`, `mode = "off"`).
    Off,
    /// `auto`, but no working sandbox here (no bubblewrap, or no user namespaces).
    Unavailable,
}

impl SandboxState {
    /// One line for the user (the CLI's stderr, the app's status).
    pub fn describe(&self) -> String {
        match self {
            SandboxState::On(s) => format!("sandbox: enforced, commands run inside {s}"),
            SandboxState::Off => "sandbox: off (--sandbox off, CAIRN_SANDBOX=off or the sandbox \
                                  setting): commands are not confined and run with all your \
                                  permissions"
                .to_string(),
            SandboxState::Unavailable => "sandbox: not available here (bubblewrap is missing or \
                                          cannot create user namespaces): commands are not \
                                          confined"
                .to_string(),
        }
    }
}

/// What decides a session's sandbox besides the workspace.
#[derive(Debug, Clone, Default)]
pub struct SandboxOptions {
    /// `auto` (on wherever it works), `off`, `required`.
    pub mode: SandboxMode,
    /// Extra writable folders (`--sandbox-writable`, the settings' `extraWritable`).
    pub writable: Vec<PathBuf>,
    /// Extra hidden paths (`--sandbox-hide`, the settings' `hidden`).
    pub hidden: Vec<PathBuf>,
    /// Variables passed in besides the built-in ones (the settings' `env`).
    pub pass_env: Vec<String>,
    /// Folders bound read-only into the allow-list filesystem (the settings'
    /// `extraReadable`).
    pub readable: Vec<PathBuf>,
    /// The network of sandboxed commands (`--sandbox-network`, the settings' `network`).
    pub network: crate::sandbox_net::SandboxNetwork,
    /// Hosts commands reach without asking besides the rules: the defaults and
    /// `--allow-domain`.
    pub allowed_hosts: cairn_policy::net_rules::HostList,
    /// The configuration the session reads (which rules its hooks' and MCP servers' network
    /// goes by).
    pub config: crate::config_scope::ConfigScope,
}

/// The execution environment for a workspace with no extra folders. `_policy` no longer
/// matters: `auto` sandboxes every command wherever bubblewrap works.
pub fn exec_environment(
    workspace: &Path,
    state_dir: &Path,
    mode: SandboxMode,
    _policy: ShellPolicy,
) -> Result<ExecEnvironment, RuntimeError> {
    let opts = SandboxOptions {
        mode,
        ..Default::default()
    };
    Ok(exec_environment_with(workspace, state_dir, &opts)?.0)
}

/// The execution environment for a workspace: with `auto` (the default) every command runs
/// inside bubblewrap whenever it works here, whatever the permission mode and shell policy;
/// `required` fails clearly without it; `off` runs commands unconfined.
pub fn exec_environment_with(
    workspace: &Path,
    state_dir: &Path,
    opts: &SandboxOptions,
) -> Result<(ExecEnvironment, SandboxState), RuntimeError> {
    let mut env = ExecEnvironment::default()
        .without_credentials()
        .with_vault(load_vault(state_dir)?);
    if opts.mode == SandboxMode::Off {
        env.sandbox = Some(crate::sandbox::status::report(&SandboxState::Off, None));
        return Ok((env, SandboxState::Off));
    }
    let Some(bwrap) = bwrap_path().filter(|_| bwrap_works()) else {
        return match opts.mode {
            SandboxMode::Required => Err(RuntimeError::Config(format!(
                "sandbox mode `required` (--sandbox or CAIRN_SANDBOX), but no working sandbox \
                 is available: {} (install bubblewrap, and allow unprivileged user namespaces)",
                crate::sandbox::status::unavailable_reason()
            ))),
            _ => {
                let state = SandboxState::Unavailable;
                env.sandbox = Some(crate::sandbox::status::report(&state, None));
                Ok((env, state))
            }
        };
    };
    let mut spec = session_spec(workspace, state_dir, opts)?;
    // Commands no tool call asks for (hooks, MCP servers) go by the rules as they were.
    let rules = crate::permissions::load_rules_in(workspace, &opts.config).unwrap_or_default();
    let net = crate::sandbox_net::configure(&mut spec, opts.network, &opts.allowed_hosts, rules);
    if net.is_some() {
        env.net_allowed = opts.allowed_hosts.clone();
        let ws = workspace.to_path_buf();
        env.net_keep = Some(Arc::new(move |host: &str| {
            let allow = cairn_protocol::AlwaysAllow::Tool {
                name: cairn_engine::net_gate::host_allowance(host),
            };
            crate::permissions::add_project_rule(
                &ws,
                cairn_policy::net_rules::NETWORK_RULE_TOOL,
                &allow,
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
        }));
    }
    let wrapper = BwrapWrapper {
        bwrap,
        spec,
        markers: state_dir.join("sandbox-mounts"),
        net,
    };
    let state = SandboxState::On(wrapper.describe());
    env.sandbox = Some(crate::sandbox::status::report(&state, Some(&wrapper.spec)));
    env.wrapper = Some(Arc::new(wrapper));
    Ok((env, state))
}

/// The sandbox of a session in `workspace`: writable workspace, private `/tmp`, the user's
/// extra folders; private package caches under `<state_dir>/sandbox-cache/<workspace>`;
/// credentials, Cairn's state dir and config dir hidden.
pub fn session_spec(
    workspace: &Path,
    state_dir: &Path,
    opts: &SandboxOptions,
) -> Result<SandboxSpec, RuntimeError> {
    let mut spec = SandboxSpec::for_workspace(workspace);
    spec.extra_writable = opts.writable.clone();
    spec.pass_env = opts.pass_env.clone();
    spec.network = opts.network == crate::sandbox_net::SandboxNetwork::Open;
    // Saved sessions (their permissions) and user settings stay read-only (and are hidden
    // below as well).
    spec.read_only = crate::reserved::private_dirs(state_dir);
    spec.env.push(("TMPDIR".into(), "/tmp".into()));
    spec.seccomp = seccomp_filter(state_dir)?;
    let mut hide: Vec<PathBuf> = vec![state_dir.to_path_buf()];
    if let Some(config) = dirs::config_dir() {
        hide.push(config.join("cairn"));
    }
    // The vault (its sealed file and key) beside a moved config.toml.
    hide.extend(crate::reserved::vault_files());
    if let Some(p) = crate::permissions::user_rules_path() {
        hide.push(p);
    }
    hide.extend(opts.hidden.iter().cloned());
    let Some(home) = dirs::home_dir() else {
        spec.hidden = cairn_policy::sandbox_home::hidden_paths(Path::new("/nonexistent"), &hide);
        return Ok(spec);
    };
    spec.hidden = cairn_policy::sandbox_home::hidden_paths(&home, &hide);
    spec.allow_list = Some(allow_list_fs(&home, state_dir, &opts.readable)?);
    let cargo_home = std::env::var_os("CARGO_HOME")
        .filter(|c| !c.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".cargo"));
    let root = cache_root(state_dir, workspace);
    let caches = cairn_policy::sandbox_home::private_caches(&home, Some(&cargo_home), &root)
        .map_err(|e| {
            RuntimeError::Config(format!(
                "cannot create the sandbox's private caches in {}: {e}",
                root.display()
            ))
        })?;
    spec.private_binds = caches.binds;
    spec.env.extend(caches.env);
    Ok(spec)
}

/// The allow-list filesystem of the session: `home` emptied, its toolchains and the
/// user's `extraReadable` folders bound back read-only, and a `~/.gitconfig` generated
/// from an allow-list of keys (written under `<state_dir>/sandbox-home`).
fn allow_list_fs(
    home: &Path,
    state_dir: &Path,
    readable: &[PathBuf],
) -> Result<cairn_policy::sandbox_fs::AllowListFs, RuntimeError> {
    let mut fs = cairn_policy::sandbox_fs::AllowListFs::for_home(home, readable);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let text = cairn_policy::sandbox_fs::generated_gitconfig(&[
        xdg.join("git/config"),
        home.join(".gitconfig"),
    ]);
    let dir = state_dir.join("sandbox-home");
    let file = dir.join("gitconfig");
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        if std::fs::read_to_string(&file).ok().as_deref() != Some(text.as_str()) {
            let tmp = dir.join(format!("gitconfig.{}.tmp", std::process::id()));
            std::fs::write(&tmp, &text)?;
            std::fs::rename(&tmp, &file)?;
        }
        Ok(())
    };
    write().map_err(|e| {
        RuntimeError::Config(format!(
            "cannot write the sandbox's git config in {}: {e}",
            dir.display()
        ))
    })?;
    fs.files.push((file, home.join(".gitconfig")));
    Ok(fs)
}

/// The seccomp filter file of the session's sandboxed commands (TIOCSTI and TIOCLINUX
/// refused), written into the state dir; `None` (said in the log and by `cairn sandbox
/// status`) where no filter is built for this architecture.
fn seccomp_filter(state_dir: &Path) -> Result<Option<PathBuf>, RuntimeError> {
    use cairn_policy::sandbox_seccomp::{write_filter, SeccompError};
    match write_filter(state_dir) {
        Ok(p) => Ok(Some(p)),
        Err(SeccompError::Arch(arch)) => {
            tracing::warn!(arch, "sandbox: no seccomp filter for this architecture");
            Ok(None)
        }
        Err(e) => Err(RuntimeError::Config(e.to_string())),
    }
}

/// The folder of a workspace's private package caches: `<state_dir>/sandbox-cache/<name>-<hash>`.
pub fn cache_root(state_dir: &Path, workspace: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(workspace.display().to_string().as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(32)
        .collect();
    state_dir
        .join("sandbox-cache")
        .join(format!("{name}-{hex}"))
}

/// Loads `<state_dir>/vault.toml` (`NAME = "value"` lines); missing file = empty vault.
pub fn load_vault(state_dir: &Path) -> Result<Vec<(String, String)>, RuntimeError> {
    let path = state_dir.join("vault.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(RuntimeError::Config(format!("{}: {e}", path.display()))),
    };
    let table: toml::Table = toml::from_str(&text)
        .map_err(|e| RuntimeError::Config(format!("{}: {e}", path.display())))?;
    let mut out = Vec::new();
    for (k, v) in table {
        match v {
            toml::Value::String(s) => out.push((k, s)),
            _ => {
                return Err(RuntimeError::Config(format!(
                    "{}: `{k}` must be a string",
                    path.display()
                )))
            }
        }
    }
    Ok(out)
}
