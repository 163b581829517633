//! Permission decisions for tool calls, in the reference order:
//! read-only mode → workspace boundary → read-only tool → auto mode → command allowlist →
//! session tool allowlist → ask the user.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

use cairn_protocol::{Mode, ToolMeta};
use serde::{Deserialize, Serialize};

/// The outcome of evaluating one tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the call may run (when `needs_user` is false).
    pub allowed: bool,
    /// Why; shown to the user and in events.
    pub reason: String,
    /// The approver must decide.
    pub needs_user: bool,
}

impl Decision {
    fn allow(reason: impl Into<String>) -> Self {
        Decision {
            allowed: true,
            reason: reason.into(),
            needs_user: false,
        }
    }
    fn deny(reason: impl Into<String>) -> Self {
        Decision {
            allowed: false,
            reason: reason.into(),
            needs_user: false,
        }
    }
    fn ask(reason: impl Into<String>) -> Self {
        Decision {
            allowed: false,
            reason: reason.into(),
            needs_user: true,
        }
    }
}

/// Session permission state that survives a restore.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionState {
    /// Current mode.
    pub mode: Mode,
    /// Tools the user allowed for the session.
    pub allow_tools: BTreeSet<String>,
    /// Command prefixes the user allowed for the session.
    pub allow_commands: BTreeSet<String>,
    /// Directories outside the workspace the user granted: absolute path → writable.
    #[serde(default)]
    pub granted_dirs: std::collections::BTreeMap<String, bool>,
}

/// Evaluates tool calls against mode, workspace and allowlists.
#[derive(Debug, Clone)]
pub struct PermissionEngine {
    workspace: PathBuf,
    /// Configured command-allowlist prefixes (`--allow-command`).
    allowed_commands: Vec<String>,
    state: PermissionState,
}

impl PermissionEngine {
    /// A permission engine for a workspace and mode.
    pub fn new(workspace: PathBuf, mode: Mode, allowed_commands: Vec<String>) -> Self {
        PermissionEngine {
            workspace,
            allowed_commands,
            state: PermissionState {
                mode,
                ..Default::default()
            },
        }
    }

    /// Current mode.
    pub fn mode(&self) -> Mode {
        self.state.mode
    }

    /// Changes the mode (takes effect for the next call).
    pub fn set_mode(&mut self, mode: Mode) {
        self.state.mode = mode;
    }

    /// The session state to persist.
    pub fn state(&self) -> &PermissionState {
        &self.state
    }

    /// Restores persisted session state.
    pub fn restore(&mut self, state: PermissionState) {
        self.state = state;
    }

    /// Allows a tool for the rest of the session.
    pub fn allow_tool_for_session(&mut self, name: &str) {
        self.state.allow_tools.insert(name.to_string());
    }

    /// Allows a simple command (by its program name) for the rest of the session.
    pub fn allow_command_for_session(&mut self, command: &str) {
        if let Some(program) = simple_command_program(command) {
            self.state.allow_commands.insert(program);
        }
    }

    /// Grants access to a directory outside the workspace for the session.
    pub fn grant_directory(&mut self, path: &str, writable: bool) {
        let entry = self
            .state
            .granted_dirs
            .entry(path.to_string())
            .or_insert(false);
        *entry |= writable;
    }

    /// Revokes a session tool allowance.
    pub fn revoke_tool(&mut self, name: &str) -> bool {
        self.state.allow_tools.remove(name)
    }

    /// Decides one call of tool `name` with metadata `meta` and parsed `args`.
    pub fn evaluate(&self, name: &str, meta: &ToolMeta, args: &serde_json::Value) -> Decision {
        let mode = self.state.mode;
        let writes = meta.capabilities.iter().any(|c| c == "write");
        let execs = meta.capabilities.iter().any(|c| c == "exec");
        // 1. Read-only modes forbid side effects outright.
        if mode.is_read_only() && meta.mutating {
            return Decision::deny(format!(
                "{name} has side effects, and the session is in {} mode (read-only)",
                mode.as_str()
            ));
        }
        // 2. Writes outside the workspace are refused, whatever the mode.
        if writes {
            if let Some(path) = args.get("path").and_then(|p| p.as_str()) {
                let granted = self
                    .state
                    .granted_dirs
                    .iter()
                    .any(|(dir, w)| *w && lexically_inside(Path::new(dir), path));
                if !lexically_inside(&self.workspace, path) && !granted {
                    return Decision::deny(format!("{path} is outside the workspace"));
                }
            }
        }
        // 3. Read-only tools run freely.
        if !meta.mutating || !meta.requires_approval {
            return Decision::allow("read-only or approval-free tool");
        }
        // 4. Auto mode allows side effects inside the workspace.
        if mode == Mode::Auto {
            return Decision::allow("auto mode");
        }
        // 6. Command allowlists.
        if execs {
            if let Some(cmd) = args.get("command").and_then(|c| c.as_str()) {
                if let Some(prefix) = self
                    .allowed_commands
                    .iter()
                    .find(|p| command_matches_prefix(cmd, p))
                {
                    return Decision::allow(format!("command allowlisted ({prefix})"));
                }
                if let Some(program) = simple_command_program(cmd) {
                    if self.state.allow_commands.contains(&program) {
                        return Decision::allow(format!("{program} allowed for this session"));
                    }
                }
            }
        }
        // 7. Session tool allowlist.
        if self.state.allow_tools.contains(name) {
            return Decision::allow(format!("{name} allowed for this session"));
        }
        // 8. Ask.
        let what = if execs {
            match args.get("command").and_then(|c| c.as_str()) {
                Some(c) => format!("runs a command: {c}"),
                None => "runs a command".to_string(),
            }
        } else if writes {
            match args.get("path").and_then(|p| p.as_str()) {
                Some(p) => format!("writes {p}"),
                None => "writes files".to_string(),
            }
        } else {
            "has side effects".to_string()
        };
        Decision::ask(format!("{name} {what}"))
    }
}

