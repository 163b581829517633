//! Context compaction: keep the conversation under the model's window.
//!
//! Soft threshold: old tool results are elided (saved to disk, referenced by path) and
//! repeated reads of one file deduplicated, without an LLM call. Hard threshold (or a
//! provider overflow error): older messages are summarised by the model and replaced by a
//! pinned block (first goal, latest plan, todo list, user instructions) plus the summary;
//! the most recent messages stay verbatim. A tool result too large for the window on its
//! own is cut to head + tail (full text saved), recent or not; after a provider overflow
//! each further retry cuts harder.

use cairn_protocol::Message;

use crate::llm::ReasoningEffort;
use crate::prompt::Lang;
use crate::shrink::{local_tokens, MIN_RESULT_TOKENS};
use crate::tokens::TokenCounter;

pub use crate::shrink::CUT_MARKER;
pub use crate::tokens::{estimate_message_tokens, estimate_tokens};

/// Overflow compactions (each harder than the last) tried within one LLM call.
pub(crate) const MAX_OVERFLOW_ROUNDS: u32 = 4;
/// Tokens kept free for the summary's answer.
const SUMMARY_OUTPUT_TOKENS: u64 = 1_000;

/// Compaction thresholds.
#[derive(Debug, Clone)]
pub struct CompactionConfig {
    /// Model context window in tokens.
    pub context_window: u64,
    /// Hard threshold as a fraction of the window (summary).
    pub threshold_pct: f64,
    /// Soft threshold as a fraction of the window (elide tool results); default 75 % of hard.
    pub soft_threshold_pct: Option<f64>,
    /// Absolute cap on the hard threshold in tokens.
    pub cap_tokens: Option<u64>,
    /// Fraction of the hard threshold kept verbatim after a summary.
    pub keep_recent_pct: f64,
    /// Tool results shorter than this (chars) are never elided.
    pub elide_min_chars: usize,
    /// The most recent tool results never elided (still cut when too large for the window).
    pub keep_recent_tool_results: usize,
    /// The model that writes summaries (`COMPACTION_MODEL`); `None` = the session's.
    pub model: Option<String>,
    /// The summary request's reasoning effort (`COMPACTION_REASONING_EFFORT`, default low).
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Whether old tool results are elided at the soft threshold (`COMPACTION_ELIDE=0` = no).
    pub elide: bool,
    /// Whether repeated reads of one file are de-duplicated (`COMPACTION_DEDUP=0` = no).
    pub dedup: bool,
    /// The session's language: the summary is written in it.
    pub lang: Lang,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        CompactionConfig {
            context_window: 128_000,
            threshold_pct: 0.8,
            soft_threshold_pct: None,
            cap_tokens: None,
            keep_recent_pct: 0.25,
            elide_min_chars: 1_000,
            keep_recent_tool_results: 4,
            model: None,
            reasoning_effort: Some(ReasoningEffort::Low),
            elide: true,
            dedup: true,
            lang: Lang::En,
        }
    }
}

impl CompactionConfig {
    /// Hard threshold in tokens.
    pub fn hard_tokens(&self) -> u64 {
        let t = (self.context_window as f64 * self.threshold_pct) as u64;
        match self.cap_tokens {
            Some(cap) => t.min(cap),
            None => t,
        }
    }

    /// The model that writes summaries for a session on `session_model`.
    pub fn summary_model(&self, session_model: &str) -> String {
        self.model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| session_model.to_string())
    }

    /// Soft threshold in tokens.
    pub fn soft_tokens(&self) -> u64 {
        match self.soft_threshold_pct {
            Some(p) => (self.context_window as f64 * p) as u64,
            None => self.hard_tokens() * 3 / 4,
        }
    }
}

/// Why compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    /// The history crossed the soft or hard threshold.
    Threshold,
    /// The provider rejected the request as too long; the round (1-based) sets how hard.
    Overflow(u32),
}

