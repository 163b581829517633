//! One turn: iterations of (LLM call → tool calls) until the model stops calling tools.

use std::collections::BTreeSet;
use std::sync::Arc;

use cairn_protocol::{
    AssistantMessage, ContentPart, ErrorEvent, Event, Interrupted, IterationEnd, Message,
    QueueSteering, TextDelta, TokenUsage, ToolCall, TurnEnd, TurnSource, TurnStart, TurnStatus,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

mod checkpoint_call;
mod compact;
mod exec;
mod gates;
mod llm_call;
mod pending;
mod prelude;
mod spend_check;

use llm_call::LlmResult;

use crate::compaction::Trigger;
use crate::host::HostShared;
use crate::locks::{lock, read};
use crate::state::{Inner, TurnState};

/// What starts a turn.
pub(crate) enum TurnKind {
    /// New user input.
    Input(String),
    /// Re-run after a retriable error.
    Retry,
    /// Finish the tool calls left open in a restored history (seed §12.4).
    Resume,
    /// New user input with attachments.
    Attach(String, Box<crate::attachments::TurnAttachments>),
    /// Steering left over when the turn before ended (more may follow as injections), with
    /// what the user attached to it.
    Steering(String, Option<Box<crate::attachments::TurnAttachments>>),
    /// Compact the history now (`/compact`): no model turn, just the summary.
    Compact,
}

/// How the iteration loop ended.
enum LoopEnd {
    Status(TurnStatus),
    Interrupted(String),
}

/// Drives one turn and emits its events.
pub(crate) struct TurnRunner<'a> {
    pub(crate) inner: &'a Arc<Inner>,
    pub(crate) state: &'a mut TurnState,
    tx: mpsc::Sender<Event>,
    pub(crate) cancel: CancellationToken,
    pub(crate) task_id: String,
    pub(crate) iteration: u32,
    pub(crate) produced: BTreeSet<String>,
    pub(crate) host: Arc<HostShared>,
    /// Set when the turn must end with an error after the current tool batch.
    pub(crate) fatal: Option<String>,
    /// Set when a checkpoint could not be stored: the turn ends with an error.
    pub(crate) checkpoint_failed: Option<String>,
    /// Usage summed over the turn's requests.
    usage: Option<TokenUsage>,
    /// Cost summed over the turn; `None` once any request's price is unknown.
    cost: Option<f64>,
    /// Open calls of a restored history that new input closed, announced after `turn_start`.
    closed: Vec<ToolCall>,
    /// What a command file asked of this turn (shell lines, grants, model).
    options: crate::turn_options::TurnOptions,
    /// Threshold compactions in a row that left the history over its budget (the breaker).
    stalled_compactions: u32,
    /// Set when the breaker trips: the turn ends with `compaction_stalled`.
    compaction_stalled: Option<String>,
    /// The user's hooks as they were when the turn started.
    pub(crate) gate: Option<std::sync::Arc<dyn crate::gate::Gate>>,
}

impl<'a> TurnRunner<'a> {
    pub(crate) fn new(
        inner: &'a Arc<Inner>,
        state: &'a mut TurnState,
        tx: mpsc::Sender<Event>,
        cancel: CancellationToken,
    ) -> Self {
        let task_id = uuid::Uuid::new_v4().to_string();
        let host = Arc::new(HostShared {
            tx: std::sync::Mutex::new(Some(tx.clone())),
            approver: read(&inner.approver).clone(),
            approver_set: inner.approver_set.load(std::sync::atomic::Ordering::SeqCst),
            permissions: inner.permissions.clone(),
            todos: inner.todos.clone(),
            task_id: task_id.clone(),
            exec: inner.exec.clone(),
            hooks: inner.hooks.clone(),
            gate: read(&inner.gate).clone(),
            extra_usage: std::sync::Mutex::new(None),
            llm: Some(read(&inner.llm).clone()),
            model: read(&inner.config).model.clone(),
            pricing: inner.pricing.clone(),
            asking: tokio::sync::Mutex::new(()),
        });
        TurnRunner {
            inner,
            state,
            tx,
            cancel,
            host,
            fatal: None,
            checkpoint_failed: None,
            usage: None,
            cost: Some(0.0),
            closed: Vec::new(),
            options: crate::turn_options::TurnOptions::default(),
            stalled_compactions: 0,
            compaction_stalled: None,
            gate: read(&inner.gate).clone(),
            task_id,
            iteration: 0,
            produced: BTreeSet::new(),
        }
    }

