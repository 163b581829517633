//! `${VAR}`, `${env:VAR}`, `${keyring:NAME}` and `${workspaceFolder}` expansion in config values.

use std::path::Path;

/// Reads environment variables (a trait so tests need not touch the process environment).
pub trait EnvLookup: Send + Sync {
    /// The variable's value, `None` when unset.
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl EnvLookup for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        cairn_engine::secret_env::var(name)
    }
}

impl EnvLookup for std::collections::BTreeMap<String, String> {
    fn var(&self, name: &str) -> Option<String> {
        self.get(name).cloned()
    }
}

/// Reads named secrets (the OS keyring in the app; a map in tests).
pub trait SecretLookup: Send + Sync {
    /// The secret's value; `Err` says why it could not be read.
    fn secret(&self, name: &str) -> Result<Option<String>, crate::ServerError>;
}

/// No secret store: every `${keyring:…}` is reported missing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoSecrets;

impl SecretLookup for NoSecrets {
    fn secret(&self, _name: &str) -> Result<Option<String>, crate::ServerError> {
        Err(crate::ServerError::Config(
            "no keyring is available here".into(),
        ))
    }
}

/// What variables expand to.
#[derive(Clone, Copy)]
pub struct VarContext<'a> {
    /// Environment variables.
    pub env: &'a dyn EnvLookup,
    /// `${keyring:NAME}` secrets.
    pub secrets: &'a dyn SecretLookup,
    /// `${workspaceFolder}`.
    pub workspace: Option<&'a Path>,
}

impl<'a> VarContext<'a> {
    /// The process environment, no keyring, no workspace.
    pub fn process() -> VarContext<'static> {
        VarContext {
            env: &ProcessEnv,
            secrets: &NoSecrets,
            workspace: None,
        }
    }

    /// Expands every `${…}` in `text`; problems (unset variables, unknown forms) are returned
    /// as messages and the placeholder becomes empty text.
    pub fn expand(&self, text: &str) -> (String, Vec<String>) {
        let mut out = String::with_capacity(text.len());
        let mut problems = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                out.push_str(&rest[start..]);
                rest = "";
                break;
            };
            let inner = after[..end].trim();
            match self.resolve(inner) {
                Ok(v) => out.push_str(&v),
                Err(msg) => problems.push(msg.to_string()),
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        (out, problems)
    }

    fn resolve(&self, inner: &str) -> Result<String, crate::ServerError> {
        if inner == "workspaceFolder" || inner == "workspace" {
            return self
                .workspace
                .map(|w| w.display().to_string())
                .ok_or_else(|| {
                    crate::ServerError::Config(format!("`${{{inner}}}` has no workspace here"))
                });
        }
        let (prefix, name) = match inner.split_once(':') {
            Some((p, n)) => (p.trim(), n.trim()),
            None => ("env", inner),
        };
        if name.is_empty() {
            return Err(crate::ServerError::Config(format!(
                "`${{{inner}}}` names no variable"
            )));
        }
        match prefix {
            "env" => self
                .env
                .var(name)
                .ok_or_else(|| crate::ServerError::Config(format!("environment variable {name} is not set (expanded to empty)"))),
            "keyring" => match self.secrets.secret(name) {
                Ok(Some(v)) => Ok(v),
                Ok(None) => Err(crate::ServerError::Config(format!("keyring entry `{name}` does not exist (expanded to empty)"))),
                Err(e) => Err(crate::ServerError::Config(format!("keyring entry `{name}` cannot be read: {e} (expanded to empty)"))),
            },
            other => Err(crate::ServerError::Config(format!(
                "`${{{other}:…}}` variables are not supported (use ${{VAR}}, ${{env:VAR}} or ${{keyring:NAME}}); expanded to empty"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::collections::BTreeMap;

    use super::*;

    struct Secrets;
    impl SecretLookup for Secrets {
        fn secret(&self, name: &str) -> Result<Option<String>, crate::ServerError> {
            Ok((name == "gh").then(|| "s3cret".to_string()))
        }
    }

    #[test]
    fn expands_env_keyring_and_workspace() {
        let env: BTreeMap<String, String> = [("TOKEN".to_string(), "abc".to_string())].into();
        let ws = Path::new("/ws");
        let cx = VarContext {
            env: &env,
            secrets: &Secrets,
            workspace: Some(ws),
        };
        let (v, p) =
            cx.expand("Bearer ${TOKEN} ${env:TOKEN} ${keyring:gh} ${workspaceFolder}/x $HOME");
        assert_eq!(v, "Bearer abc abc s3cret /ws/x $HOME");
        assert!(p.is_empty());
    }

    #[test]
    fn unset_and_unknown_are_reported_and_empty() {
        let env: BTreeMap<String, String> = BTreeMap::new();
        let cx = VarContext {
            env: &env,
            secrets: &NoSecrets,
            workspace: None,
        };
        let (v, p) = cx.expand("a${MISSING}b${input:x}c${keyring:k}d${unterminated");
        assert_eq!(v, "abcd${unterminated");
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].contains("MISSING"));
        assert!(p[1].contains("input"));
        assert!(p[2].contains("keyring"));
    }
}
