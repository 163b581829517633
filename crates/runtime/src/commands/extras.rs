//! What a command file asks of its turn beyond its text, as Claude Code reads it: its
//! `` !`cmd` `` lines (run before the prompt is sent), front matter `allowed-tools` (grants
//! for that turn) and `model` (the model it runs on). The host decides what is honoured
//! (`host::command_turn`): the trust, the shadowing and the mapping to the provider.

use std::path::PathBuf;

use crate::skills::SkillSource;

/// A command's extras, kept with its expansion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extras {
    /// The repository's or the user's (`None`: not from a file).
    pub source: Option<SkillSource>,
    /// Its file (a skill's `SKILL.md` folder).
    pub path: PathBuf,
    /// Front matter `allowed-tools`, one Claude Code rule each (`Bash(git add:*)`, `Read`).
    pub allowed_tools: Vec<String>,
    /// Front matter `model` (`sonnet`, `opus`, `haiku`, or a model id).
    pub model: Option<String>,
    /// A project command whose name a user command has (reached by its `folder:` name or
    /// not at all): it is granted nothing.
    pub shadows_user: bool,
}

impl Extras {
    /// The extras a file's front matter gives.
    pub fn from_front(
        front: &std::collections::BTreeMap<String, String>,
        source: SkillSource,
        path: PathBuf,
    ) -> Extras {
        Extras {
            source: Some(source),
            path,
            allowed_tools: front
                .get("allowed-tools")
                .map(|v| split_tools(v))
                .unwrap_or_default(),
            model: front
                .get("model")
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty()),
            shadows_user: false,
        }
    }
}

/// `allowed-tools` as its rules: separated by commas or spaces outside parentheses
/// (`Bash(git add:*), Bash(git commit:*)`, `Read Grep Glob`; YAML lists come joined with
/// `, `).
pub fn split_tools(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in value.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                if !cur.trim().is_empty() {
                    out.push(cur.trim().to_string());
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

/// The `` !`cmd` `` of `text` as Claude Code finds them (a `!` at the start of a line or
/// after a space, then a command in backticks on one line): each as it stands in the text
/// and its command, in order.
pub fn shell_lines(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(at) = text[i..].find("!`").map(|a| a + i) {
        let starts = at == 0 || bytes[at - 1].is_ascii_whitespace();
        let body_start = at + 2;
        let close = text[body_start..]
            .find(['`', '\n'])
            .map(|c| c + body_start)
            .filter(|&c| bytes[c] == b'`');
        match close {
            Some(end) if starts && !text[body_start..end].trim().is_empty() => {
                out.push((
                    text[at..=end].to_string(),
                    text[body_start..end].trim().to_string(),
                ));
                i = end + 1;
            }
            _ => i = body_start,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_lines_and_allowed_tools_are_read_as_claude_code_reads_them() {
        let t =
            "## Context\n- Status: !`git status`\n!`git diff HEAD`\nnot!`this` nor !`\nunclosed\n";
        assert_eq!(
            shell_lines(t),
            [
                ("!`git status`".to_string(), "git status".to_string()),
                ("!`git diff HEAD`".to_string(), "git diff HEAD".to_string()),
            ]
        );
        assert_eq!(
            split_tools("Bash(git add:*), Bash(git commit -m x:*) Read,Grep"),
            ["Bash(git add:*)", "Bash(git commit -m x:*)", "Read", "Grep"]
        );
    }
}
