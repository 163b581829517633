//! Claude Code's vocabulary at the hook boundary: the one table that names Cairn's tools as
//! Claude Code names them (`run_shell` is `Bash`, `write_file` is `Write`, …) and gives their
//! arguments Claude Code's fields (`file_path`, absolute), so hooks written for Claude Code
//! match and read the calls they guard. Every writer and runner has its equivalent, so no guard
//! can be walked around by picking another tool: `exec_command` and `input_command` are `Bash`
//! too, and a patch is one `Edit` (or `Write`, for a new file) per file it touches. Cairn's own
//! name and arguments go alongside (`cairn_tool_name`, `cairn_tool_input`); Cairn-only tools
//! keep their names.

use std::path::Path;

use cairn_protocol::Mode;
use serde_json::{json, Map, Value};

/// Cairn's tool names and Claude Code's equivalents (the README's table).
pub const TABLE: &[(&str, &str)] = &[
    ("run_shell", "Bash"),
    ("exec_command", "Bash"),
    ("input_command", "Bash"),
    ("read_file", "Read"),
    ("write_file", "Write"),
    ("replace_in_file", "Edit"),
    ("apply_patch", "Edit"),
    ("apply_unified_diff", "Edit"),
    ("grep", "Grep"),
    ("list_files", "LS"),
    ("web_fetch", "WebFetch"),
    ("web_search", "WebSearch"),
    ("run_subagent", "Task"),
    ("explore", "Task"),
    ("todo_write", "TodoWrite"),
];

/// Claude Code's name of Cairn's tool `tool`, when it has one.
pub fn claude_name(tool: &str) -> Option<&'static str> {
    TABLE.iter().find(|(c, _)| *c == tool).map(|(_, cc)| *cc)
}

/// Claude Code's name of a permission mode (`interactive` is its `default`, `auto` its
/// `acceptEdits`; `discuss` and `plan` are both read-only, its `plan`).
pub fn claude_mode(mode: Mode) -> &'static str {
    match mode {
        Mode::Discuss | Mode::Plan => "plan",
        Mode::Interactive => "default",
        Mode::Auto => "acceptEdits",
    }
}

/// One call as a hook sees it: the name and input it is given.
#[derive(Debug, Clone, PartialEq)]
pub struct HookCall {
    /// The tool's name for the hook (Claude Code's when it has one).
    pub name: String,
    /// Cairn's own name (matchers may name either).
    pub cairn_name: String,
    /// `tool_input` in the hook's vocabulary.
    pub input: Value,
}

/// The call `tool(args)` as hooks see it, resolving paths against `cwd`; `writes` are the
/// files the call writes (for patches: one call per file). Several entries only for patches.
pub fn hook_calls(tool: &str, args: &Value, writes: &[String], cwd: &Path) -> Vec<HookCall> {
    let Some(name) = claude_name(tool) else {
        return vec![HookCall {
            name: tool.to_string(),
            cairn_name: tool.to_string(),
            input: args.clone(),
        }];
    };
    let call = |name: &str, input: Value| HookCall {
        name: name.to_string(),
        cairn_name: tool.to_string(),
        input,
    };
    let s = |k: &str| args.get(k).cloned().unwrap_or(Value::Null);
    let path = |k: &str| {
        args.get(k)
            .and_then(Value::as_str)
            .map(|p| absolute(cwd, p))
            .map(Value::String)
            .unwrap_or(Value::Null)
    };
    let input = match tool {
        "run_shell" | "exec_command" => {
            let mut o = object(&[("command", s("command"))]);
            if let Some(ms) = args.get("timeout_ms") {
                o.insert("timeout".into(), ms.clone());
            }
            if args.get("background").and_then(Value::as_bool) == Some(true) {
                o.insert("run_in_background".into(), true.into());
            }
            Value::Object(o)
        }
        // What is typed into a running command is a command line too.
        "input_command" => Value::Object(object(&[("command", s("input"))])),
        "read_file" => Value::Object(object(&[
            ("file_path", path("path")),
            ("offset", s("offset")),
            ("limit", s("limit")),
        ])),
        "write_file" => Value::Object(object(&[
            ("file_path", path("path")),
            ("content", s("content")),
        ])),
        "replace_in_file" => Value::Object(object(&[
            ("file_path", path("path")),
            ("old_string", s("old_string")),
            ("new_string", s("new_string")),
            ("replace_all", s("replace_all")),
        ])),
        "apply_patch" | "apply_unified_diff" => {
            return writes
                .iter()
                .map(|p| {
                    let file = absolute(cwd, p);
                    if Path::new(&file).exists() {
                        call(
                            "Edit",
                            json!({"file_path": file, "old_string": "", "new_string": ""}),
                        )
                    } else {
                        call("Write", json!({"file_path": file, "content": ""}))
                    }
                })
                .collect();
        }
        "grep" => Value::Object(object(&[
            ("pattern", s("pattern")),
            ("path", path("path")),
            ("glob", s("glob")),
            ("-i", s("ignore_case")),
        ])),
        "list_files" => Value::Object(object(&[(
            "path",
            match path("path") {
                Value::Null => Value::String(cwd.display().to_string()),
                p => p,
            },
        )])),
        "web_fetch" => Value::Object(object(&[("url", s("url")), ("prompt", s("prompt"))])),
        "web_search" => Value::Object(object(&[("query", s("query"))])),
        "run_subagent" | "explore" => Value::Object(object(&[
            ("description", s("task")),
            ("prompt", s("task")),
            ("subagent_type", s("agent_id")),
        ])),
        "todo_write" => Value::Object(object(&[("todos", s("todos"))])),
        _ => args.clone(),
    };
    vec![call(name, input)]
}