/// Largest tokens one tool result may keep: a quarter of the hard threshold, and after an
/// overflow at most a quarter of what was rejected (so less after each rejected retry).
pub(crate) fn result_cap(cfg: &CompactionConfig, overflow: bool, sent: u64) -> u64 {
    let mut cap = (cfg.hard_tokens() as f64 * cfg.keep_recent_pct) as u64;
    if overflow {
        cap = cap.min((sent as f64 * cfg.keep_recent_pct) as u64);
    }
    cap.max(MIN_RESULT_TOKENS)
}

/// Tokens the summary request's input may use: the hard threshold less room for the answer,
/// and after an overflow at most half of what was rejected, halved on each further round.
pub(crate) fn summary_input_budget(cfg: &CompactionConfig, level: u32, sent: u64) -> u64 {
    let hard = cfg.hard_tokens();
    let mut budget = hard.saturating_sub(SUMMARY_OUTPUT_TOKENS).max(hard / 2);
    if level > 0 {
        budget = budget.min((sent / 2) >> (level - 1).min(63));
    }
    budget.max(256)
}

/// The marker an earlier read of a file is replaced by when the file was read again.
pub const SUPERSEDED_MARKER: &str = "[superseded: read again later";

/// Replaces every `read_file` result whose exact read (same arguments) happens again later by
/// a pointer to the later one: the later result holds the file as it is now. Returns how many
/// and the tokens saved.
pub(crate) fn dedup_reads(messages: &mut [Message], counter: &TokenCounter) -> (usize, u64) {
    use std::collections::HashMap;
    // The arguments of each read call, by call id, in a canonical form.
    let mut args: HashMap<String, String> = HashMap::new();
    for m in messages.iter() {
        if let Message::Assistant { tool_calls, .. } = m {
            for c in tool_calls.iter().filter(|c| c.name == "read_file") {
                let key = serde_json::from_str::<serde_json::Value>(&c.arguments)
                    .map(|v| canonical(&v))
                    .unwrap_or_else(|_| c.arguments.clone());
                args.insert(c.id.clone(), key);
            }
        }
    }
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let (mut n, mut saved) = (0, 0);
    for m in messages.iter_mut().rev() {
        let Message::Tool(r) = m else { continue };
        let Some(key) = args.get(&r.call_id) else {
            continue;
        };
        if r.status != cairn_protocol::ToolStatus::Ok {
            continue;
        }
        if seen.insert(key.clone()) || r.content.starts_with(SUPERSEDED_MARKER) {
            continue;
        }
        let before = counter.count_text(&r.content);
        r.content = format!(
            "{SUPERSEDED_MARKER} in this conversation ({key}); the later result holds the \
             file's current text]"
        );
        r.images.clear();
        saved += before.saturating_sub(counter.count_text(&r.content));
        n += 1;
    }
    (n, saved)
}

/// A JSON value with object keys sorted, as one line.
fn canonical(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(map) => {
            let mut keys: Vec<_> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        serde_json::Value::from(k.as_str()),
                        canonical(&map[*k])
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// Replaces old, large tool results by a reference to a saved copy.
/// Returns how many and the tokens saved.
pub(crate) fn elide_old_tool_results(
    messages: &mut [Message],
    cfg: &CompactionConfig,
    counter: &TokenCounter,
    dir: &std::path::Path,
) -> (usize, u64) {
    let tool_idx: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::Tool(_)))
        .map(|(i, _)| i)
        .collect();
    let keep_from = tool_idx.len().saturating_sub(cfg.keep_recent_tool_results);
    let (mut n, mut saved_tokens) = (0, 0);
    for &i in &tool_idx[..keep_from] {
        let Message::Tool(r) = &mut messages[i] else {
            continue;
        };
        if r.content.len() < cfg.elide_min_chars || r.content.starts_with("[elided") {
            continue;
        }
        let before = counter.count_text(&r.content);
        let (full, saved) = crate::shrink::full_text_and_copy(dir, &r.call_id, &r.content);
        let head: String = full.chars().take(200).collect();
        r.content = match saved {
            Some(file) => format!(
                "[elided to save context: {} chars from {}; full text at {} — read it again if needed]\n{head}…",
                full.len(),
                r.name,
                file.display()
            ),
            None => format!(
                "[elided to save context: {} chars from {}]\n{head}…",
                full.len(),
                r.name
            ),
        };
        saved_tokens += before.saturating_sub(counter.count_text(&r.content));
        n += 1;
    }
    (n, saved_tokens)
}

