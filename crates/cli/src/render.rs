//! Output of `cairn run`: JSON lines, or human text (colour only on a TTY).

use std::io::{IsTerminal, Write};

use cairn_protocol::{Event, ToolStatus};

/// Writes events to stdout (answer text, JSON) and stderr (tool lines, notices).
pub struct Renderer {
    json: bool,
    color_err: bool,
    /// The last thing written to stdout was not a newline.
    mid_line: bool,
    /// The last thing written to stderr (reasoning) was not a newline.
    err_mid_line: bool,
    /// Tool arguments by call id, for the finish line.
    args: std::collections::HashMap<String, String>,
    /// Whether the user is asked on the terminal (else servers' forms are declined, said).
    asks: bool,
    /// Streamed output lines shown per tool call (bounded: the result line follows).
    output_lines: std::collections::HashMap<String, usize>,
}

impl Renderer {
    /// A renderer for `--json` or human output.
    pub fn new(json: bool) -> Self {
        Renderer {
            json,
            color_err: std::io::stderr().is_terminal(),
            mid_line: false,
            err_mid_line: false,
            args: Default::default(),
            asks: false,
            output_lines: Default::default(),
        }
    }

    /// The user answers on the terminal (`--approve ask`).
    pub fn asking(mut self, asks: bool) -> Self {
        self.asks = asks;
        self
    }

