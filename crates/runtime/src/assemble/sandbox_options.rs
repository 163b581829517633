//! The session's sandbox options: the mode from the option, `CAIRN_SANDBOX` or the
//! settings, and the extra folders; and the layer report `cairn sandbox status` prints.

use std::path::Path;

use super::RunOptions;
use crate::error::RuntimeError;
use crate::sandbox;
use crate::sandbox_settings;

/// What protects commands run in `workspace` with the sandbox `mode` (the option, else
/// `CAIRN_SANDBOX`, else the user's settings, else `auto`), layer by layer — `cairn sandbox
/// status`. `Err` for what would stop a session from starting (`required` without a working
/// sandbox, bad settings).
pub fn sandbox_report(
    workspace: &Path,
    state_dir: &Path,
    mode: Option<cairn_policy::sandbox::SandboxMode>,
) -> Result<cairn_protocol::SandboxReport, RuntimeError> {
    let opts = RunOptions {
        sandbox: mode,
        ..Default::default()
    };
    let sandbox_opts = sandbox_options(&opts)?;
    let (env, _) = sandbox::exec_environment_with(workspace, state_dir, &sandbox_opts)?;
    env.sandbox
        .ok_or_else(|| RuntimeError::Config("the sandbox did not report its layers".into()))
}

/// The session's sandbox: the mode from the option, else `CAIRN_SANDBOX`, else the user's
/// sandbox settings, else `auto`; the extra folders from the options and the settings.
pub(super) fn sandbox_options(opts: &RunOptions) -> Result<sandbox::SandboxOptions, RuntimeError> {
    let user = opts.config.user_config;
    let settings = if user {
        sandbox_settings::SandboxSettings::load()?
    } else {
        sandbox_settings::SandboxSettings::default()
    };
    let mode = match opts.sandbox {
        Some(m) => m,
        None if user && std::env::var("CAIRN_SANDBOX").is_ok_and(|v| !v.trim().is_empty()) => {
            sandbox::sandbox_mode_from_env()?
        }
        None => settings.mode().unwrap_or_default(),
    };
    let mut writable = Vec::new();
    for p in opts
        .sandbox_writable
        .iter()
        .cloned()
        .chain(settings.writable())
    {
        let p = sandbox_settings::check_writable(&p)?;
        if !writable.contains(&p) {
            writable.push(p);
        }
    }
    let mut hidden = opts.sandbox_hidden.clone();
    hidden.extend(settings.hidden());
    Ok(sandbox::SandboxOptions {
        mode,
        writable,
        hidden,
        pass_env: settings.env.clone(),
        readable: settings.readable(),
        network: opts.sandbox_network.unwrap_or(settings.network()),
        allowed_hosts: cairn_policy::net_rules::HostList::defaults().with(
            &cairn_policy::net_rules::HostList::parse(&opts.allow_domains)
                .map_err(|e| RuntimeError::Config(format!("--allow-domain {e}")))?,
        ),
        config: opts.config,
    })
}
