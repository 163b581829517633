//! The user's sandbox settings, shared by the CLI and the desktop app: the file
//! `<config>/cairn/sandbox.toml` (or `CAIRN_SANDBOX_FILE`), never a project file (a
//! repository cannot loosen its own sandbox).
//!
//! ```toml
//! mode = "auto"                      # auto | off | required
//! extraWritable = ["/data/cache"]    # folders commands may write besides the workspace
//! hidden = ["~/work/secrets"]        # paths commands cannot read, besides the built-in list
//! extraReadable = ["~/.config/tool"] # folders of the home commands may read (read-only)
//! env = ["JAVA_HOME", "GOPATH"]      # variables passed in besides PATH, HOME, LANG, LC_*, …
//! network = "proxy"                  # proxy | none | open (--sandbox-network wins)
//! shellPolicy = "sandbox"            # approve (default) | sandbox: sandboxed commands run
//!                                    # unasked (--shell-policy and CAIRN_SHELL_POLICY win)
//! ```

use std::path::{Path, PathBuf};

use cairn_policy::sandbox::SandboxMode;
use serde::Deserialize;

use crate::error::RuntimeError;

/// What the settings file says; every field optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SandboxSettings {
    /// `auto`, `off` or `required`.
    #[serde(default)]
    pub mode: Option<String>,
    /// Extra writable folders (seed §8.4 `extraWritable`).
    #[serde(default)]
    pub extra_writable: Vec<String>,
    /// Extra paths hidden inside the sandbox.
    #[serde(default)]
    pub hidden: Vec<String>,
    /// Extra folders bound read-only into the sandbox's empty home.
    #[serde(default)]
    pub extra_readable: Vec<String>,
    /// Variables of Cairn's environment passed to sandboxed commands besides the built-in
    /// ones (non-secret build variables: `JAVA_HOME`, `GOPATH`, `CC`, …).
    #[serde(default)]
    pub env: Vec<String>,
    /// `proxy` (only through Cairn's asking proxy, the default), `none` (no network inside)
    /// or `open` (the desktop's network).
    #[serde(default)]
    pub network: Option<String>,
    /// `approve` (the default: commands that change something ask) or `sandbox` (commands
    /// that run inside the sandbox run unasked); the Settings' switch writes it.
    #[serde(default)]
    pub shell_policy: Option<String>,
}

/// Where the user's sandbox settings live.
pub fn settings_path() -> Option<PathBuf> {
    crate::user_config::sandbox_path()
}

/// The shell policy of a session no flag decided: `CAIRN_SHELL_POLICY`, else the sandbox
/// settings' `shellPolicy` (the Settings' switch), else `approve`.
pub fn default_shell_policy() -> Result<cairn_engine::ShellPolicy, RuntimeError> {
    let env_set = std::env::var("CAIRN_SHELL_POLICY").is_ok_and(|v| !v.trim().is_empty());
    if env_set {
        return crate::permissions::shell_policy_from_env();
    }
    Ok(SandboxSettings::load()?
        .shell_policy()
        .unwrap_or(cairn_engine::ShellPolicy::Approve))
}

impl SandboxSettings {
    /// Reads the user's file; a missing file is empty settings, a bad one a clear error.
    pub fn load() -> Result<SandboxSettings, RuntimeError> {
        match settings_path() {
            Some(p) => Self::load_from(&p),
            None => Ok(SandboxSettings::default()),
        }
    }