    /// This turn runs with `options` (its grants hold until it ends).
    pub(crate) fn with_options(mut self, options: crate::turn_options::TurnOptions) -> Self {
        self.options = options;
        self
    }

    /// The model this turn runs on: a command's, else the session's.
    pub(crate) fn model(&self) -> String {
        match &self.options.model {
            Some(m) => m.clone(),
            None => read(&self.inner.config).model.clone(),
        }
    }

    /// Sends an event to the stream and the hooks; a closed stream cancels the turn.
    pub(crate) async fn emit(&self, event: Event) {
        crate::hook::notify(&self.inner.hooks, &event);
        if self.tx.send(event).await.is_err() {
            self.cancel.cancel();
        }
    }

    /// Runs the turn to its `turn_end`; returns how it ended.
    pub(crate) async fn run(mut self, kind: TurnKind) -> TurnStatus {
        let (kind, attached) = match kind {
            TurnKind::Attach(text, a) => (TurnKind::Input(text), Some(a)),
            TurnKind::Steering(text, a) => (TurnKind::Steering(text, None), a),
            other => (other, None),
        };
        let source = match &kind {
            TurnKind::Retry => TurnSource::Retry,
            TurnKind::Resume => TurnSource::Resume,
            TurnKind::Steering(..) => TurnSource::Steering,
            TurnKind::Input(_) | TurnKind::Attach(..) | TurnKind::Compact => TurnSource::Input,
        };
        let grants = std::mem::take(&mut self.options.grants);
        lock(&self.inner.permissions).set_turn_grants(grants);
        self.count_spent();
        let input = self.begin(&kind, attached.as_deref());
        let closed = std::mem::take(&mut self.closed);
        let (session_id, worktree) = {
            let c = read(&self.inner.config);
            (c.session_id.clone(), c.worktree.clone())
        };
        self.emit(Event::TurnStart(TurnStart {
            task_id: self.task_id.clone(),
            input: input.clone(),
            attachment_count: attached.as_ref().map(|a| a.refs.len() as u32),
            attachments: attached.as_ref().map(|a| a.carried()),
            session_id,
            turn: self.state.turns,
            source,
            worktree,
            sandbox: self.inner.exec.sandbox.clone(),
        }))
        .await;
        self.announce_closed(&closed, crate::resume::CLOSED).await;
        let said: Vec<Event> = std::mem::take(&mut *lock(&self.inner.announcements));
        for event in said {
            self.emit(with_task(event, &self.task_id)).await;
        }
        // A command's `!` lines run now, their output inlined in the prompt the model gets.
        let input = self.run_shell_lines(input).await;
        let prompt = match &kind {
            TurnKind::Input(_) | TurnKind::Attach(..) | TurnKind::Steering(..) => {
                Some(input.as_str())
            }
            TurnKind::Retry | TurnKind::Resume | TurnKind::Compact => None,
        };
        if !matches!(kind, TurnKind::Steering(..)) {
            self.state.stop_continues = 0;
        }
        if let Some(reason) = self.gate_input(prompt).await {
            self.emit_error(
                format!("a UserPromptSubmit hook blocked this prompt: {reason}"),
                "hook_blocked",
                false,
                String::new(),
            )
            .await;
            return self.finish(TurnStatus::Error, &input).await;
        }
        let end = self.body(&kind).await;
        let status = match end {
            LoopEnd::Status(s) => s,
            LoopEnd::Interrupted(req_id) => {
                self.emit(Event::Interrupted(Interrupted {
                    iterations: self.iteration,
                    req_id,
                    task_id: self.task_id.clone(),
                }))
                .await;
                TurnStatus::Interrupted
            }
        };
        if status == TurnStatus::Completed {
            self.gate_stop().await;
        }
        self.finish(status, &input).await
    }

    /// `Stop`: a gate that blocks the turn's end gets its reason run as the next turn of this
    /// run (a steering turn), at most [`gates::MAX_STOP_CONTINUES`] times per user turn.
    async fn gate_stop(&mut self) {
        if !self.gates(crate::gate::GatePoint::Stop) {
            return;
        }
        let mut input = crate::gate::GateInput::at(crate::gate::GatePoint::Stop);
        input.stop_hook_active = self.state.stop_continues > 0;
        let verdict = self.gate(input).await;
        if let Some(reason) = verdict.block {
            if self.state.stop_continues < gates::MAX_STOP_CONTINUES {
                self.state.stop_continues += 1;
                lock(&self.inner.steering).push_back(crate::state::Steering::text(format!(
                    "(A Stop hook asks to go on) {reason}"
                )));
            } else {
                tracing::warn!("a Stop hook blocked the turn's end again; not continuing");
            }
        }
    }

