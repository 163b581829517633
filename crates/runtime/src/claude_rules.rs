//! Claude Code's project permissions (`permissions.deny` / `permissions.ask` in
//! `.claude/settings.json` and `.claude/settings.local.json`) as Cairn project rules. A
//! project may only deny or ask, as with `.agent/permissions.toml`: its `allow` rules are
//! named, never honoured. They apply once the workspace trust covers those files (the trust
//! of the project's hooks, which come from the same files). Claude Code's tool names become
//! every Cairn tool that does the same (`Bash` is `run_shell` and `exec_command`; `Edit` and
//! `Write` every writer), so a denied command or file is denied whichever tool reaches it.

use std::path::Path;

use cairn_policy::{RuleDecision, RuleSet, RuleSpec};

/// Cairn tools a Claude Code tool name stands for in a rule.
fn tools(claude: &str) -> Option<&'static [&'static str]> {
    Some(match claude {
        "Bash" => &["run_shell", "exec_command"],
        "Read" => &["read_file"],
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => &[
            "write_file",
            "replace_in_file",
            "apply_patch",
            "apply_unified_diff",
        ],
        "Grep" => &["grep"],
        "Glob" | "LS" => &["list_files"],
        "WebSearch" => &["web_search"],
        "Task" => &["run_subagent", "explore"],
        "TodoWrite" => &["todo_write"],
        _ => return None,
    })
}

/// The Cairn rules one Claude Code rule stands for, or why it cannot be kept.
pub fn translate(rule: &str) -> Result<Vec<String>, String> {
    let rule = rule.trim();
    let (name, spec) = match rule.find('(') {
        Some(i) if rule.ends_with(')') => (&rule[..i], Some(&rule[i + 1..rule.len() - 1])),
        Some(_) => return Err(format!("`{rule}` is not a rule Cairn can read")),
        None => (rule, None),
    };
    if name.starts_with("mcp__") {
        return Ok(vec![rule.to_string()]);
    }
    let Some(cairn) = tools(name) else {
        return Err(format!("`{rule}`: Cairn has no rule for `{name}`"));
    };
    let specs: Vec<String> = match (name, spec) {
        (_, None) | (_, Some("")) => return Ok(cairn.iter().map(|t| t.to_string()).collect()),
        ("Bash", Some(cmd)) => vec![cmd.to_string()],
        (_, Some(path)) => {
            paths(path).ok_or_else(|| format!("`{rule}`: only paths in the project can be kept"))?
        }
    };
    Ok(cairn
        .iter()
        .flat_map(|t| specs.iter().map(move |s| format!("{t}({s})")))
        .collect())
}

/// A Claude Code path pattern as workspace-relative globs: `./x` and `x` are the project's;
/// `/x` is relative to the settings file (`.claude/x`) in Claude Code's reading and the
/// project's root in the other common one, so both are kept (a deny or ask only restricts);
/// `//abs` is absolute; `~/…` lies outside the project and cannot be kept.
fn paths(p: &str) -> Option<Vec<String>> {
    if p.starts_with('~') {
        return None;
    }
    if let Some(abs) = p.strip_prefix("//") {
        return Some(vec![format!("/{abs}")]);
    }
    if let Some(rel) = p.strip_prefix('/') {
        return Some(vec![rel.to_string(), format!(".claude/{rel}")]);
    }
    Some(vec![p.strip_prefix("./").unwrap_or(p).to_string()])
}

/// Adds the deny and ask rules of the project's Claude Code settings files to `rules`;
/// returns what was not kept (allow rules, unknown tools, paths outside the project).
pub fn load_into(rules: &mut RuleSet, workspace: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    for path in [
        workspace.join(".claude").join("settings.json"),
        workspace.join(".claude").join("settings.local.json"),
    ] {
        let Ok(text) = crate::project_file::read(workspace, &path) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
            notes.push(format!(
                "{}: not JSON; its permissions are not read",
                path.display()
            ));
            continue;
        };
        let Some(perms) = value.get("permissions") else {
            continue;
        };
        let source = path.display().to_string();
        let list = |key: &str| -> Vec<String> {
            perms
                .get(key)
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|r| r.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        if !list("allow").is_empty() {
            notes.push(format!(
                "{source}: `permissions.allow` is not honoured (a repository may only deny or ask)"
            ));
        }
        for (key, decision) in [("deny", RuleDecision::Deny), ("ask", RuleDecision::Ask)] {
            for rule in list(key) {
                let translated = match translate(&rule) {
                    Ok(t) => t,
                    Err(why) => {
                        notes.push(format!("{source}: {why}; not kept"));
                        continue;
                    }
                };
                for text in translated {
                    let spec = RuleSpec {
                        rule: text,
                        decision,
                        matches: Vec::new(),
                        not_match: Vec::new(),
                        project: None,
                    };
                    if let Err(e) = rules.add_spec(&spec, &source) {
                        notes.push(format!("{source}: `{rule}`: {e}; not kept"));
                    }
                }
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn claude_code_rules_become_every_cairn_tool_that_does_the_same() {
        assert_eq!(
            translate("Bash(curl:*)").unwrap(),
            ["run_shell(curl:*)", "exec_command(curl:*)"]
        );
        assert_eq!(translate("Read(./.env)").unwrap(), ["read_file(.env)"]);
        assert_eq!(
            translate("Edit(/secrets/**)").unwrap(),
            [
                "write_file(secrets/**)",
                "write_file(.claude/secrets/**)",
                "replace_in_file(secrets/**)",
                "replace_in_file(.claude/secrets/**)",
                "apply_patch(secrets/**)",
                "apply_patch(.claude/secrets/**)",
                "apply_unified_diff(secrets/**)",
                "apply_unified_diff(.claude/secrets/**)",
            ]
        );
        assert_eq!(translate("WebSearch").unwrap(), ["web_search"]);
        assert_eq!(
            translate("mcp__gh__create_issue").unwrap(),
            ["mcp__gh__create_issue"]
        );
        assert!(translate("Read(~/.ssh/**)").is_err());
        assert!(translate("WebFetch(domain:example.com)").is_err());
        assert!(translate("Bash(unclosed").is_err());
    }
}
