//! Cairn's own folders and the workspaces they rule out. A workspace is the folder the agent
//! may change, so it may not contain the user's home folder (keys, shell start-up files),
//! Cairn's config folder (user-level `mcp.json`, `permissions.toml`, the MCP trust file) or
//! its state folder (saved sessions and their permissions): an agent there could plant
//! settings that the next run in another project obeys.

use std::path::{Path, PathBuf};

/// Cairn's user config folder: `<config dir>/cairn`.
pub fn config_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("cairn"))
}

/// The state folder used when the system has no data dir: a per-user folder under the
/// system's temporary folder, never the current folder (which may be the workspace).
pub fn fallback_state_dir() -> PathBuf {
    std::env::temp_dir().join(format!("cairn-state-{}", real_uid()))
}

/// The real user id, from `/proc/self/status` (`/proc/self` itself belongs to root once the
/// process is non-dumpable).
pub(crate) fn real_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|l| l.split_whitespace().next())
                .and_then(|u| u.parse().ok())
        })
        .unwrap_or(0)
}

/// Cairn's private folders for a session whose state lives in `state_dir`: the state dir, the
/// config dir and the files the environment moved elsewhere (`CAIRN_MCP_CONFIG`,
/// `CAIRN_MCP_TRUST`, `CAIRN_PERMISSIONS_FILE`): tools never write there.
pub fn private_dirs(state_dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![absolute(state_dir)];
    out.extend(config_dir());
    for var in [
        "CAIRN_MCP_CONFIG",
        "CAIRN_MCP_TRUST",
        "CAIRN_PERMISSIONS_FILE",
        "CAIRN_HOOKS_FILE",
        "CAIRN_CONFIG_FILE",
    ] {
        if let Some(p) = std::env::var_os(var).filter(|p| !p.is_empty()) {
            out.push(absolute(Path::new(&p)));
        }
    }
    out.extend(vault_files().iter().map(|p| absolute(p)));
    out
}

/// The user's files beside a moved `config.toml` (`CAIRN_CONFIG_FILE`): the app's memory and
/// the vault's index, sealed values and key. Private like the config folder.
pub fn vault_files() -> Vec<PathBuf> {
    let Some(folder) = std::env::var_os("CAIRN_CONFIG_FILE")
        .filter(|p| !p.is_empty())
        .and_then(|p| Path::new(&p).parent().map(Path::to_path_buf))
        .filter(|f| !f.as_os_str().is_empty())
    else {
        return Vec::new();
    };
    ["vault.toml", "vault.enc", "vault.key", "desktop.json"]
        .iter()
        .map(|n| folder.join(n))
        .collect()
}

/// Refuses `workspace` (canonical) when it is or contains the home folder, Cairn's config
/// folder or `state_dir`; the error says which and why.
pub fn refuse_reserved(workspace: &Path, state_dir: &Path) -> Result<(), String> {
    let mut reserved: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(home) = dirs::home_dir() {
        reserved.push(("your home folder", home));
    }
    if let Some(c) = config_dir() {
        reserved.push(("Cairn's config folder", c));
    }
    reserved.push(("Cairn's state folder", state_dir.to_path_buf()));
    for (what, dir) in reserved {
        let dir = resolved(&dir);
        if dir.starts_with(workspace) {
            return Err(format!(
                "refusing {} as the workspace: it contains {what} {}, where the agent could \
                 plant keys or settings that later runs obey; pick a project folder",
                workspace.display(),
                dir.display()
            ));
        }
    }
    Ok(())
}

/// `p` with its symbolic links resolved as far as it exists, the rest normalized lexically.
fn resolved(p: &Path) -> PathBuf {
    let abs = absolute(p);
    let mut existing = abs.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = existing.canonicalize() {
            let mut out = c;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return abs,
        }
    }
}

fn absolute(p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    cairn_policy::lexical::fold_dots_saturating(&joined)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_fallback_state_dir_is_never_the_current_folder() {
        let cwd = std::env::current_dir().unwrap();
        let d = fallback_state_dir();
        assert!(d.is_absolute(), "{}", d.display());
        assert!(!d.starts_with(&cwd), "{}", d.display());
        assert!(d
            .display()
            .to_string()
            .ends_with(&format!("-{}", real_uid())));
    }

    #[test]
    fn a_workspace_containing_the_state_dir_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().canonicalize().unwrap();
        let e = refuse_reserved(&ws, &ws.join("sub/state")).unwrap_err();
        assert!(e.to_string().contains("state folder"), "{e}");
        assert!(refuse_reserved(&ws.join("project"), &ws.join("state")).is_ok());
    }
}