    /// Records the turn's input in the history (checkpointed before anything is announced,
    /// so a crash right after `turn_start` never loses what the user typed); returns the
    /// input `turn_start` shows.
    fn begin(
        &mut self,
        kind: &TurnKind,
        attached: Option<&crate::attachments::TurnAttachments>,
    ) -> String {
        if !matches!(kind, TurnKind::Resume) {
            self.closed = self.close_pending();
        }
        self.state.retry_pending = false;
        let text = match kind {
            TurnKind::Input(text) | TurnKind::Steering(text, _) | TurnKind::Attach(text, _) => {
                text.clone()
            }
            TurnKind::Retry | TurnKind::Resume => return self.state.last_input.clone(),
            TurnKind::Compact => return "/compact".to_string(),
        };
        // Inline data belongs to the turn that carried it.
        self.state.inline.clear();
        self.state.turns += 1;
        self.state.last_input = text.clone();
        let message = match attached {
            Some(a) => {
                let state_dir = read(&self.inner.config).state_dir.clone();
                let (message, inline) = a.split(&text, &state_dir);
                self.state.inline.push(inline);
                message
            }
            None => Message::user(text.clone()),
        };
        self.state.messages.push(message);
        self.save_state();
        text
    }

    /// The turn between `turn_start` and its end: the iterations (after the open calls, on
    /// a resume).
    async fn body(&mut self, kind: &TurnKind) -> LoopEnd {
        if self.model().trim().is_empty() {
            self.emit_error(
                "no model configured: pass --model, or set CAIRN_MODEL or OPENAI_MODEL".into(),
                "config",
                false,
                String::new(),
            )
            .await;
            return LoopEnd::Status(TurnStatus::Error);
        }
        if matches!(kind, TurnKind::Compact) {
            self.maybe_compact(Trigger::Overflow(1)).await;
            return LoopEnd::Status(TurnStatus::Completed);
        }
        if !matches!(kind, TurnKind::Resume) {
            return self.iterate().await;
        }
        match self.run_pending().await {
            crate::resume::PendingOutcome::Continue => self.iterate().await,
            crate::resume::PendingOutcome::Interrupted => LoopEnd::Interrupted(String::new()),
            crate::resume::PendingOutcome::Fatal(msg) => {
                self.emit_error(msg, "approval_unavailable", false, String::new())
                    .await;
                LoopEnd::Status(TurnStatus::Error)
            }
        }
    }