    /// Reads `path`; missing = empty settings.
    pub fn load_from(path: &Path) -> Result<SandboxSettings, RuntimeError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(RuntimeError::Config(format!("{}: {e}", path.display()))),
        };
        let s: SandboxSettings = toml::from_str(&text)
            .map_err(|e| RuntimeError::Config(format!("{}: {e}", path.display())))?;
        for name in &s.env {
            if !cairn_policy::sandbox_env::passable(name, &cairn_engine::secret_env::is_secret_name)
            {
                return Err(RuntimeError::Config(format!(
                    "{}: env = [\"{name}\"]: this variable is never passed into the sandbox \
                     (not a plain name, named like a secret, or a door out such as DISPLAY, \
                     DBUS_SESSION_BUS_ADDRESS or SSH_AUTH_SOCK)",
                    path.display()
                )));
            }
        }
        if let Some(n) = s
            .network
            .as_deref()
            .filter(|n| crate::sandbox_net::SandboxNetwork::parse(n).is_none())
        {
            return Err(RuntimeError::Config(format!(
                "{}: network = `{n}`: expected proxy, none or open",
                path.display()
            )));
        }
        if let Some(p) = s
            .shell_policy
            .as_deref()
            .filter(|p| !matches!(*p, "approve" | "sandbox"))
        {
            return Err(RuntimeError::Config(format!(
                "{}: shellPolicy = `{p}`: expected approve or sandbox",
                path.display()
            )));
        }
        if let Some(m) = &s.mode {
            if SandboxMode::parse(m).is_none() {
                return Err(RuntimeError::Config(format!(
                    "{}: mode = `{m}`: expected auto, off or required",
                    path.display()
                )));
            }
        }
        Ok(s)
    }

    /// The shell policy the file sets, if any (`approve` or `sandbox`).
    pub fn shell_policy(&self) -> Option<cairn_engine::ShellPolicy> {
        match self.shell_policy.as_deref() {
            Some("sandbox") => Some(cairn_engine::ShellPolicy::Sandbox),
            Some("approve") => Some(cairn_engine::ShellPolicy::Approve),
            _ => None,
        }
    }

    /// Whether sandboxed commands run unasked (the Settings' switch).
    pub fn sandboxed_unasked(&self) -> bool {
        self.shell_policy() == Some(cairn_engine::ShellPolicy::Sandbox)
    }

    /// Turns "run sandboxed commands without asking" on or off in the file at `path`,
    /// keeping the rest of it as the user wrote it (the file is flat: one key per line);
    /// a file that does not parse is left alone and named.
    pub fn set_sandboxed_unasked(path: &Path, on: bool) -> Result<(), RuntimeError> {
        Self::load_from(path)?;
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(RuntimeError::Config(format!("{}: {e}", path.display()))),
        };
        let mut lines: Vec<&str> = text
            .lines()
            .filter(|l| {
                let key = l.trim_start();
                !(key.starts_with("shellPolicy") && key[11..].trim_start().starts_with('='))
            })
            .collect();
        let line = "shellPolicy = \"sandbox\"";
        if on {
            lines.push(line);
        }
        let mut out = lines.join("\n");
        out.push('\n');
        let io = |e: std::io::Error| RuntimeError::Config(format!("{}: {e}", path.display()));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let tmp = path.with_extension(format!("toml.{}.tmp", std::process::id()));
        std::fs::write(&tmp, &out).map_err(io)?;
        if let Err(e) = Self::load_from(&tmp) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Turns the switch on or off in the user's file ([`settings_path`]) and returns the
    /// shell policy sessions now get ([`default_shell_policy`]:
    /// `CAIRN_SHELL_POLICY` still wins).
    pub fn switch_sandboxed_unasked(on: bool) -> Result<cairn_engine::ShellPolicy, RuntimeError> {
        let path = settings_path().ok_or_else(|| {
            RuntimeError::Config("no config folder for the sandbox settings".into())
        })?;
        Self::set_sandboxed_unasked(&path, on)?;
        default_shell_policy()
    }

    /// The mode the file sets, if any.
    pub fn mode(&self) -> Option<SandboxMode> {
        self.mode.as_deref().and_then(SandboxMode::parse)
    }

    /// The extra writable folders, `~` expanded.
    pub fn writable(&self) -> Vec<PathBuf> {
        self.extra_writable.iter().map(|p| expand_home(p)).collect()
    }

    /// The network the settings give sandboxed commands (`proxy` unless they say).
    pub fn network(&self) -> crate::sandbox_net::SandboxNetwork {
        self.network
            .as_deref()
            .and_then(crate::sandbox_net::SandboxNetwork::parse)
            .unwrap_or_default()
    }

    /// The extra readable folders, `~` expanded.
    pub fn readable(&self) -> Vec<PathBuf> {
        self.extra_readable.iter().map(|p| expand_home(p)).collect()
    }

    /// The extra hidden paths, `~` expanded.
    pub fn hidden(&self) -> Vec<PathBuf> {
        self.hidden.iter().map(|p| expand_home(p)).collect()
    }
}

/// `~/x` → `$HOME/x`; anything else unchanged.
pub fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ if p == "~" => dirs::home_dir().unwrap_or_else(|| PathBuf::from(p)),
        _ => PathBuf::from(p),
    }
}

