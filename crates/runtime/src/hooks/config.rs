//! Hook files in Claude Code's schema: `{"hooks": {"<Event>": [{"matcher": "<tool-name
//! regex>", "hooks": [{"type": "command", "command": "...", "timeout": 60}]}]}}`, from the
//! user's `<config dir>/cairn/hooks.json` (`CAIRN_HOOKS_FILE` moves it) and the project's
//! `<workspace>/.agent/hooks.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cairn_engine::GatePoint;
use serde::Deserialize;

/// Default time a hook may run, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// Every event a hook file may name (the engine's points and the worktree ones).
pub const EVENTS: &[&str] = &[
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PermissionRequest",
    "Stop",
    "PreCompact",
    "SessionEnd",
    "Notification",
    "WorktreeCreate",
    "WorktreeRemove",
];

/// Claude Code's events Cairn has no point for: their hooks are named, never run.
pub const NOT_HONOURED_EVENTS: &[&str] = &[
    "SubagentStart",
    "SubagentStop",
    "PostToolUseFailure",
    "PermissionDenied",
    "TaskCompleted",
    "TeammateIdle",
    "ConfigChange",
    "InstructionsLoaded",
];

/// Where a hook comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookSource {
    /// The user's own file: may approve permission requests.
    User(PathBuf),
    /// The repository's `.agent/hooks.json`: runs only once trusted.
    Project(PathBuf),
}

impl HookSource {
    /// The file.
    pub fn path(&self) -> &Path {
        match self {
            HookSource::User(p) | HookSource::Project(p) => p,
        }
    }
}

/// One hook command.
#[derive(Debug, Clone)]
pub struct HookDef {
    /// Its event's name (`PreToolUse`, `WorktreeCreate`, …).
    pub event: String,
    /// Tool-name pattern (tool events); `None` matches every tool.
    pub matcher: Option<regex::Regex>,
    /// The pattern as written.
    pub matcher_text: String,
    /// The shell command.
    pub command: String,
    /// Seconds it may run.
    pub timeout_secs: u64,
    /// Its file.
    pub source: HookSource,
    /// Marked `"sandbox": false` by the user: runs outside even when the workspace picks its
    /// program (ignored in a project's file).
    pub outside: bool,
}

impl HookDef {
    /// Whether it runs at `point` for `tool`.
    pub fn applies(&self, point: GatePoint, tool: Option<&str>) -> bool {
        self.event == point.name()
            && match (&self.matcher, tool) {
                (Some(m), Some(t)) => m.is_match(t),
                _ => true,
            }
    }

    /// Why it runs inside the session's sandbox, if it does: a project's hook always; the
    /// user's own when its program is one the workspace picks (a script in it, a build tool
    /// or package script), unless the user marked it `"sandbox": false`.
    pub fn inside_because(&self, workspace: &Path) -> Option<String> {
        match &self.source {
            HookSource::Project(_) => Some("the project defines it".into()),
            HookSource::User(_) if self.outside => None,
            HookSource::User(_) => {
                cairn_policy::hook_program::workspace_picks(&self.command, workspace)
            }
        }
    }

    /// Whether it runs at `point` for a tool known by any of `names` (Claude Code's name
    /// and Cairn's own: a matcher may name either).
    pub fn applies_to_any(&self, point: GatePoint, names: &[&str]) -> bool {
        if names.is_empty() {
            return self.applies(point, None);
        }
        names.iter().any(|n| self.applies(point, Some(n)))
    }
}

#[derive(Deserialize)]
struct File {
    #[serde(default)]
    hooks: BTreeMap<String, Vec<Group>>,
}

#[derive(Deserialize)]
struct Group {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Vec<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    #[serde(rename = "type", default = "command_type")]
    kind: String,
    #[serde(default)]
    command: String,
    #[serde(default)]
    timeout: Option<u64>,
    /// `false`: run outside the sandbox even when the workspace picks the program.
    #[serde(default)]
    sandbox: Option<bool>,
}

fn command_type() -> String {
    "command".into()
}

/// The user's hook file.
pub fn user_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_HOOKS_FILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    crate::reserved::config_dir().map(|d| d.join("hooks.json"))
}

/// The project's hook file.
pub fn project_path(workspace: &Path) -> PathBuf {
    workspace.join(".agent").join("hooks.json")
}

/// Every project file hooks come from: Cairn's own, then Claude Code's shared and local
/// settings (`.claude/settings.json`, `.claude/settings.local.json`: their `hooks`).
pub fn project_paths(workspace: &Path) -> Vec<PathBuf> {
    vec![
        project_path(workspace),
        workspace.join(".claude").join("settings.json"),
        workspace.join(".claude").join("settings.local.json"),
    ]
}

/// Claude Code settings Cairn reads but never runs or applies, named once per file.
const NOT_HONOURED: &[&str] = &["statusLine", "apiKeyHelper", "env", "model", "outputStyle"];

