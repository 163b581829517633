//! A command's `` !`cmd` `` lines: each runs before the prompt is sent, as a `run_shell`
//! call of the turn on the one path the model's calls take (PreToolUse hooks, the permission
//! engine, the approver, checkpoints, the sandbox, `tool_*` events), and its output takes
//! its place in the prompt; a call that did not run is said there instead.

use cairn_protocol::{ContentPart, Message, ToolCall, ToolStatus};

use super::exec::Finished;
use super::TurnRunner;

/// The tool the lines run as.
const SHELL_TOOL: &str = "run_shell";

impl TurnRunner<'_> {
    /// Runs this turn's shell lines in order and returns `input` with each one's output in
    /// its place (the history's user message and the retry input updated to match);
    /// `input` as it is without any.
    pub(super) async fn run_shell_lines(&mut self, input: String) -> String {
        let lines = std::mem::take(&mut self.options.shell);
        if lines.is_empty() {
            return input;
        }
        let calls: Vec<ToolCall> = lines
            .iter()
            .map(|l| ToolCall {
                id: format!("cmd-{}", uuid::Uuid::new_v4()),
                name: SHELL_TOOL.to_string(),
                arguments: serde_json::json!({ "command": l.command }).to_string(),
            })
            .collect();
        let results = self.run_calls(calls).await;
        let mut out = String::with_capacity(input.len());
        let mut rest = input.as_str();
        for (line, (_, f)) in lines.iter().zip(&results) {
            let Some(at) = rest.find(&line.raw) else {
                continue;
            };
            out.push_str(&rest[..at]);
            out.push_str(&inlined(&line.command, f));
            rest = &rest[at + line.raw.len()..];
        }
        out.push_str(rest);
        for (_, f) in &results {
            self.produced.extend(f.produced.iter().cloned());
        }
        self.replace_input(&input, &out);
        out
    }

    /// The user message `begin` recorded now says `new` where it said `old`.
    fn replace_input(&mut self, old: &str, new: &str) {
        if let Some(Message::User { content }) = self
            .state
            .messages
            .iter_mut()
            .rev()
            .find(|m| matches!(m, Message::User { .. }))
        {
            for part in content.iter_mut() {
                if let ContentPart::Text { text } = part {
                    if text.contains(old) {
                        *text = text.replacen(old, new, 1);
                    }
                }
            }
        }
        self.state.last_input = new.to_string();
        self.save_state();
    }
}

/// What a line's call puts in the prompt: its output, or why it did not run.
fn inlined(command: &str, f: &Finished) -> String {
    match f.status {
        // As Claude Code inlines it: the output alone; a failing exit keeps its status line.
        ToolStatus::Ok => {
            let out = f.content.trim_end();
            out.strip_suffix("[exit code: 0]")
                .unwrap_or(out)
                .trim_end()
                .to_string()
        }
        ToolStatus::Denied => format!(
            "[`{command}` was not run: denied ({})]",
            f.reason.as_deref().unwrap_or("permission denied")
        ),
        ToolStatus::Interrupted => format!("[`{command}` was not run: interrupted]"),
        _ => format!(
            "[`{command}` failed: {}]",
            f.reason
                .as_deref()
                .or(Some(f.content.trim()).filter(|c| !c.is_empty()))
                .unwrap_or("error")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finished(status: ToolStatus, content: &str, reason: Option<&str>) -> Finished {
        Finished {
            status,
            content: content.into(),
            reason: reason.map(String::from),
            duration_ms: None,
            produced: Vec::new(),
            images: Vec::new(),
            stale: Vec::new(),
        }
    }

    #[test]
    fn a_lines_output_is_inlined_without_a_zero_exit_and_what_did_not_run_is_said() {
        let ok = finished(ToolStatus::Ok, "On branch main\n[exit code: 0]\n", None);
        assert_eq!(inlined("git status", &ok), "On branch main");
        let failed = finished(ToolStatus::Ok, "fatal: bad\n[exit code: 128]", None);
        assert_eq!(inlined("git log", &failed), "fatal: bad\n[exit code: 128]");
        let denied = finished(
            ToolStatus::Denied,
            "",
            Some("denied by rule `run_shell(git:*)`"),
        );
        assert_eq!(
            inlined("git status", &denied),
            "[`git status` was not run: denied (denied by rule `run_shell(git:*)`)]"
        );
        let timed_out = finished(ToolStatus::Error, "timed out after 1 ms", None);
        assert_eq!(
            inlined("sleep 9", &timed_out),
            "[`sleep 9` failed: timed out after 1 ms]"
        );
    }
}
