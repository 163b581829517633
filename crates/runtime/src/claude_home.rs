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
//! Until then nothing there is read, run or listed.

use std::path::PathBuf;

/// Cairn's user config file (`CAIRN_CONFIG_FILE` moves it).
pub fn config_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_CONFIG_FILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    crate::reserved::config_dir().map(|d| d.join("config.toml"))
}

/// Whether the config file opts in to `~/.claude/`, or why it cannot be read (a missing
/// file or key is `Ok(false)`).
pub fn opted_in() -> Result<bool, String> {
    let Some(path) = config_path() else {
        return Ok(false);
    };
    let text = match std::fs::read_to_string(&path) {
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
    dirs::home_dir()
        .map(|h| h.join(".claude"))
        .filter(|d| d.is_dir())
}

/// What `~/.claude` holds that Cairn would read once opted in (settings file, commands,
/// skills and agents folders that exist); empty when there is none or the user opted in.
pub fn offered() -> Vec<PathBuf> {
    if opted_in().unwrap_or(false) {
        return Vec::new();
    }
    let Some(dir) = dirs::home_dir().map(|h| h.join(".claude")) else {
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
