//! MCP servers as a face lists them: those a workspace's `.agent/mcp.json` configures, and
//! the live state of a session's servers.
//! The file accepts a bare array, `{"servers": …}` and `{"mcpServers": {name: {…}}}`.

use std::path::Path;

use serde_json::Value;

use serde::Serialize;
use ts_rs::TS;

/// An MCP server listed in the workspace's `.agent/mcp.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct McpServerView {
    /// Server name.
    pub name: String,
    /// Command or URL.
    pub target: String,
    /// Human-readable state.
    pub status: String,
    /// Defined by the project and not trusted yet: the user may trust it (it then starts with
    /// the next chat).
    pub untrusted: bool,
    /// An HTTP server that needs a login (OAuth): the face offers "Connect".
    pub login_needed: bool,
}

/// The state shown for a configured server while no session runs it.
pub const NOT_CONNECTED: &str = "configured; starts with the next chat";

/// The servers configured for `workspace` (an unreadable file is one row saying why).
pub fn configured_servers(workspace: &Path) -> Vec<McpServerView> {
    let path = workspace.join(".agent/mcp.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => return vec![problem(&path, &e.to_string())],
    };
    let mut views = match serde_json::from_str::<Value>(&text) {
        Ok(v) => parse(&v),
        Err(e) => return vec![problem(&path, &e.to_string())],
    };
    // Project servers start only once trusted: say so here too, with the Trust button.
    let loaded = crate::mcp::load_config(workspace);
    for view in &mut views {
        if let Some(reason) = loaded.get(&view.name).and_then(|s| s.held.clone()) {
            view.untrusted = true;
            view.status = format!("disabled: {reason}");
        }
    }
    views
}

fn problem(path: &Path, reason: &str) -> McpServerView {
    McpServerView {
        name: ".agent/mcp.json".into(),
        target: path.display().to_string(),
        status: format!("unreadable: {reason}"),
        untrusted: false,
        login_needed: false,
    }
}

fn target(v: &Value) -> String {
    if let Some(url) = v.get("url").and_then(Value::as_str) {
        return url.to_string();
    }
    let cmd = v.get("command").and_then(Value::as_str).unwrap_or("");
    let args: Vec<&str> = v
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    std::iter::once(cmd)
        .chain(args)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn entry(name: &str, v: &Value) -> McpServerView {
    McpServerView {
        name: name.to_string(),
        target: target(v),
        status: NOT_CONNECTED.to_string(),
        untrusted: false,
        login_needed: false,
    }
}

fn parse(v: &Value) -> Vec<McpServerView> {
    if let Some(map) = v.get("mcpServers").and_then(Value::as_object) {
        return map.iter().map(|(k, s)| entry(k, s)).collect();
    }
    let list = v.get("servers").unwrap_or(v);
    if let Some(map) = list.as_object() {
        return map.iter().map(|(k, s)| entry(k, s)).collect();
    }
    list.as_array()
        .map(|a| {
            a.iter()
                .enumerate()
                .map(|(i, s)| {
                    let name = s
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                        .unwrap_or_else(|| format!("server {}", i + 1));
                    entry(&name, s)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// State of the session's MCP servers (`None` when none is configured).
pub fn session_servers(h: &crate::host::SessionHandle) -> Option<Vec<McpServerView>> {
    let manager = h.assembled().mcp.manager()?;
    let views = manager
        .status()
        .iter()
        .filter_map(|info| serde_json::to_value(info).ok())
        .map(|v| {
            let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
            let st = &v["status"];
            let state = st["state"].as_str().unwrap_or("unknown");
            let mut status = match (state, st["tools"].as_u64(), st["reason"].as_str()) {
                ("ready", Some(n), _) => format!("ready · {n} tools"),
                (s, _, Some(reason)) => format!("{s}: {reason}"),
                (s, _, None) => s.to_string(),
            };
            let held = st["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with(crate::mcp_trust::UNTRUSTED));
            // Trusted since this session started: it starts with the next chat.
            let untrusted = held && !crate::trust::trusted_now(h.workspace(), &text("name"));
            if held && !untrusted {
                status = NOT_CONNECTED.to_string();
            }
            // The manager says "…: run `cairn mcp login NAME`" for every login-needed failure;
            // a call refused for a missing scope needs a login again too (a step-up).
            let needs_scope = v["needsScope"].as_str();
            if let Some(scope) = needs_scope {
                status = format!("{status} · a tool needs more permissions ({scope})");
            }
            let failed_for_login = state == "failed"
                && st["reason"]
                    .as_str()
                    .is_some_and(|r| r.contains(crate::mcp_auth::LOGIN_HINT));
            if failed_for_login {
                // Beside the row's Connect button: no command line to copy.
                status = "needs a login: Connect to sign in".to_string();
            }
            let login_needed = needs_scope.is_some() || failed_for_login;
            McpServerView {
                name: text("name"),
                target: text("target"),
                untrusted,
                status,
                login_needed,
            }
        })
        .collect();
    Some(views)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn reads_every_accepted_shape() {
        let dir = tempfile::tempdir().unwrap();
        assert!(configured_servers(dir.path()).is_empty());
        std::fs::create_dir(dir.path().join(".agent")).unwrap();
        let file = dir.path().join(".agent/mcp.json");
        std::fs::write(
            &file,
            r#"{"mcpServers": {"everything": {"command": "node", "args": ["s.js", "stdio"]}}}"#,
        )
        .unwrap();
        let s = configured_servers(dir.path());
        assert_eq!(s[0].name, "everything");
        assert_eq!(s[0].target, "node s.js stdio");
        std::fs::write(
            &file,
            r#"[{"name": "web", "url": "http://127.0.0.1:9/mcp"}]"#,
        )
        .unwrap();
        assert_eq!(
            configured_servers(dir.path())[0].target,
            "http://127.0.0.1:9/mcp"
        );
        std::fs::write(&file, r#"{"servers": [{"command": "x"}]}"#).unwrap();
        assert_eq!(configured_servers(dir.path())[0].name, "server 1");
        std::fs::write(&file, "{oops").unwrap();
        assert!(configured_servers(dir.path())[0]
            .status
            .starts_with("unreadable"));
    }
}