/// What must survive every compaction: first goal, latest plan, todos, user instructions.
pub(crate) fn pinned_block(
    old: &[Message],
    todos: &[cairn_protocol::TodoItem],
) -> (String, u32, u32) {
    let users: Vec<String> = old
        .iter()
        .filter(|m| matches!(m, Message::User { .. }))
        .map(|m| m.text())
        .filter(|t| !t.starts_with("[Earlier conversation compacted]"))
        .collect();
    let previous_pin = old.iter().find_map(|m| match m {
        Message::User { .. } if m.text().starts_with("[Earlier conversation compacted]") => {
            Some(m.text())
        }
        _ => None,
    });
    let mut out = String::new();
    if let Some(p) = &previous_pin {
        // Keep the earlier pinned block (it holds the original goal).
        if let Some(goal) = p.split("## Summary of what happened").next() {
            out.push_str(
                goal.trim_start_matches("[Earlier conversation compacted]")
                    .trim(),
            );
            out.push_str("\n\n");
        }
    } else if let Some(first) = users.first() {
        out.push_str(&format!("## The user's original request\n{first}\n\n"));
    }
    if users.len() > 1 {
        out.push_str("## Later user instructions\n");
        for u in &users[1..] {
            let t: String = u.chars().take(600).collect();
            out.push_str(&format!("- {t}\n"));
        }
        out.push('\n');
    }
    let plan = old.iter().rev().find_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .rev()
            .find(|c| c.name == "propose_plan")
            .and_then(|c| serde_json::from_str::<serde_json::Value>(&c.arguments).ok())
            .and_then(|v| v.get("plan").and_then(|p| p.as_str()).map(str::to_string)),
        _ => None,
    });
    if let Some(p) = plan {
        out.push_str(&format!("## Latest plan\n{p}\n\n"));
    }
    if !todos.is_empty() {
        out.push_str("## Todo list\n");
        for t in todos {
            let mark = match t.status {
                cairn_protocol::TodoStatus::Completed => "[x]",
                cairn_protocol::TodoStatus::InProgress => "[~]",
                cairn_protocol::TodoStatus::Pending => "[ ]",
            };
            out.push_str(&format!("- {mark} {}\n", t.content));
        }
        out.push('\n');
    }
    (out, users.len() as u32, 0)
}

/// The messages of the summary request for `old`, fitted to `input_budget` tokens.
pub(crate) fn summary_request(
    old: &[Message],
    input_budget: u64,
    counter: &TokenCounter,
    lang: Lang,
) -> Vec<Message> {
    let language = lang.name();
    let mut request_msgs = vec![Message::system(format!(
        "You compress a coding-agent conversation so the agent can continue without it. \
         Write a dense summary: the user's goals and constraints, decisions made, files \
         read and changed (paths), commands run and their outcomes, open problems and the \
         next steps. Keep exact identifiers, paths and error messages. No preamble. \
         Write the summary in {language}: it is the language of this session."
    ))];
    let ask = Message::user(format!(
        "Summarise the conversation above now, in {language}, in at most ~600 words."
    ));
    // The summary request must itself fit the window.
    let frame = local_tokens(&request_msgs, counter) + counter.count_message(&ask);
    let fitted =
        crate::shrink::fit_summary_input(old, input_budget.saturating_sub(frame).max(1), counter);
    request_msgs.extend(fitted);
    request_msgs.push(ask);
    request_msgs
}