/// Checks a folder the user made writable inside the sandbox: it must exist, and may not be
/// `/`, the home folder or a folder holding it (that would hand out every dotfile).
pub fn check_writable(p: &Path) -> Result<PathBuf, RuntimeError> {
    let canon = p.canonicalize().map_err(|e| {
        RuntimeError::Config(format!(
            "sandbox writable folder {} is not usable: {e}",
            p.display()
        ))
    })?;
    if !canon.is_dir() {
        return Err(RuntimeError::Config(format!(
            "sandbox writable folder {} is not a directory",
            canon.display()
        )));
    }
    let home = dirs::home_dir().and_then(|h| h.canonicalize().ok());
    if canon.parent().is_none() || home.is_some_and(|h| h.starts_with(&canon)) {
        return Err(RuntimeError::Config(format!(
            "refusing {} as a sandbox writable folder: it holds your home folder",
            canon.display()
        )));
    }
    Ok(canon)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_settings_switch_edits_only_its_own_line() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("cairn/sandbox.toml");
        // A missing file is created.
        SandboxSettings::set_sandboxed_unasked(&f, true).unwrap();
        assert!(SandboxSettings::load_from(&f).unwrap().sandboxed_unasked());
        // The user's comments and keys stay; the switch goes off and on again.
        std::fs::write(
            &f,
            "# mine\nnetwork = \"none\"\nshellPolicy = \"sandbox\"\n",
        )
        .unwrap();
        SandboxSettings::set_sandboxed_unasked(&f, false).unwrap();
        let text = std::fs::read_to_string(&f).unwrap();
        assert_eq!(text, "# mine\nnetwork = \"none\"\n");
        let s = SandboxSettings::load_from(&f).unwrap();
        assert!(!s.sandboxed_unasked());
        assert_eq!(s.shell_policy(), None);
        SandboxSettings::set_sandboxed_unasked(&f, true).unwrap();
        let s = SandboxSettings::load_from(&f).unwrap();
        assert_eq!(s.shell_policy(), Some(cairn_engine::ShellPolicy::Sandbox));
        assert_eq!(s.network.as_deref(), Some("none"));
        // A broken file is named and left as it is.
        std::fs::write(&f, "network = \"wide\"\n").unwrap();
        let e = SandboxSettings::set_sandboxed_unasked(&f, true).unwrap_err();
        assert!(e.to_string().contains("network"), "{e}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "network = \"wide\"\n");
        // Only approve and sandbox are accepted from the file.
        std::fs::write(&f, "shellPolicy = \"all\"\n").unwrap();
        let e = SandboxSettings::load_from(&f).unwrap_err();
        assert!(e.to_string().contains("expected approve or sandbox"), "{e}");
    }

    #[test]
    fn the_settings_file_is_read_and_checked() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("sandbox.toml");
        assert_eq!(
            SandboxSettings::load_from(&p).unwrap(),
            SandboxSettings::default()
        );
        std::fs::write(
            &p,
            "mode = \"off\"\nextraWritable = [\"/data\"]\nhidden = [\"~/x\"]\n",
        )
        .unwrap();
        let s = SandboxSettings::load_from(&p).unwrap();
        assert_eq!(s.mode(), Some(SandboxMode::Off));
        assert_eq!(s.writable(), vec![PathBuf::from("/data")]);
        assert!(s.hidden()[0].ends_with("x") && s.hidden()[0].is_absolute());
        std::fs::write(&p, "network = \"none\"\n").unwrap();
        use crate::sandbox_net::SandboxNetwork;
        assert_eq!(
            SandboxSettings::load_from(&p).unwrap().network(),
            SandboxNetwork::None
        );
        std::fs::write(&p, "network = \"closed\"\n").unwrap();
        let e = SandboxSettings::load_from(&p).unwrap_err().to_string();
        assert!(e.contains("expected proxy, none or open"), "{e}");
        assert_eq!(SandboxSettings::default().network(), SandboxNetwork::Proxy);
        std::fs::write(&p, "env = [\"JAVA_HOME\"]\n").unwrap();
        assert_eq!(SandboxSettings::load_from(&p).unwrap().env, ["JAVA_HOME"]);
        for bad in ["SSH_AUTH_SOCK", "NPM_TOKEN", "A B"] {
            std::fs::write(&p, format!("env = [\"{bad}\"]\n")).unwrap();
            let e = SandboxSettings::load_from(&p).unwrap_err().to_string();
            assert!(e.contains("never passed"), "{e}");
        }
        std::fs::write(&p, "mode = \"sometimes\"\n").unwrap();
        let e = SandboxSettings::load_from(&p).unwrap_err().to_string();
        assert!(e.contains("sometimes") && e.contains("required"), "{e}");
        std::fs::write(&p, "writable = [\"/x\"]\n").unwrap();
        assert!(
            SandboxSettings::load_from(&p).is_err(),
            "unknown keys are errors"
        );
        assert!(check_writable(Path::new("/")).is_err());
        assert!(check_writable(&d.path().join("missing")).is_err());
        assert!(check_writable(d.path()).is_ok());
    }
}
