//! The session's execution environment: bubblewrap sandbox selection (`CAIRN_SANDBOX` =
//! auto | off | required) and the vault (`<state_dir>/vault.toml`, a flat table of strings).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_engine::{CommandWrapper, ExecEnvironment, ShellPolicy, WrappedCommand};
use cairn_policy::sandbox::{bwrap_guarded, bwrap_path, bwrap_works, SandboxMode, SandboxSpec};

use crate::RuntimeError;

/// Runs commands inside bubblewrap.
pub struct BwrapWrapper {
    bwrap: PathBuf,
    spec: SandboxSpec,
    /// Where mount-point markers go (under the state dir, which the sandbox cannot write
    /// unless it was placed inside a writable folder).
    markers: PathBuf,
}

impl CommandWrapper for BwrapWrapper {
    fn wrap(&self, argv: Vec<String>, extra_writable: &[PathBuf]) -> Vec<String> {
        self.wrap_guarded(argv, extra_writable).argv
    }

    fn wrap_guarded(&self, argv: Vec<String>, extra_writable: &[PathBuf]) -> WrappedCommand {
        let (argv, guard) = bwrap_guarded(
            &self.bwrap,
            &self.spec,
            extra_writable,
            &argv,
            Some(&self.markers),
        );
        WrappedCommand {
            argv,
            guard: Some(Box::new(guard)),
        }
    }

    fn describe(&self) -> String {
        format!(
            "bubblewrap (writable: workspace, /tmp, tool caches; read-only: {})",
            self.spec.read_only_inside.join(", ")
        )
    }
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

/// The execution environment for a workspace. With `auto`, the sandbox wraps commands only
/// when the shell policy relies on it (`sandbox` / `workspace`): with `approve` every command
/// is approved by the user anyway, and confinement would break ordinary builds that write
/// outside the workspace. `required` always wraps, and fails clearly without bubblewrap.
pub fn exec_environment(
    workspace: &Path,
    state_dir: &Path,
    mode: SandboxMode,
    policy: ShellPolicy,
) -> Result<ExecEnvironment, RuntimeError> {
    let wanted = match mode {
        SandboxMode::Off => false,
        SandboxMode::Required => true,
        SandboxMode::Auto => matches!(policy, ShellPolicy::Sandbox | ShellPolicy::Workspace),
    };
    let mut env = ExecEnvironment::default()
        .without_credentials()
        .with_vault(load_vault(state_dir)?);
    if !wanted {
        return Ok(env);
    }
    match bwrap_path().filter(|_| bwrap_works()) {
        Some(bwrap) => {
            let mut spec = SandboxSpec::for_workspace(workspace);
            // Saved sessions (their permissions) and user settings stay read-only.
            spec.read_only = crate::reserved::private_dirs(state_dir);
            if let Some(home) = dirs::home_dir() {
                for cache in [".cache", ".cargo", ".npm"] {
                    let p = home.join(cache);
                    if p.is_dir() {
                        spec.extra_writable.push(p);
                    }
                }
            }
            env.wrapper = Some(Arc::new(BwrapWrapper {
                bwrap,
                spec,
                markers: state_dir.join("sandbox-mounts"),
            }));
            Ok(env)
        }
        None if mode == SandboxMode::Required => Err(RuntimeError::Config(
            "sandbox mode `required` (--sandbox or CAIRN_SANDBOX), but no working sandbox is available (install bubblewrap, and allow unprivileged user namespaces)".into(),
        )),
        None => Ok(env),
    }
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
