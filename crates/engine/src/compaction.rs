//! Context compaction: keep the conversation under the model's window.
//!
//! Soft threshold: old tool results are elided (saved to disk, referenced by path) and
//! repeated reads of one file deduplicated, without an LLM call. Hard threshold (or a
//! provider overflow error): older messages are summarised by the model and replaced by a
//! pinned block (first goal, latest plan, todo list, user instructions) plus the summary;
//! the most recent messages stay verbatim. A tool result too large for the window on its
//! own is cut to head + tail (full text saved), recent or not; after a provider overflow
//! each further retry cuts harder.

use cairn_protocol::{Compacted, Compacting, ContentPart, Event, Message, ToolSchema};

use crate::llm::LlmRequest;
use crate::session::{lock, read};
use crate::shrink::{local_tokens, MIN_RESULT_TOKENS};
use crate::tokens::TokenCounter;
use crate::turn::TurnRunner;

pub use crate::shrink::CUT_MARKER;

/// Overflow compactions (each harder than the last) tried within one LLM call.
const MAX_OVERFLOW_ROUNDS: u32 = 4;
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

    /// Soft threshold in tokens.
    pub fn soft_tokens(&self) -> u64 {
        match self.soft_threshold_pct {
            Some(p) => (self.context_window as f64 * p) as u64,
            None => self.hard_tokens() * 3 / 4,
        }
    }
}

/// Rough token count of one message (≈ 4 chars per token, plus framing).
pub fn estimate_message_tokens(m: &Message) -> u64 {
    let chars: usize = match m {
        Message::System { content } => content.len(),
        Message::User { content } | Message::Assistant { content, .. } => content
            .iter()
            .map(|p| match p {
                ContentPart::Text { text } | ContentPart::Reasoning { text } => text.len(),
                ContentPart::Image { .. } => 4_000,
            })
            .sum(),
        Message::Tool(r) => r.content.len(),
    };
    let calls: usize = match m {
        Message::Assistant { tool_calls, .. } => tool_calls
            .iter()
            .map(|c| c.arguments.len() + c.name.len() + 16)
            .sum(),
        _ => 0,
    };
    ((chars + calls) as u64).div_ceil(4) + 4
}

/// The provider's reported size of the history up to and including `messages[i]`, unless it
/// is implausibly small next to a character estimate (a server that reports a fixed or no
/// real count, or leaves cached tokens out): then the estimate, so compaction still runs.
pub(crate) fn reported_or_estimated(messages: &[Message], i: usize, reported: u64) -> u64 {
    let estimated: u64 = messages[..=i].iter().map(estimate_message_tokens).sum();
    if reported.saturating_mul(2) < estimated {
        estimated
    } else {
        reported
    }
}

/// Token count of a history: the provider's last reported usage plus estimates after it.
pub fn estimate_tokens(messages: &[Message]) -> (u64, bool) {
    let last_usage = messages.iter().rposition(
        |m| matches!(m, Message::Assistant { usage: Some(u), .. } if u.input_tokens > 0),
    );
    match last_usage {
        Some(i) => {
            let base = match &messages[i] {
                Message::Assistant { usage: Some(u), .. } => u.input_tokens + u.output_tokens,
                _ => 0,
            };
            let base = reported_or_estimated(messages, i, base);
            let rest: u64 = messages[i + 1..].iter().map(estimate_message_tokens).sum();
            (base + rest, rest > 0)
        }
        None => (messages.iter().map(estimate_message_tokens).sum(), true),
    }
}

/// Why compaction runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    Threshold,
    /// The provider rejected the request as too long; the round (1-based) sets how hard.
    Overflow(u32),
}

/// Largest tokens one tool result may keep: a quarter of the hard threshold, and after an
/// overflow at most a quarter of what was rejected (so less after each rejected retry).
fn result_cap(cfg: &CompactionConfig, overflow: bool, sent: u64) -> u64 {
    let mut cap = (cfg.hard_tokens() as f64 * cfg.keep_recent_pct) as u64;
    if overflow {
        cap = cap.min((sent as f64 * cfg.keep_recent_pct) as u64);
    }
    cap.max(MIN_RESULT_TOKENS)
}

/// Tokens the summary request's input may use: the hard threshold less room for the answer,
/// and after an overflow at most half of what was rejected, halved on each further round.
fn summary_input_budget(cfg: &CompactionConfig, level: u32, sent: u64) -> u64 {
    let hard = cfg.hard_tokens();
    let mut budget = hard.saturating_sub(SUMMARY_OUTPUT_TOKENS).max(hard / 2);
    if level > 0 {
        budget = budget.min((sent / 2) >> (level - 1).min(63));
    }
    budget.max(256)
}

