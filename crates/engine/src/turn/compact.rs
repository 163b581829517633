//! The turn's side of compaction: when to compact, the events around it, and the summary
//! request sent through the session's LLM (the rules themselves are in [`crate::compaction`]).

use cairn_protocol::{
    Compacted, Compacting, CompactionKind, CompactionState, Event, Message, ToolSchema,
};

use super::TurnRunner;
use crate::compaction::{
    dedup_reads, elide_old_tool_results, pinned_block, recent_boundary, result_cap,
    summary_input_budget, summary_request, Trigger, MAX_OVERFLOW_ROUNDS,
};
use crate::llm::{FailureKind, LlmRequest};
use crate::locks::{lock, read};
use crate::shrink::local_tokens;
use crate::tokens::TokenCounter;

/// Compactions in a row that may leave the history over its budget before the turn ends.
pub(crate) const MAX_STALLED_COMPACTIONS: u32 = 2;

impl TurnRunner<'_> {
    /// Compacts when the history crosses a threshold (or unconditionally after an overflow).
    pub(crate) async fn maybe_compact(&mut self, trigger: Trigger) {
        let cfg = read(&self.inner.config).compaction.clone();
        // Real tokenizer for OpenAI families, calibrated estimate otherwise (lazy BPE).
        let counter = TokenCounter::for_model(&self.model());
        let (tokens, estimated) = counter.count_history(&self.state.messages);
        let level = match trigger {
            Trigger::Overflow(round) => round.max(1),
            Trigger::Threshold => 0,
        };
        let forced = level > 0;
        if !forced && tokens < cfg.soft_tokens() {
            return;
        }
        if self.gates(crate::gate::GatePoint::PreCompact) {
            let _ = self
                .gate(crate::gate::GateInput::at(
                    crate::gate::GatePoint::PreCompact,
                ))
                .await;
        }
        let task_id = self.task_id.clone();
        let trigger_name = if forced { "overflow" } else { "threshold" };
        let compacting = |phase: &str, tokens: u64, n: usize| {
            Event::Compacting(Compacting {
                task_id: task_id.clone(),
                trigger: trigger_name.to_string(),
                tokens,
                estimated,
                context_window: cfg.context_window,
                threshold_pct: cfg.threshold_pct,
                threshold_tokens: cfg.hard_tokens(),
                outbound_messages: n as u32,
                phase: Some(phase.to_string()),
            })
        };
        // Trim first: cheap, no LLM call.
        let before = self.state.messages.len();
        let ev = compacting("trim", tokens, before);
        self.emit(ev).await;
        // The reported usage predates any rewrite: what compaction removes is subtracted.
        let (deduped, dedup_saved) = if cfg.dedup {
            dedup_reads(&mut self.state.messages, &counter)
        } else {
            (0, 0)
        };
        let dir = self.results_dir();
        let (elided, saved) = if cfg.elide {
            elide_old_tool_results(&mut self.state.messages, &cfg, &counter, &dir)
        } else {
            (0, 0)
        };
        let mut after_soft = tokens.saturating_sub(saved + dedup_saved);
        let mut note = String::new();
        let mut cut = 0;
        if forced || after_soft >= cfg.hard_tokens() {
            // Still too big: results too large on their own are cut too, recent ones included.
            let cap = result_cap(&cfg, forced, tokens);
            let (n, saved) =
                crate::shrink::shrink_tool_results(&mut self.state.messages, cap, &counter, &dir);
            cut = n;
            if cut > 0 {
                after_soft = after_soft.saturating_sub(saved);
                note = format!("{cut} oversized tool result(s) cut to ~{cap} tokens; ");
            }
        }
        let trimmed = (deduped + elided + cut) as u32;
        let mut last = Compacted {
            req_id: String::new(),
            task_id: self.task_id.clone(),
            method: if trimmed > 0 { "trimmed" } else { "none" }.into(),
            messages_before: before as u32,
            messages_after: self.state.messages.len() as u32,
            boundary_index: None,
            model: None,
            summary_preview: Some(format!(
                "{deduped} repeated read(s) de-duplicated; {elided} old tool result(s) elided; \
                 {note}~{tokens} → ~{after_soft} tokens"
            )),
            kept_user_messages: None,
            dropped_user_messages: None,
            state: None,
        };
        self.note_compaction(&last, trimmed, tokens, &counter, &cfg);
        // After an overflow, a cut result is tried first: a summary costs a call and detail.
        let summary_needed = if forced {
            cut == 0
        } else {
            after_soft >= cfg.hard_tokens()
        };
        if summary_needed {
            last.state = Some(self.compaction_state());
            self.emit(Event::Compacted(last)).await;
            let ev = compacting("summary", after_soft, self.state.messages.len());
            self.emit(ev).await;
            // After an overflow the configured window is evidently wrong: keep a quarter of
            // what was actually sent instead (less on each further round).
            let budget = if forced {
                ((after_soft as f64 * cfg.keep_recent_pct) as u64) >> (level - 1).min(63)
            } else {
                (cfg.hard_tokens() as f64 * cfg.keep_recent_pct) as u64
            };
            last = self
                .summarise(&cfg, budget, summary_input_budget(&cfg, level, tokens))
                .await;
            self.note_compaction(&last, 0, after_soft, &counter, &cfg);
        }
        if !forced {
            self.check_progress(&counter, cfg.hard_tokens());
        }
        last.state = Some(self.compaction_state());
        self.emit(Event::Compacted(last)).await;
    }

    /// The session's compaction state now.
    fn compaction_state(&self) -> CompactionState {
        lock(&self.inner.compaction_state).clone()
    }

    /// Counts a finished pass in the session's compaction state.
    fn note_compaction(
        &self,
        done: &Compacted,
        trimmed: u32,
        tokens_before: u64,
        counter: &TokenCounter,
        cfg: &crate::compaction::CompactionConfig,
    ) {
        let (after, _) = counter.count_history(&self.state.messages);
        let mut s = lock(&self.inner.compaction_state);
        match done.kind() {
            CompactionKind::Unchanged => {}
            CompactionKind::Trimmed => s.compactions += 1,
            CompactionKind::Summarized => {
                s.compactions += 1;
                s.summaries += 1;
            }
        }
        s.trimmed += trimmed;
        s.tokens_before = tokens_before;
        s.tokens_after = after;
        s.threshold_tokens = cfg.hard_tokens();
        s.stalled = self.stalled_compactions;
        s.summary_model = cfg.summary_model(&self.model());
        s.summary_effort = cfg.reasoning_effort.map(|e| e.as_str().to_string());
    }

    /// The breaker: a compaction that leaves the history over its budget is allowed once; a
    /// second in a row (no progress in between) ends the turn instead of compacting forever.
    fn check_progress(&mut self, counter: &TokenCounter, budget: u64) {
        let (after, _) = counter.count_history(&self.state.messages);
        if after < budget {
            self.stalled_compactions = 0;
        } else {
            self.stalled_compactions += 1;
        }
        lock(&self.inner.compaction_state).stalled = self.stalled_compactions;
        if self.stalled_compactions >= MAX_STALLED_COMPACTIONS {
            self.compaction_stalled = Some(format!(
                "compaction could not bring the conversation under its budget \
                 (~{after} tokens after {n} compactions, budget {budget}): stopped instead of \
                 compacting again. Start a new session (or /clear), remove large pasted text or \
                 attachments, or use a model with a larger context window.",
                n = self.stalled_compactions
            ));
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
        let counter = TokenCounter::for_model(&self.model());
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
        let counter = TokenCounter::for_model(&self.model());
        let c = read(&self.inner.config);
        let what = crate::shrink::describe_oversize(
            &self.state.messages,
            tools,
            &counter,
            c.compaction.context_window,
        );
        format!("{what} ({reason})")
    }

    /// Summarises everything before the recent window (`budget` tokens) with one LLM call
    /// (the compaction model at its effort) whose input is fitted to `input_budget` tokens.
    /// The `compacted` event to send (`summarized`, or `none` with why).
    async fn summarise(
        &mut self,
        cfg: &crate::compaction::CompactionConfig,
        budget: u64,
        input_budget: u64,
    ) -> Compacted {
        let msgs = &self.state.messages;
        let before = msgs.len();
        let cut = recent_boundary(msgs, budget);
        if cut <= 2 {
            // Nothing old enough to summarise; every `compacting` still gets its `compacted`.
            return self.unchanged(
                before,
                "nothing old enough to summarise; history kept as it is",
            );
        }
        let model = cfg.summary_model(&self.model());
        let old: Vec<Message> = msgs[1..cut].to_vec();
        let counter = TokenCounter::for_model(&model);
        let request_msgs = summary_request(&old, input_budget, &counter, cfg.lang);
        let mut req_id = uuid::Uuid::new_v4().to_string();
        let mut answer = self
            .summary_call(&model, request_msgs.clone(), cfg.reasoning_effort, &req_id)
            .await;
        // A model that rejects the effort (a local server without reasoning) gets one try
        // without it.
        let rejected = matches!(&answer, Err(Some(o)) if o.kind == Some(FailureKind::BadRequest));
        if rejected && cfg.reasoning_effort.is_some() && !self.cancel.is_cancelled() {
            req_id = uuid::Uuid::new_v4().to_string();
            answer = self.summary_call(&model, request_msgs, None, &req_id).await;
        }
        let summary = answer.unwrap_or_default();
        if summary.trim().is_empty() {
            tracing::warn!("compaction summary failed; keeping the elided history");
            return self.unchanged(
                before,
                "the summary request failed; the history is kept (old tool results elided)",
            );
        }
        let summary: String = summary.chars().take(12_000).collect();
        let todos = lock(&self.inner.todos).clone();
        let (pinned, kept_users, dropped_users) = pinned_block(&old, &todos);
        let mut next = vec![self.state.messages[0].clone()];
        next.push(Message::user(format!(
            "[Earlier conversation compacted]\n\n{pinned}\n## Summary of what happened\n{summary}"
        )));
        next.extend(self.state.messages[cut..].iter().cloned());
        self.state.messages = next;
        // Earlier turns' ends no longer exist in this history.
        self.state.turn_marks.clear();
        Compacted {
            req_id,
            task_id: self.task_id.clone(),
            method: "summarized".into(),
            messages_before: before as u32,
            messages_after: self.state.messages.len() as u32,
            boundary_index: Some(cut as u32),
            model: Some(model),
            summary_preview: Some(summary.chars().take(200).collect()),
            kept_user_messages: Some(kept_users),
            dropped_user_messages: Some(dropped_users),
            state: None,
        }
    }

    /// One summary request, logged and counted like any other; its text (empty on failure).
    async fn summary_call(
        &mut self,
        model: &str,
        messages: Vec<Message>,
        effort: Option<crate::llm::ReasoningEffort>,
        req_id: &str,
    ) -> Result<String, Option<crate::llm::LlmOutcome>> {
        self.emit(Event::LlmRequest(cairn_protocol::LlmRequest {
            req_id: req_id.to_string(),
            task_id: self.task_id.clone(),
            log_time: super::now(),
            model: model.to_string(),
            msg_count: messages.len() as u32,
            tool_count: 0,
            compact: Some(true),
        }))
        .await;
        let llm = read(&self.inner.llm).clone();
        let (answer, usage) = crate::llm::answer_text_and_usage(llm.stream(
            LlmRequest {
                model: model.to_string(),
                messages,
                tools: Vec::new(),
                reasoning_effort: effort,
                req_id: req_id.to_string(),
            },
            self.cancel.child_token(),
        ))
        .await;
        // The summary request is billed like any other: it counts in the turn's usage.
        if let Some(u) = usage {
            self.account(&u, model);
        }
        answer
    }

    /// A summary pass that changed nothing: `compacted` with method `none` and why.
    fn unchanged(&self, before: usize, why: &str) -> Compacted {
        Compacted {
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
            state: None,
        }
    }
}
