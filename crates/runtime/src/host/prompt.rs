//! The text of an approval as a dialog or a prompt shows it: the tool, the command or
//! file, a short summary of an edit's diff, the engine's reason, and the allowance offered.

use std::path::{Path, PathBuf};

use cairn_protocol::{AlwaysAllow, ApprovalDecision, ApprovalRequest};

/// Longest command or path shown in a dialog (longer ones are cut with `…`).
const MAX_SHOWN: usize = 600;

/// What an approval dialog shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalPrompt {
    /// Window title and headline (unique per workspace and tool; used to dismiss it).
    pub title: String,
    /// Body: the command or path and the engine's reason.
    pub message: String,
    /// Label of the "allow once" button.
    pub allow_once: String,
    /// Label of the "always allow" button and what it grants (the program for plain shell
    /// commands, else the tool); `None` when no allowance is offered (shell operators).
    pub always: Option<(String, ApprovalDecision)>,
    /// Label of the "always allow in this project" button (the chat card's fourth choice),
    /// offered with `always`.
    pub in_project: Option<String>,
    /// Label of the "deny" button.
    pub deny: String,
}

/// Removes NUL bytes (GTK cannot show them) and cuts long text.
pub fn shown(text: &str) -> String {
    let clean: String = text.chars().filter(|c| *c != '\0').collect();
    if clean.chars().count() <= MAX_SHOWN {
        return clean;
    }
    let mut cut: String = clean.chars().take(MAX_SHOWN).collect();
    cut.push('…');
    cut
}

/// Lines of an edit's diff a dialog shows (the chat card has the whole diff).
const DIFF_LINES_SHOWN: usize = 14;

/// "Changes: +a −b lines" and the first changed lines of a unified diff.
fn diff_summary(diff: &str) -> String {
    let is_header = |l: &str| l.starts_with("+++") || l.starts_with("---") || l.starts_with("***");
    let added = diff
        .lines()
        .filter(|l| l.starts_with('+') && !is_header(l))
        .count();
    let removed = diff
        .lines()
        .filter(|l| l.starts_with('-') && !is_header(l))
        .count();
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| (l.starts_with('+') || l.starts_with('-')) && !is_header(l))
        .collect();
    let mut out = format!("Changes: +{added} −{removed} lines");
    for line in changed.iter().take(DIFF_LINES_SHOWN) {
        out.push_str("\n    ");
        out.push_str(&shown(&line.chars().take(120).collect::<String>()));
    }
    if changed.len() > DIFF_LINES_SHOWN {
        out.push_str(&format!(
            "\n    … {} more",
            changed.len() - DIFF_LINES_SHOWN
        ));
    }
    out
}