/// Characters that make a command compound; such commands are never auto-allowed.
const SHELL_OPERATORS: &[&str] = &[
    ";", "&", "|", ">", "<", "`", "$(", "(", ")", "\n", "\r", "\\",
];

/// Whether `command` contains shell operators.
pub fn has_shell_operators(command: &str) -> bool {
    SHELL_OPERATORS.iter().any(|op| command.contains(op))
}

/// Prefix match that must end on a word boundary and never passes compound commands.
pub fn command_matches_prefix(command: &str, prefix: &str) -> bool {
    let cmd = command.trim();
    let prefix = prefix.trim();
    if prefix.is_empty() || has_shell_operators(cmd) {
        return false;
    }
    let cmd_words: Vec<&str> = cmd.split_whitespace().collect();
    let prefix_words: Vec<&str> = prefix.split_whitespace().collect();
    cmd_words.len() >= prefix_words.len()
        && cmd_words
            .iter()
            .zip(prefix_words.iter())
            .all(|(a, b)| a == b)
}

/// The program name of a simple command (no operators), for session command allowances.
pub fn simple_command_program(command: &str) -> Option<String> {
    if has_shell_operators(command) {
        return None;
    }
    command.split_whitespace().next().map(|s| s.to_string())
}

/// Whether `path` (relative to `workspace` or absolute) stays inside it, by lexical normalisation.
pub fn lexically_inside(workspace: &Path, path: &str) -> bool {
    let joined = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        workspace.join(path)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                if !out.pop() {
                    return false;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out.starts_with(workspace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::RiskLevel;
    use serde_json::json;

    fn write_meta() -> ToolMeta {
        ToolMeta::mutating("file", RiskLevel::Medium, &["write"])
    }
    fn shell_meta() -> ToolMeta {
        ToolMeta::mutating("shell", RiskLevel::High, &["exec"])
    }

    #[test]
    fn prefix_matching_respects_word_boundaries_and_operators() {
        assert!(command_matches_prefix("ls -la", "ls"));
        assert!(!command_matches_prefix("lsof", "ls"));
        assert!(!command_matches_prefix("ls; rm -rf /", "ls"));
        assert!(!command_matches_prefix("ls && rm x", "ls"));
        assert!(!command_matches_prefix("ls $(rm x)", "ls"));
        assert!(!command_matches_prefix("ls `rm x`", "ls"));
        assert!(!command_matches_prefix("ls > f", "ls"));
        assert!(command_matches_prefix("git status --short", "git status"));
        assert!(!command_matches_prefix("git stash", "git status"));
        assert!(!command_matches_prefix("ls\nrm x", "ls"));
    }

    #[test]
    fn decision_order() {
        let ws = PathBuf::from("/w");
        let mut p = PermissionEngine::new(ws.clone(), Mode::Interactive, vec!["cargo test".into()]);
        let read = ToolMeta::read_only("file");
        assert!(
            p.evaluate("read_file", &read, &json!({"path": "a"}))
                .allowed
        );
        let d = p.evaluate("write_file", &write_meta(), &json!({"path": "a"}));
        assert!(d.needs_user);
        let d = p.evaluate("write_file", &write_meta(), &json!({"path": "../x"}));
        assert!(!d.allowed && !d.needs_user);
        let d = p.evaluate(
            "run_shell",
            &shell_meta(),
            &json!({"command": "cargo test -p x"}),
        );
        assert!(d.allowed && !d.needs_user);
        let d = p.evaluate(
            "run_shell",
            &shell_meta(),
            &json!({"command": "cargo test; rm -rf ~"}),
        );
        assert!(d.needs_user);
        p.set_mode(Mode::Plan);
        let d = p.evaluate("write_file", &write_meta(), &json!({"path": "a"}));
        assert!(!d.allowed && !d.needs_user);
        assert!(
            p.evaluate("read_file", &read, &json!({"path": "a"}))
                .allowed
        );
        p.set_mode(Mode::Auto);
        assert!(
            p.evaluate("write_file", &write_meta(), &json!({"path": "a"}))
                .allowed
        );
        let d = p.evaluate("write_file", &write_meta(), &json!({"path": "/etc/passwd"}));
        assert!(!d.allowed, "auto mode never writes outside the workspace");
    }

    #[test]
    fn session_allowances() {
        let mut p = PermissionEngine::new(PathBuf::from("/w"), Mode::Interactive, vec![]);
        p.allow_tool_for_session("write_file");
        assert!(
            p.evaluate("write_file", &write_meta(), &json!({"path": "a"}))
                .allowed
        );
        p.allow_command_for_session("npm test");
        assert!(
            p.evaluate(
                "run_shell",
                &shell_meta(),
                &json!({"command": "npm run build"})
            )
            .allowed
        );
        assert!(
            p.evaluate(
                "run_shell",
                &shell_meta(),
                &json!({"command": "npm x | sh"})
            )
            .needs_user
        );
        p.allow_command_for_session("rm -rf / ; ls");
        assert!(p.state().allow_commands.len() == 1);
    }

    #[test]
    fn lexical_containment() {
        let ws = Path::new("/w/proj");
        assert!(lexically_inside(ws, "a/b"));
        assert!(lexically_inside(ws, "./a/../b"));
        assert!(lexically_inside(ws, "/w/proj/x"));
        assert!(!lexically_inside(ws, "../proj2/x"));
        assert!(!lexically_inside(ws, "/w/projX"));
        assert!(!lexically_inside(ws, "a/../../x"));
    }
}