/// Index where the verbatim recent window starts: at most `budget` tokens, and never at a
/// tool result (its call would be cut off).
pub(crate) fn recent_boundary(messages: &[Message], budget: u64) -> usize {
    let mut used = 0;
    let mut cut = messages.len();
    for i in (1..messages.len()).rev() {
        used += estimate_message_tokens(&messages[i]);
        if used > budget {
            break;
        }
        cut = i;
    }
    while cut < messages.len() && matches!(messages[cut], Message::Tool(_)) {
        cut += 1;
    }
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::{TokenUsage, ToolCall, ToolResult, ToolStatus};

    #[test]
    fn thresholds() {
        let c = CompactionConfig {
            context_window: 100_000,
            ..Default::default()
        };
        assert_eq!(c.hard_tokens(), 80_000);
        assert_eq!(c.soft_tokens(), 60_000);
        let capped = CompactionConfig {
            cap_tokens: Some(50_000),
            ..c
        };
        assert_eq!(capped.hard_tokens(), 50_000);
    }

    #[test]
    fn estimates_prefer_reported_usage() {
        let msgs = vec![
            Message::system("s"),
            Message::user("x".repeat(4000)),
            Message::Assistant {
                content: vec![],
                tool_calls: vec![],
                usage: Some(TokenUsage {
                    input_tokens: 5000,
                    output_tokens: 10,
                    ..Default::default()
                }),
            },
            Message::user("y".repeat(400)),
        ];
        let (t, est) = estimate_tokens(&msgs);
        assert_eq!(t, 5010 + 104);
        assert!(est);
    }

    #[test]
    fn an_implausibly_small_reported_usage_gives_way_to_the_estimate() {
        // A server that always reports 100 prompt tokens, under 40 KB of history.
        let msgs = vec![
            Message::system("s"),
            Message::user("x".repeat(40_000)),
            Message::Assistant {
                content: vec![],
                tool_calls: vec![],
                usage: Some(TokenUsage {
                    input_tokens: 100,
                    output_tokens: 20,
                    ..Default::default()
                }),
            },
        ];
        let (t, _) = estimate_tokens(&msgs);
        assert!(t > 9_000, "{t}");
        let (t, _) =
            crate::tokens::TokenCounter::for_model("some-local-model").count_history(&msgs);
        assert!(t > 9_000, "{t}");
    }

    #[test]
    fn the_recent_window_never_starts_at_a_tool_result() {
        let call = |id: &str| Message::Assistant {
            content: vec![],
            tool_calls: vec![ToolCall {
                id: id.into(),
                name: "x".into(),
                arguments: "{}".into(),
            }],
            usage: None,
        };
        let result = |id: &str| {
            Message::Tool(ToolResult {
                call_id: id.into(),
                name: "x".into(),
                content: "r".repeat(400),
                status: ToolStatus::Ok,
                images: Vec::new(),
            })
        };
        let msgs = vec![
            Message::system("s"),
            Message::user("goal"),
            call("a"),
            result("a"),
            call("b"),
            result("b"),
        ];
        let cut = recent_boundary(&msgs, 110);
        assert!(!matches!(msgs[cut.min(msgs.len() - 1)], Message::Tool(_)) || cut == msgs.len());
    }

    fn read_pair(id: &str, path: &str, content: &str) -> Vec<Message> {
        vec![
            Message::Assistant {
                content: vec![],
                tool_calls: vec![ToolCall {
                    id: id.into(),
                    name: "read_file".into(),
                    arguments: serde_json::json!({ "path": path }).to_string(),
                }],
                usage: None,
            },
            Message::Tool(ToolResult {
                call_id: id.into(),
                name: "read_file".into(),
                content: content.into(),
                status: ToolStatus::Ok,
                images: Vec::new(),
            }),
        ]
    }

    #[test]
    fn only_an_earlier_read_with_the_same_arguments_is_superseded() {
        let mut msgs = vec![Message::system("s")];
        msgs.extend(read_pair("1", "a.rs", "A old"));
        msgs.extend(read_pair("2", "b.rs", "B"));
        msgs.extend(read_pair("3", "a.rs", "A new"));
        let counter = TokenCounter::for_model("gpt-4o");
        let (n, _) = dedup_reads(&mut msgs, &counter);
        assert_eq!(n, 1);
        let texts: Vec<String> = msgs
            .iter()
            .filter(|m| matches!(m, Message::Tool(_)))
            .map(|m| m.text())
            .collect();
        assert!(texts[0].starts_with(SUPERSEDED_MARKER), "{}", texts[0]);
        assert_eq!(texts[1], "B");
        assert_eq!(texts[2], "A new");
        // Run again: nothing more to do.
        assert_eq!(dedup_reads(&mut msgs, &counter).0, 0);
    }
}