impl TurnRunner<'_> {
    /// Compacts when the history crosses a threshold (or unconditionally after an overflow).
    pub(crate) async fn maybe_compact(&mut self, trigger: Trigger) {
        let cfg = read(&self.inner.config).compaction.clone();
        // Real tokenizer for OpenAI families, calibrated estimate otherwise (lazy BPE).
        let counter = TokenCounter::for_model(&read(&self.inner.config).model);
        let (tokens, estimated) = counter.count_history(&self.state.messages);
        let level = match trigger {
            Trigger::Overflow(round) => round.max(1),
            Trigger::Threshold => 0,
        };
        let forced = level > 0;
        if !forced && tokens < cfg.soft_tokens() {
            return;
        }
        let task_id = self.task_id.clone();
        let compacting = |trigger: &str, tokens: u64, n: usize| {
            Event::Compacting(Compacting {
                task_id: task_id.clone(),
                trigger: trigger.to_string(),
                tokens,
                estimated,
                context_window: cfg.context_window,
                threshold_pct: cfg.threshold_pct,
                threshold_tokens: cfg.hard_tokens(),
                outbound_messages: n as u32,
            })
        };
        // Soft pass first: cheap, no LLM call.
        let before = self.state.messages.len();
        let ev = compacting(if forced { "overflow" } else { "soft" }, tokens, before);
        self.emit(ev).await;
        // The reported usage predates any rewrite: what compaction removes is subtracted.
        let (elided, saved) = self.elide_old_tool_results(&cfg, &counter);
        let mut after_soft = tokens.saturating_sub(saved);
        let mut note = String::new();
        let mut cut = 0;
        if forced || after_soft >= cfg.hard_tokens() {
            // Still too big: results too large on their own are cut too, recent ones included.
            let cap = result_cap(&cfg, forced, tokens);
            let dir = self.results_dir();
            let (n, saved) =
                crate::shrink::shrink_tool_results(&mut self.state.messages, cap, &counter, &dir);
            cut = n;
            if cut > 0 {
                after_soft = after_soft.saturating_sub(saved);
                note = format!("{cut} oversized tool result(s) cut to ~{cap} tokens; ");
            }
        }
        self.emit(Event::Compacted(Compacted {
            req_id: String::new(),
            task_id: self.task_id.clone(),
            method: "elide".into(),
            messages_before: before as u32,
            messages_after: self.state.messages.len() as u32,
            boundary_index: None,
            model: None,
            summary_preview: Some(format!(
                "{elided} old tool result(s) elided; {note}~{tokens} → ~{after_soft} tokens"
            )),
            kept_user_messages: None,
            dropped_user_messages: None,
        }))
        .await;
        // After an overflow, a cut result is tried first: a summary costs a call and detail.
        let summary_needed = if forced {
            cut == 0
        } else {
            after_soft >= cfg.hard_tokens()
        };
        if summary_needed {
            let ev = compacting(
                if forced { "overflow" } else { "hard" },
                after_soft,
                self.state.messages.len(),
            );
            self.emit(ev).await;
            // After an overflow the configured window is evidently wrong: keep a quarter of
            // what was actually sent instead (less on each further round).
            let budget = if forced {
                ((after_soft as f64 * cfg.keep_recent_pct) as u64) >> (level - 1).min(63)
            } else {
                (cfg.hard_tokens() as f64 * cfg.keep_recent_pct) as u64
            };
            self.summarise(budget, summary_input_budget(&cfg, level, tokens))
                .await;
        }
    }

    /// Where saved tool results go.
    fn results_dir(&self) -> std::path::PathBuf {
        let c = read(&self.inner.config);
        c.budget.dir_for(&c.state_dir)
    }

    /// Compacts after a provider overflow, harder each round, until the history shrinks;
    /// false when nothing more can be shrunk (`round` carries over between retries).
    pub(crate) async fn recover_from_overflow(&mut self, round: &mut u32) -> bool {
        let counter = TokenCounter::for_model(&read(&self.inner.config).model);
        while *round < MAX_OVERFLOW_ROUNDS && !self.cancel.is_cancelled() {
            *round += 1;
            let before = (
                self.state.messages.len(),
                local_tokens(&self.state.messages, &counter),
            );
            self.maybe_compact(Trigger::Overflow(*round)).await;
            let after = (
                self.state.messages.len(),
                local_tokens(&self.state.messages, &counter),
            );
            if after.0 < before.0 || after.1 < before.1 {
                return true;
            }
            // A later round only helps if a result can be cut further or more summarised.
            if !crate::shrink::can_shrink_more(&self.state.messages, &counter)
                && self.state.messages.len() <= 3
            {
                return false;
            }
        }
        false
    }

    /// The error for a request the provider still rejects as too long: what is too big.
    pub(crate) fn overflow_message(&self, tools: &[ToolSchema], reason: &str) -> String {
        let c = read(&self.inner.config);
        let counter = TokenCounter::for_model(&c.model);
        let what = crate::shrink::describe_oversize(
            &self.state.messages,
            tools,
            &counter,
            c.compaction.context_window,
        );
        format!("{what} ({reason})")
    }

    /// Replaces old, large tool results by a reference to a saved copy; dedupes re-reads.
    /// Returns how many and the tokens saved.
    fn elide_old_tool_results(
        &mut self,
        cfg: &CompactionConfig,
        counter: &TokenCounter,
    ) -> (usize, u64) {
        let dir = self.results_dir();
        let tool_idx: Vec<usize> = self
            .state
            .messages
            .iter()
            .enumerate()
            .filter(|(_, m)| matches!(m, Message::Tool(_)))
            .map(|(i, _)| i)
            .collect();
        let keep_from = tool_idx.len().saturating_sub(cfg.keep_recent_tool_results);
        let (mut n, mut saved_tokens) = (0, 0);
        for &i in &tool_idx[..keep_from] {
            let Message::Tool(r) = &mut self.state.messages[i] else {
                continue;
            };
            if r.content.len() < cfg.elide_min_chars || r.content.starts_with("[elided") {
                continue;
            }
            let before = counter.count_text(&r.content);
            let (full, saved) = crate::shrink::full_text_and_copy(&dir, &r.call_id, &r.content);
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

    /// Summarises everything before the recent window (`budget` tokens) with one LLM call
    /// whose input is fitted to `input_budget` tokens.
    async fn summarise(&mut self, budget: u64, input_budget: u64) {
        let msgs = &self.state.messages;
        let before = msgs.len();
        let cut = recent_boundary(msgs, budget);
        if cut <= 2 {
            // Nothing old enough to summarise; every `compacting` still gets its `compacted`.
            return self
                .unchanged(
                    before,
                    "nothing old enough to summarise; history kept as it is",
                )
                .await;
        }
        let model = read(&self.inner.config).model.clone();
        let old: Vec<Message> = msgs[1..cut].to_vec();
        let counter = TokenCounter::for_model(&model);
        let mut request_msgs = vec![Message::system(
            "You compress a coding-agent conversation so the agent can continue without it. \
             Write a dense summary: the user's goals and constraints, decisions made, files \
             read and changed (paths), commands run and their outcomes, open problems and the \
             next steps. Keep exact identifiers, paths and error messages. No preamble.",
        )];
        let ask = Message::user("Summarise the conversation above now, in at most ~600 words.");
        // The summary request must itself fit the window.
        let frame = local_tokens(&request_msgs, &counter) + counter.count_message(&ask);
        let fitted = crate::shrink::fit_summary_input(
            &old,
            input_budget.saturating_sub(frame).max(1),
            &counter,
        );
        request_msgs.extend(fitted);
        request_msgs.push(ask);
        let req_id = uuid::Uuid::new_v4().to_string();
        let llm = read(&self.inner.llm).clone();
        let (answer, usage) = crate::llm::answer_text_and_usage(llm.stream(
            LlmRequest {
                model: model.clone(),
                messages: request_msgs,
                tools: Vec::new(),
                reasoning_effort: None,
                req_id: req_id.clone(),
            },
            self.cancel.child_token(),
        ))
        .await;
        // The summary request is billed like any other: it counts in the turn's usage.
        if let Some(u) = usage {
            self.account(&u, &model);
        }
        // A failed or interrupted summary leaves nothing to use.
        let summary = answer.unwrap_or_default();
        if summary.trim().is_empty() {
            tracing::warn!("compaction summary failed; keeping the elided history");
            return self
                .unchanged(
                    before,
                    "the summary request failed; the history is kept (old tool results elided)",
                )
                .await;
        }
        let summary: String = summary.chars().take(12_000).collect();
        let (pinned, kept_users, dropped_users) = self.pinned_block(&old);
        let mut next = vec![self.state.messages[0].clone()];
        next.push(Message::user(format!(
            "[Earlier conversation compacted]\n\n{pinned}\n## Summary of what happened\n{summary}"
        )));
        next.extend(self.state.messages[cut..].iter().cloned());
        self.state.messages = next;
        // Earlier turns' ends no longer exist in this history.
        self.state.turn_marks.clear();
        self.emit(Event::Compacted(Compacted {
            req_id,
            task_id: self.task_id.clone(),
            method: "summary".into(),
            messages_before: before as u32,
            messages_after: self.state.messages.len() as u32,
            boundary_index: Some(cut as u32),
            model: Some(model),
            summary_preview: Some(summary.chars().take(200).collect()),
            kept_user_messages: Some(kept_users),
            dropped_user_messages: Some(dropped_users),
        }))
        .await;
    }

    /// Ends a summary pass that changed nothing: `compacted` with method `none` and why.
    async fn unchanged(&mut self, before: usize, why: &str) {
        self.emit(Event::Compacted(Compacted {
            req_id: String::new(),
            task_id: self.task_id.clone(),
            method: "none".into(),
            messages_before: before as u32,
            messages_after: self.state.messages.len() as u32,
            boundary_index: None,
            model: None,
            summary_preview: Some(why.to_string()),
            kept_user_messages: None,
            dropped_user_messages: None,
        }))
        .await;
    }

    /// What must survive every compaction: first goal, latest plan, todos, user instructions.
    fn pinned_block(&self, old: &[Message]) -> (String, u32, u32) {
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
        let todos = lock(&self.inner.todos).clone();
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
}

/// Index where the verbatim recent window starts: at most `budget` tokens, and never at a
/// tool result (its call would be cut off).
fn recent_boundary(messages: &[Message], budget: u64) -> usize {
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
}