/// Cairn's arguments for `tool` after a hook rewrote its input (`updatedInput`, in Claude
/// Code's fields) : the original arguments with the rewritten fields put back under Cairn's
/// names. `None` for calls a hook sees as several (patches), which cannot be rewritten.
pub fn cairn_input(tool: &str, original: &Value, updated: &Value) -> Option<Value> {
    if matches!(tool, "apply_patch" | "apply_unified_diff") {
        return None;
    }
    let mut out = original.as_object().cloned().unwrap_or_default();
    for (k, v) in updated.as_object()? {
        let key = match (tool, k.as_str()) {
            ("input_command", "command") => "input",
            (_, "file_path") => "path",
            ("run_shell" | "exec_command", "timeout") => "timeout_ms",
            ("run_shell" | "exec_command", "run_in_background") => "background",
            ("grep", "-i") => "ignore_case",
            ("run_subagent" | "explore", "prompt") => "task",
            ("run_subagent" | "explore", "subagent_type") => "agent_id",
            ("run_subagent" | "explore", "description") => continue,
            (_, other) => other,
        };
        out.insert(key.to_string(), v.clone());
    }
    Some(Value::Object(out))
}

/// `pairs` without the null values (fields the call did not give).
fn object(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// `p` made absolute against `cwd` (Claude Code sends absolute paths).
fn absolute(cwd: &Path, p: &str) -> String {
    let path = Path::new(p);
    if path.is_absolute() {
        p.to_string()
    } else {
        cwd.join(path).display().to_string()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn every_writer_and_runner_has_its_claude_code_name_and_fields() {
        let cwd = Path::new("/w/proj");
        let one = |tool: &str, args: Value| {
            let calls = hook_calls(tool, &args, &[], cwd);
            assert_eq!(calls.len(), 1, "{tool}");
            calls.into_iter().next().unwrap_or_else(|| unreachable!())
        };
        let bash = one(
            "run_shell",
            json!({"command": "rm -rf build", "timeout_ms": 5}),
        );
        assert_eq!(bash.name, "Bash");
        assert_eq!(bash.input, json!({"command": "rm -rf build", "timeout": 5}));
        assert_eq!(one("exec_command", json!({"command": "ls"})).name, "Bash");
        assert_eq!(
            one(
                "input_command",
                json!({"session_id": "1", "input": "rm -rf /\n"})
            )
            .input,
            json!({"command": "rm -rf /\n"})
        );
        let read = one("read_file", json!({"path": ".env"}));
        assert_eq!(read.name, "Read");
        assert_eq!(read.input, json!({"file_path": "/w/proj/.env"}));
        let edit = one(
            "replace_in_file",
            json!({"path": "/abs/a.rs", "old_string": "a", "new_string": "b"}),
        );
        assert_eq!(
            (edit.name.as_str(), edit.input["file_path"].as_str()),
            ("Edit", Some("/abs/a.rs"))
        );
        assert_eq!(one("write_file", json!({"path": "x"})).name, "Write");
        assert_eq!(one("grep", json!({"pattern": "k"})).name, "Grep");
        assert_eq!(one("web_fetch", json!({"url": "u"})).name, "WebFetch");
        assert_eq!(one("explore", json!({"task": "t"})).name, "Task");
        let own = one("git_status", json!({}));
        assert_eq!(
            (own.name.as_str(), own.cairn_name.as_str()),
            ("git_status", "git_status")
        );
        assert_eq!(
            one("mcp__gh__create_issue", json!({})).name,
            "mcp__gh__create_issue"
        );
    }

    #[test]
    fn a_rewritten_input_goes_back_under_cairns_names() {
        let got = cairn_input(
            "write_file",
            &json!({"path": "a.txt", "content": "x"}),
            &json!({"file_path": "/w/b.txt", "content": "y"}),
        );
        assert_eq!(got, Some(json!({"path": "/w/b.txt", "content": "y"})));
        let got = cairn_input(
            "run_shell",
            &json!({"command": "rm -rf build", "sandbox": true}),
            &json!({"command": "rm -ri build", "timeout": 5}),
        );
        assert_eq!(
            got,
            Some(json!({"command": "rm -ri build", "sandbox": true, "timeout_ms": 5}))
        );
        assert_eq!(cairn_input("apply_patch", &json!({}), &json!({})), None);
    }

    #[test]
    fn a_patch_is_one_edit_or_write_per_file() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(d.path().join("old.txt"), "x").unwrap_or_else(|e| panic!("{e}"));
        let calls = hook_calls(
            "apply_patch",
            &json!({"patch": "…"}),
            &["old.txt".to_string(), "new/.env".to_string()],
            d.path(),
        );
        let names: Vec<(&str, &str)> = calls
            .iter()
            .map(|c| (c.name.as_str(), c.input["file_path"].as_str().unwrap_or("")))
            .collect();
        let old = d.path().join("old.txt").display().to_string();
        let new = d.path().join("new/.env").display().to_string();
        assert_eq!(names, [("Edit", old.as_str()), ("Write", new.as_str())]);
        assert!(calls.iter().all(|c| c.cairn_name == "apply_patch"));
    }
}