    /// Renders one event.
    pub fn event(&mut self, ev: &Event) {
        if self.json {
            if let Ok(line) = serde_json::to_string(ev) {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            return;
        }
        match ev {
            Event::AssistantDelta(d) => {
                self.end_err_line();
                let mut out = std::io::stdout().lock();
                let _ = write!(out, "{}", inert(&d.text));
                let _ = out.flush();
                self.mid_line = !d.text.ends_with('\n');
            }
            Event::ReasoningDelta(d) => {
                self.end_out_line();
                self.err_colored("2", &inert(&d.text), false);
                if !d.text.is_empty() {
                    self.err_mid_line = !d.text.ends_with('\n');
                }
            }
            Event::ToolProposed(p) => {
                self.args
                    .insert(p.req_id.clone(), summarize_args(&p.arguments, 100));
            }
            Event::ToolFinished(f) => {
                self.end_line();
                let args = self.args.remove(&f.req_id).unwrap_or_default();
                let (mark, color) = match f.status {
                    ToolStatus::Ok => ("✓", "32"),
                    ToolStatus::Error => ("✗", "31"),
                    ToolStatus::Denied => ("⊘", "33"),
                    ToolStatus::Interrupted => ("■", "33"),
                };
                let mut line = format!("{mark} {}", inert(&f.name));
                if !args.is_empty() {
                    line.push(' ');
                    line.push_str(&inert(&args));
                }
                if let Some(ms) = f.duration {
                    line.push_str(&format!(" ({ms} ms)"));
                }
                if f.status != ToolStatus::Ok {
                    if let Some(r) = &f.reason {
                        // The first line inline, a few more below (a regex error's caret).
                        let mut lines = r.lines().filter(|l| !l.trim().is_empty());
                        line.push_str(&format!(" — {}", inert(lines.next().unwrap_or(""))));
                        let rest: Vec<&str> = lines.collect();
                        for l in rest.iter().take(REASON_LINES) {
                            line.push_str(&format!("\n    {}", inert(l)));
                        }
                        if rest.len() > REASON_LINES {
                            line.push_str(&format!(
                                "\n    … ({} more lines)",
                                rest.len() - REASON_LINES
                            ));
                        }
                    }
                }
                self.err_colored(color, &line, true);
            }
            Event::LlmRetry(r) => {
                self.end_line();
                let line = format!(
                    "retrying ({}/{}) in {} ms: {}",
                    r.attempt,
                    r.max,
                    r.wait_ms,
                    inert(&r.reason)
                );
                self.err_colored("33", &line, true);
            }
            Event::ElicitationRequested(r) if !self.asks => {
                self.end_line();
                let line = format!(
                    "MCP server `{}` asked for information ({}); declined: this run cannot ask \
                     (answer forms with --approve ask on a terminal)",
                    inert(&r.server),
                    inert(&r.message)
                );
                self.err_colored("33", &line, true);
            }
            Event::SubagentEvent(sub) => {
                if let Some(line) = subagent_line(&sub.agent, &sub.event) {
                    self.end_line();
                    self.err_colored("2", &line, true);
                }
            }
            Event::Compacting(c) if c.summarising() => {
                self.end_line();
                let line = format!("compacting the conversation (~{} tokens)…", c.tokens);
                self.err_colored("2", &line, true);
            }
            Event::Compacted(c) if c.kind() == cairn_protocol::CompactionKind::Summarized => {
                self.end_line();
                let mut line = format!(
                    "compacted: {} → {} messages",
                    c.messages_before, c.messages_after
                );
                if let Some(s) = &c.state {
                    line.push_str(&format!(
                        ", ~{} → ~{} tokens (summary by {}{}; {} compaction(s) so far)",
                        s.tokens_before,
                        s.tokens_after,
                        inert(&s.summary_model),
                        s.summary_effort
                            .as_deref()
                            .map(|e| format!(" at {e} effort"))
                            .unwrap_or_default(),
                        s.compactions
                    ));
                }
                self.err_colored("2", &line, true);
            }
            Event::ToolOutput(o) => {
                let shown = self.output_lines.entry(o.req_id.clone()).or_default();
                let mut lines = Vec::new();
                for l in o.text.lines().filter(|l| !l.trim().is_empty()) {
                    *shown += 1;
                    if *shown <= MAX_OUTPUT_LINES {
                        lines.push(format!("  │ {}", inert(l)));
                    } else if *shown == MAX_OUTPUT_LINES + 1 {
                        lines.push("  │ …".to_string());
                    }
                }
                if !lines.is_empty() {
                    self.end_line();
                    self.err_colored("2", &lines.join("\n"), true);
                }
            }
            Event::TodosUpdated(t) => {
                self.end_line();
                let items: Vec<String> = t
                    .todos
                    .iter()
                    .map(|i| {
                        let mark = match i.status {
                            cairn_protocol::TodoStatus::Completed => "[x]",
                            cairn_protocol::TodoStatus::InProgress => "[~]",
                            cairn_protocol::TodoStatus::Pending => "[ ]",
                        };
                        format!("{mark} {}", inert(&i.content))
                    })
                    .collect();
                self.err_colored("36", &format!("todo: {}", items.join("  ")), true);
            }
            Event::BudgetWarning(b) => {
                self.end_line();
                self.err_colored("33", &format!("note: {}", inert(&b.message)), true);
            }
            Event::ModelSwitched(m) => {
                self.end_line();
                self.err_colored("2", &inert(&m.message), true);
            }
            Event::QueueSteering(q) => {
                self.end_line();
                let with = match q.attachments.as_ref().map(Vec::len).unwrap_or(0) {
                    0 => String::new(),
                    n => format!(" (+{n} attached)"),
                };
                self.err_colored("36", &format!("» {}{with}", inert(&q.text)), true);
            }
            Event::Error(e) => {
                self.end_line();
                self.err_colored("31", &format!("error: {}", inert(&e.error)), true);
            }
            Event::Interrupted(_) => {
                self.end_line();
                self.err_colored("33", "interrupted", true);
            }
            Event::TurnEnd(t) => {
                self.end_line();
                if t.status != cairn_protocol::TurnStatus::Completed {
                    self.err_colored("2", &format!("turn ended: {}", t.status.as_str()), true);
                }
            }
            _ => {}
        }
    }

    /// Ends a half-written line on either stream, so the next line starts at the margin.
    fn end_line(&mut self) {
        self.end_out_line();
        self.end_err_line();
    }

    fn end_out_line(&mut self) {
        if self.mid_line {
            let _ = writeln!(std::io::stdout().lock());
            self.mid_line = false;
        }
    }

    fn end_err_line(&mut self) {
        if self.err_mid_line {
            let _ = writeln!(std::io::stderr().lock());
            self.err_mid_line = false;
        }
    }

    fn err_colored(&self, code: &str, text: &str, newline: bool) {
        let mut err = std::io::stderr().lock();
        let nl = if newline { "\n" } else { "" };
        let _ = if self.color_err {
            write!(err, "\x1b[{code}m{text}\x1b[0m{nl}")
        } else {
            write!(err, "{text}{nl}")
        };
    }
}

/// `text` safe to print on a terminal: control characters other than newline and tab (escape
/// sequences that move the cursor, erase lines or retitle the window, carriage returns,
/// bells) are shown as `\u{..}` instead of acting. Model output and tool arguments are
/// untrusted: raw, they could redraw an approval prompt to show another command.
pub fn inert(text: &str) -> std::borrow::Cow<'_, str> {
    let acts = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(acts) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if acts(c) {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Lines of a failed tool's reason shown below its first.
const REASON_LINES: usize = 5;

/// A one-line summary of a tool call's arguments (path, command, pattern, ...).
pub fn summarize_args(args: &serde_json::Value, max: usize) -> String {
    let key = [
        "command", "path", "pattern", "url", "query", "task_id", "question", "task", "plan",
    ]
    .iter()
    .find_map(|k| args.get(*k).and_then(|v| v.as_str()));
    let text = match (key, patched_files(args)) {
        (Some(v), _) => v.to_string(),
        (None, Some(files)) => files,
        (None, None) if args.as_object().is_some_and(|o| o.is_empty()) => String::new(),
        (None, None) => args.to_string(),
    };
    let one: String = text.replace('\n', "⏎");
    if one.chars().count() > max {
        let mut t: String = one.chars().take(max).collect();
        t.push('…');
        t
    } else {
        one
    }
}

/// The files an `apply_patch` or `apply_unified_diff` call touches, comma-separated.
fn patched_files(args: &serde_json::Value) -> Option<String> {
    let (text, markers): (&str, &[&str]) = match (args.get("patch"), args.get("diff")) {
        (Some(p), _) => (
            p.as_str()?,
            &["*** Add File: ", "*** Update File: ", "*** Delete File: "],
        ),
        (None, Some(d)) => (d.as_str()?, &["+++ b/", "+++ "]),
        _ => return None,
    };
    let files: Vec<&str> = text
        .lines()
        .filter_map(|l| markers.iter().find_map(|m| l.strip_prefix(m)))
        .map(str::trim)
        .filter(|f| !f.is_empty() && *f != "/dev/null")
        .collect();
    (!files.is_empty()).then(|| files.join(", "))
}

/// Streamed output lines shown per tool call before the rest is elided.
const MAX_OUTPUT_LINES: usize = 20;

/// One line for a subagent's step (its tool calls and its end); `None` for the rest.
fn subagent_line(agent: &str, ev: &Event) -> Option<String> {
    match ev {
        Event::ToolFinished(f) => {
            let mark = match f.status {
                ToolStatus::Ok => "✓",
                ToolStatus::Error => "✗",
                ToolStatus::Denied => "⊘",
                ToolStatus::Interrupted => "■",
            };
            Some(format!("  ↳ {} {mark} {}", inert(agent), inert(&f.name)))
        }
        Event::TurnEnd(t) => Some(format!(
            "  ↳ {} finished ({})",
            inert(agent),
            t.status.as_str()
        )),
        Event::SubagentEvent(sub) => subagent_line(&format!("{agent}/{}", sub.agent), &sub.event),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert!(matches!(
            inert("plain\ttext\n"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(
            inert("touch X \u{1b}[2K\r\u{1b}[1Als\u{7}"),
            "touch X \\u{1b}[2K\\u{d}\\u{1b}[1Als\\u{7}"
        );
        assert_eq!(inert("\u{9b}31m"), "\\u{9b}31m", "C1 CSI too");
    }

    #[test]
    fn a_tool_line_shows_the_argument_that_says_what_the_call_is() {
        assert_eq!(summarize_args(&json!({"command": "ls -la"}), 100), "ls -la");
        assert_eq!(
            summarize_args(&json!({"plan": "# Plan\n1. do x"}), 100),
            "# Plan⏎1. do x"
        );
        assert_eq!(
            summarize_args(&json!({"question": "Which one?", "options": ["a"]}), 100),
            "Which one?"
        );
        assert_eq!(summarize_args(&json!({}), 100), "");
        assert_eq!(
            summarize_args(&json!({"todos": []}), 100),
            r#"{"todos":[]}"#
        );
        assert_eq!(summarize_args(&json!({"path": "abcdef"}), 3), "abc…");
        let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** Add File: b/c.rs\n+z\n*** End Patch";
        assert_eq!(
            summarize_args(&json!({ "patch": patch }), 100),
            "a.txt, b/c.rs"
        );
        let diff = "--- a/src/x.rs\n+++ b/src/x.rs\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(summarize_args(&json!({ "diff": diff }), 100), "src/x.rs");
        assert_eq!(
            summarize_args(&json!({"patch": "garbage"}), 100),
            r#"{"patch":"garbage"}"#
        );
    }
}