    /// Ends the turn: the final checkpoint, the turn mark, and `turn_end` with the turn's
    /// files, usage and cost. Returns the final status (a failed save makes it an error).
    async fn finish(mut self, status: TurnStatus, input: &str) -> TurnStatus {
        let status = self.end_checkpoint(status, input).await;
        lock(&self.inner.permissions).end_turn_grants();
        self.host.close();
        let len = self.state.messages.len();
        crate::rewind::record(&mut self.state.turn_marks, self.state.turns, len);
        self.save_state();
        // A save that failed during the turn (sticky) makes it an error, reported once here.
        let status = match crate::hook::end_turn(&self.inner.hooks) {
            Ok(()) => status,
            Err(reason) => {
                self.emit_error(reason, "save_failed", false, String::new())
                    .await;
                TurnStatus::Error
            }
        };
        let produced_files = std::mem::take(&mut self.produced).into_iter().collect();
        // What subagents used for this turn's tool calls is part of its cost.
        let extra = lock(&self.host.extra_usage).take();
        if let Some((u, cost)) = extra {
            if let Some(live) = lock(&self.inner.spent_live).as_mut() {
                live.add(&u, cost);
            }
            self.usage.get_or_insert_with(TokenUsage::default).add(&u);
            self.cost = match (self.cost, cost) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            };
        }
        let cost_usd = self.usage.and(self.cost);
        self.emit(Event::TurnEnd(TurnEnd {
            status,
            iterations: self.iteration,
            produced_files,
            task_id: self.task_id.clone(),
            usage: self.usage,
            cost_usd,
        }))
        .await;
        status
    }

    async fn iterate(&mut self) -> LoopEnd {
        let (max_iterations, finalize) = {
            let c = read(&self.inner.config);
            (c.max_iterations, c.finalize_on_max_iterations)
        };
        loop {
            if self.cancel.is_cancelled() {
                return LoopEnd::Interrupted(String::new());
            }
            if self.save_failed() {
                return LoopEnd::Status(TurnStatus::Error);
            }
            self.inject_steering().await;
            if self.iteration >= max_iterations {
                if finalize {
                    self.finalize().await;
                }
                return LoopEnd::Status(TurnStatus::MaxIterationsExceeded);
            }
            self.iteration += 1;
            self.maybe_compact(Trigger::Threshold).await;
            if let Some(message) = self.compaction_stalled.take() {
                self.emit_error(message, "compaction_stalled", false, String::new())
                    .await;
                return LoopEnd::Status(TurnStatus::Error);
            }
            if let Some(message) = self.over_budget().await {
                self.emit_error(message, "budget_exceeded", false, String::new())
                    .await;
                return LoopEnd::Status(TurnStatus::Error);
            }
            let tools = read(&self.inner.registry).schemas();
            match self.call_llm(tools).await {
                LlmResult::Failed => return LoopEnd::Status(TurnStatus::Error),
                LlmResult::Interrupted { partial, req_id } => {
                    if !partial.is_empty() {
                        self.state
                            .messages
                            .push(Message::assistant_text(partial.clone()));
                        // Said as a message too: the event log keeps no deltas, so a face
                        // reopening the session (after quitting mid-stream) still shows it.
                        self.emit(Event::AssistantMessage(AssistantMessage {
                            text: partial,
                            reasoning: String::new(),
                            tool_calls: Vec::new(),
                            usage: None,
                            cost_usd: None,
                            req_id: req_id.clone(),
                            task_id: self.task_id.clone(),
                            log_time: now(),
                        }))
                        .await;
                    }
                    return LoopEnd::Interrupted(req_id);
                }
                LlmResult::Reply {
                    text,
                    reasoning,
                    tool_calls,
                    usage,
                    req_id,
                } => {
                    self.push_assistant(&text, &reasoning, &tool_calls, usage, &req_id)
                        .await;
                    if tool_calls.is_empty() {
                        self.end_iteration().await;
                        if lock(&self.inner.steering).is_empty() {
                            return LoopEnd::Status(TurnStatus::Completed);
                        }
                        continue;
                    }
                    // Checkpoint the calls before running them: a crash while an approval is
                    // open leaves them in the history for `resume()` to ask again.
                    self.save_state();
                    if self.save_failed() {
                        // Left open in the saved history: `--resume` runs them later.
                        return LoopEnd::Status(TurnStatus::Error);
                    }
                    let interrupted = self.execute_tools(tool_calls).await;
                    self.end_iteration().await;
                    if let Some(msg) = self.fatal.take() {
                        self.emit_error(msg, "approval_unavailable", false, String::new())
                            .await;
                        return LoopEnd::Status(TurnStatus::Error);
                    }
                    if let Some(msg) = self.checkpoint_failed.take() {
                        self.emit_error(msg, "checkpoint", false, String::new())
                            .await;
                        return LoopEnd::Status(TurnStatus::Error);
                    }
                    if interrupted || self.cancel.is_cancelled() {
                        return LoopEnd::Interrupted(String::new());
                    }
                }
            }
        }
    }

    /// Hands the current state to the hooks (checkpointing).
    pub(crate) fn save_state(&self) {
        crate::state::save_state(self.inner, &*self.state);
    }

    /// Whether a hook could not save the session during this turn: then no further LLM call
    /// or tool runs (their effects could not be recorded); `end_turn` reports why.
    fn save_failed(&self) -> bool {
        crate::hook::failure(&self.inner.hooks).is_some()
    }

    async fn end_iteration(&self) {
        self.save_state();
        self.emit(Event::IterationEnd(IterationEnd {
            iteration: self.iteration,
            task_id: self.task_id.clone(),
        }))
        .await;
    }

    /// One last LLM call without tools so the model can wrap up after the iteration cap.
    async fn finalize(&mut self) {
        self.state.messages.push(Message::user(
            "[system notice] The iteration limit for this turn was reached. Do not call tools; \
             summarise what was done and what remains.",
        ));
        self.iteration += 1;
        if let LlmResult::Reply {
            text,
            reasoning,
            usage,
            req_id,
            ..
        } = self.call_llm(Vec::new()).await
        {
            self.push_assistant(&text, &reasoning, &[], usage, &req_id)
                .await;
            self.end_iteration().await;
        }
    }

    /// Adds one request's tokens (and their cost, when the model is priced) to the turn's.
    pub(crate) fn account(&mut self, usage: &TokenUsage, model: &str) {
        let cost = self
            .inner
            .pricing
            .as_ref()
            .and_then(|p| p.cost_usd(model, usage));
        self.usage
            .get_or_insert_with(TokenUsage::default)
            .add(usage);
        if let Some(live) = lock(&self.inner.spent_live).as_mut() {
            live.add(usage, cost);
        }
        self.cost = match (self.cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    async fn push_assistant(
        &mut self,
        text: &str,
        reasoning: &str,
        tool_calls: &[ToolCall],
        usage: Option<TokenUsage>,
        req_id: &str,
    ) {
        let mut content = Vec::new();
        if !reasoning.is_empty() {
            content.push(ContentPart::Reasoning {
                text: reasoning.to_string(),
            });
        }
        if !text.is_empty() {
            content.push(ContentPart::Text {
                text: text.to_string(),
            });
        }
        self.state.messages.push(Message::Assistant {
            content,
            tool_calls: tool_calls.to_vec(),
            usage,
        });
        let model = self.model();
        let cost_usd = usage.and_then(|u| self.inner.pricing.as_ref()?.cost_usd(&model, &u));
        if let Some(u) = &usage {
            self.account(u, &model);
        }
        self.emit(Event::AssistantMessage(AssistantMessage {
            text: text.to_string(),
            reasoning: reasoning.to_string(),
            tool_calls: tool_calls.iter().map(|c| c.name.clone()).collect(),
            usage,
            cost_usd,
            req_id: req_id.to_string(),
            task_id: self.task_id.clone(),
            log_time: now(),
        }))
        .await;
    }

    async fn inject_steering(&mut self) {
        loop {
            let next = lock(&self.inner.steering).pop_front();
            let Some(next) = next else { break };
            let text = next.text;
            let attachments = match next.attached {
                Some(a) => {
                    let state_dir = read(&self.inner.config).state_dir.clone();
                    let (message, inline) = a.split(&text, &state_dir);
                    self.state.messages.push(message);
                    self.state.inline.push(inline);
                    Some(a.carried())
                }
                None => {
                    self.state.messages.push(Message::user(text.clone()));
                    None
                }
            };
            self.emit(Event::QueueSteering(QueueSteering {
                text,
                task_id: self.task_id.clone(),
                attachments,
            }))
            .await;
        }
    }

    fn delta(&self, text: String, req_id: &str) -> TextDelta {
        TextDelta {
            text,
            req_id: req_id.to_string(),
            task_id: self.task_id.clone(),
        }
    }

    pub(crate) async fn emit_error(
        &self,
        error: String,
        error_type: &str,
        retriable: bool,
        req_id: String,
    ) {
        self.emit(Event::Error(ErrorEvent {
            error,
            error_type: error_type.to_string(),
            retriable,
            iteration: self.iteration,
            req_id,
            log_time: now(),
            task_id: self.task_id.clone(),
            stack: None,
        }))
        .await;
    }
}

/// Gives every call a unique, non-empty id so each result pairs with exactly one call.
pub(super) fn dedupe_call_ids(calls: Vec<ToolCall>) -> Vec<ToolCall> {
    let mut seen = BTreeSet::new();
    calls
        .into_iter()
        .enumerate()
        .map(|(i, mut c)| {
            if c.id.is_empty() || !seen.insert(c.id.clone()) {
                c.id = format!("call_{}_{i}", uuid::Uuid::new_v4().simple());
                seen.insert(c.id.clone());
            }
            c
        })
        .collect()
}

/// The current time, RFC 3339.
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// An announcement with the turn's task id (those the engine knows how to address).
fn with_task(event: Event, task_id: &str) -> Event {
    match event {
        Event::ModelSwitched(mut m) => {
            m.task_id = task_id.to_string();
            Event::ModelSwitched(m)
        }
        Event::BudgetWarning(mut b) => {
            b.task_id = task_id.to_string();
            Event::BudgetWarning(b)
        }
        other => other,
    }
}