/// Builds the dialog for one approval request: names the tool, the command or path and the
/// engine's reason.
pub fn approval_prompt(
    req: &ApprovalRequest,
    workspace_name: &str,
    workspace: &Path,
) -> ApprovalPrompt {
    let args = &req.arguments;
    let str_arg = |k: &str| args.get(k).and_then(|v| v.as_str()).map(shown);
    let mut body = Vec::new();
    // The allowance the engine offers, the same as the chat card's.
    let always = req.always_allow.as_ref().map(|a| {
        let label = match a {
            // The card's words (the title names the tool).
            AlwaysAllow::Tool { .. } => "Always allow this tool".to_string(),
            AlwaysAllow::Command { program } => format!("Always allow `{}`", shown(program)),
        };
        (label, a.decision())
    });
    let in_project = always
        .as_ref()
        .map(|(label, _)| format!("{label} in this project"));
    if let Some(cmd) = str_arg("command") {
        body.push(format!("Command:\n    {cmd}"));
        if let Some(cwd) = str_arg("cwd") {
            body.push(format!("In: {cwd}"));
        }
    }
    if let Some(path) = str_arg("path") {
        let abs = if Path::new(&path).is_absolute() {
            PathBuf::from(&path)
        } else {
            workspace.join(&path)
        };
        body.push(format!("File: {}", abs.display()));
        if let Some(content) = args.get("content").and_then(|v| v.as_str()) {
            body.push(format!("Writes {} line(s).", content.lines().count()));
        }
    }
    if let Some(diff) = crate::workspace::preview::edit_preview(workspace, req) {
        body.push(diff_summary(&diff));
    }
    if body.is_empty() {
        let text = serde_json::to_string_pretty(args).unwrap_or_default();
        body.push(format!("Arguments:\n{}", shown(&text)));
    }
    body.push(format!("Why Cairn asks: {}", shown(&req.reason)));
    body.push("The chat shows the same request in context.".to_string());
    ApprovalPrompt {
        title: shown(&format!("Cairn · {workspace_name}: allow {}?", req.name)),
        message: body.join("\n\n"),
        allow_once: "Allow once".into(),
        always,
        in_project,
        deny: "Deny".into(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// What the built-in tool `name` asks permission for (only `run_shell` runs commands).
    fn subject(name: &str, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        match name {
            "run_shell" => cairn_engine::PermissionSubject::command(
                cairn_engine::CommandRun::from_shell_args(args),
            ),
            _ => cairn_engine::PermissionSubject::none(),
        }
    }

    fn req(name: &str, args: serde_json::Value) -> ApprovalRequest {
        ApprovalRequest {
            task_id: "t".into(),
            req_id: "c".into(),
            request_id: "rq_c".into(),
            name: name.into(),
            always_allow: cairn_engine::permission::always_allow(name, &subject(name, &args)),
            arguments: args,
            reason: "because".into(),
            category: "x".into(),
        }
    }

    #[test]
    fn shells_offer_to_always_allow_the_program() {
        let p = approval_prompt(
            &req(
                "run_shell",
                serde_json::json!({"command": "cargo test -p x"}),
            ),
            "proj",
            Path::new("/w/proj"),
        );
        assert_eq!(p.title, "Cairn · proj: allow run_shell?");
        assert!(p.message.contains("cargo test -p x") && p.message.contains("because"));
        assert_eq!(
            p.always,
            Some((
                "Always allow `cargo`".to_string(),
                ApprovalDecision::AlwaysCommand
            ))
        );
        assert_eq!(
            p.in_project.as_deref(),
            Some("Always allow `cargo` in this project"),
            "the card's fourth choice is in the dialog too"
        );
        // A command with operators: no allowance on offer (not the whole shell tool).
        let p = approval_prompt(
            &req("run_shell", serde_json::json!({"command": "ls | sh"})),
            "proj",
            Path::new("/w/proj"),
        );
        assert_eq!(p.always, None);
        assert_eq!(p.in_project, None);
    }

    #[test]
    fn writes_name_the_absolute_path_and_text_is_made_safe() {
        let p = approval_prompt(
            &req(
                "write_file",
                serde_json::json!({"path": "src/a\u{0}.rs", "content": "a\nb\n"}),
            ),
            "proj",
            Path::new("/w/proj"),
        );
        assert!(
            p.message.contains("File: /w/proj/src/a.rs"),
            "{}",
            p.message
        );
        assert!(p.message.contains("Writes 2 line(s)."));
        assert!(!p.message.contains('\0'));
        assert_eq!(
            p.always,
            Some((
                "Always allow this tool".to_string(),
                ApprovalDecision::AlwaysTool
            ))
        );
        let long = "x".repeat(5000);
        assert!(shown(&long).chars().count() == MAX_SHOWN + 1);
    }

    #[test]
    fn an_edit_shows_a_short_summary_of_its_diff() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "keep\nold line\n").unwrap();
        let lines: String = (0..30).map(|i| format!("new {i}\n")).collect();
        let p = approval_prompt(
            &req(
                "write_file",
                serde_json::json!({"path": "notes.txt", "content": format!("keep\n{lines}")}),
            ),
            "proj",
            dir.path(),
        );
        assert!(p.message.contains("Changes: +30 −1 lines"), "{}", p.message);
        assert!(p.message.contains("-old line"), "{}", p.message);
        assert!(p.message.contains("+new 0"), "{}", p.message);
        assert!(p.message.contains("… 17 more"), "{}", p.message);
        assert!(!p.message.contains("+new 29"), "{}", p.message);
    }
}
