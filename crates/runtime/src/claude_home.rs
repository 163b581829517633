//! The user's own Claude Code files, `~/.claude/` (`settings.json` hooks, `commands/`,
//! `skills/`, `agents/`): read only once the user opted in, with the key
//!
//! ```toml
//! # <config dir>/cairn/config.toml ($CAIRN_CONFIG_FILE)
//! [claude_code]
//! user_files = true
//! ```
//!
//! and then as the user's own (after Cairn's own user files: a name in both is Cairn's).
//! Until then nothing there is read, run or listed. Claude Code's `CLAUDE_CONFIG_DIR` moves
//! the folder, as it does for Claude Code.

use std::path::{Path, PathBuf};

/// Cairn's user config file (`CAIRN_CONFIG_FILE` moves it).
pub fn config_path() -> Option<PathBuf> {
    crate::user_config::config_path()
}

/// Whether the config file opts in to `~/.claude/`, or why it cannot be read (a missing
/// file or key is `Ok(false)`).
pub fn opted_in() -> Result<bool, String> {
    match config_path() {
        Some(path) => opted_in_at(&path),
        None => Ok(false),
    }
}

/// [`opted_in`] as the config file at `path` says.
fn opted_in_at(path: &Path) -> Result<bool, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let value: toml::Table =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    match value.get("claude_code").map(|t| t.get("user_files")) {
        None | Some(None) => Ok(false),
        Some(Some(toml::Value::Boolean(on))) => Ok(*on),
        Some(Some(other)) => Err(format!(
            "{}: claude_code.user_files = {other}: expected true or false",
            path.display()
        )),
    }
}

/// `~/.claude` when the user opted in and it exists; `None` otherwise (a config file that
/// cannot be read is logged and counts as not opted in).
pub fn user_dir() -> Option<PathBuf> {
    match opted_in() {
        Ok(true) => {}
        Ok(false) => return None,
        Err(e) => {
            tracing::warn!("~/.claude is not read: {e}");
            return None;
        }
    }
    claude_dir().filter(|d| d.is_dir())
}

/// Where the user's Claude Code files live: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn claude_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        Some(d) => Some(PathBuf::from(d)),
        None => dirs::home_dir().map(|h| h.join(".claude")),
    }
}

/// Opts in to `~/.claude` (sets `claude_code.user_files = true` in the config file, keeping
/// the rest of it); returns the file.
pub fn opt_in() -> Result<PathBuf, String> {
    let path = config_path().ok_or("no config folder to write Cairn's config.toml in")?;
    opt_in_at(&path)?;
    Ok(path)
}

/// [`opt_in`] in the config file at `path`.
fn opt_in_at(path: &Path) -> Result<(), String> {
    let mut table: toml::Table = match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => toml::Table::new(),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let section = table
        .entry("claude_code")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let toml::Value::Table(section) = section else {
        return Err(format!(
            "{}: claude_code is not a table; fix it by hand",
            path.display()
        ));
    };
    section.insert("user_files".into(), toml::Value::Boolean(true));
    let text = toml::to_string_pretty(&table).map_err(|e| e.to_string())?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// What `~/.claude` holds that Cairn would read once opted in (settings file, commands,
/// skills and agents folders that exist); empty when there is none or the user opted in.
pub fn offered() -> Vec<PathBuf> {
    if opted_in().unwrap_or(false) {
        return Vec::new();
    }
    let Some(dir) = claude_dir() else {
        return Vec::new();
    };
    ["settings.json", "commands", "skills", "agents"]
        .iter()
        .map(|n| dir.join(n))
        .filter(|p| p.exists())
        .collect()
}

/// What to tell a user who has `~/.claude` files Cairn does not read yet (none once opted in).
pub fn offer_note() -> Option<String> {
    let found = offered();
    if found.is_empty() {
        return None;
    }
    let names: Vec<String> = found
        .iter()
        .filter_map(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .collect();
    Some(format!(
        "~/.claude has {} (Claude Code's hooks, commands, skills or agents), not read: to use \
         them as your own, set `[claude_code]` `user_files = true` in {}",
        names.join(", "),
        config_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "Cairn's config.toml".into())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn the_opt_in_is_one_key_written_beside_the_rest_and_a_bad_value_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cairn/config.toml");
        assert_eq!(opted_in_at(&path), Ok(false));
        opt_in_at(&path).unwrap();
        assert_eq!(opted_in_at(&path), Ok(true));
        std::fs::write(&path, "other = 1\n[claude_code]\nuser_files = false\n").unwrap();
        assert_eq!(opted_in_at(&path), Ok(false));
        opt_in_at(&path).unwrap();
        assert_eq!(opted_in_at(&path), Ok(true));
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("other = 1"));
        std::fs::write(&path, "[claude_code]\nuser_files = \"yes\"\n").unwrap();
        let err = opted_in_at(&path).unwrap_err();
        assert!(err.contains("expected true or false"), "{err}");
        std::fs::write(&path, "claude_code = 3\n").unwrap();
        assert!(opt_in_at(&path).is_err());
    }
}