/// What a Claude Code settings file at `path` sets that Cairn does not honour.
pub fn not_honoured(path: &Path, text: &str) -> Vec<String> {
    if path.file_name().and_then(|n| n.to_str()) == Some("hooks.json") {
        return Vec::new();
    }
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let named: Vec<&str> = NOT_HONOURED
        .iter()
        .copied()
        .filter(|k| map.contains_key(*k))
        .collect();
    if named.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "{}: {} never run or applied by Cairn (only `hooks` is read from this file)",
        path.display(),
        named
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    )]
}

/// The hooks of `text` (a file at `source`); problems (bad JSON, unknown events, bad
/// patterns) come back as warnings and leave out only what they concern.
pub fn parse(text: &str, source: &HookSource) -> (Vec<HookDef>, Vec<String>) {
    let file = source.path().display().to_string();
    let parsed: File = match serde_json::from_str(text) {
        Ok(f) => f,
        Err(e) => {
            return (
                Vec::new(),
                vec![format!("{file}: not a hooks file ({e}); its hooks are off")],
            )
        }
    };
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for (event, groups) in parsed.hooks {
        if NOT_HONOURED_EVENTS.contains(&event.as_str()) {
            warnings.push(format!(
                "{file}: Claude Code's `{event}` event is not honoured by Cairn; its hooks do not run"
            ));
            continue;
        }
        if !EVENTS.contains(&event.as_str()) {
            warnings.push(format!(
                "{file}: unknown hook event `{event}` (known: {})",
                EVENTS.join(", ")
            ));
            continue;
        }
        for g in groups {
            let text = g.matcher.clone().unwrap_or_default();
            let matcher = match text.trim() {
                "" | "*" => None,
                pattern => match regex::Regex::new(&format!("^(?:{pattern})$")) {
                    Ok(r) => Some(r),
                    Err(e) => {
                        warnings.push(format!("{file}: {event} matcher `{pattern}` is not a valid pattern ({e}); skipped"));
                        continue;
                    }
                },
            };
            for h in g.hooks {
                if h.kind != "command" || h.command.trim().is_empty() {
                    warnings.push(format!(
                        "{file}: {event} hook of type `{}` without a command skipped (only `command` hooks run)",
                        h.kind
                    ));
                    continue;
                }
                out.push(HookDef {
                    event: event.clone(),
                    matcher: matcher.clone(),
                    matcher_text: text.clone(),
                    command: h.command,
                    timeout_secs: h.timeout.filter(|t| *t > 0).unwrap_or(DEFAULT_TIMEOUT_SECS),
                    outside: h.sandbox == Some(false) && matches!(source, HookSource::User(_)),
                    source: source.clone(),
                });
            }
        }
    }
    (out, warnings)
}

/// Reads and parses the file at `path` when it exists.
pub fn load(path: &Path, source: HookSource) -> (Vec<HookDef>, Vec<String>, Option<String>) {
    load_read(path, source, std::fs::read_to_string(path))
}

/// Parses what reading the file at `path` gave (a project's files are read refusing links,
/// see [`crate::project_file`]).
pub fn load_read(
    path: &Path,
    source: HookSource,
    read: std::io::Result<String>,
) -> (Vec<HookDef>, Vec<String>, Option<String>) {
    match read {
        Ok(text) => {
            let (defs, warnings) = parse(&text, &source);
            (defs, warnings, Some(text))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), Vec::new(), None),
        Err(e) => (
            Vec::new(),
            vec![format!(
                "{}: cannot be read ({e}); its hooks are off",
                path.display()
            )],
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_hook_files_parse_and_problems_are_named() {
        let src = HookSource::User("/u/hooks.json".into());
        let (defs, warnings) = parse(
            r#"{"hooks": {
                "PreToolUse": [{"matcher": "run_shell|write_file", "hooks": [{"type": "command", "command": "check.sh", "timeout": 5}]}],
                "Stop": [{"hooks": [{"command": "done.sh"}]}],
                "Bogus": [],
                "SubagentStop": [{"hooks": [{"command": "x"}]}],
                "PostToolUse": [{"matcher": "(", "hooks": [{"command": "x"}]}]
            }}"#,
            &src,
        );
        assert_eq!(defs.len(), 2);
        assert!(defs[0].applies(GatePoint::PreToolUse, Some("run_shell")));
        assert!(!defs[0].applies(GatePoint::PreToolUse, Some("run_shell_extra")));
        assert_eq!(defs[0].timeout_secs, 5);
        assert!(defs[1].applies(GatePoint::Stop, None));
        assert_eq!(defs[1].timeout_secs, DEFAULT_TIMEOUT_SECS);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("`SubagentStop` event is not honoured")),
            "{warnings:?}"
        );
        let (none, w) = parse("{not json", &src);
        assert!(none.is_empty() && w[0].contains("not a hooks file"));
    }
}
