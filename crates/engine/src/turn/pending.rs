//! The turn's side of resuming a restored session: closing or running the tool calls left
//! open (the history side is [`crate::resume`]).

use cairn_protocol::{ToolCall, ToolStatus};

use super::TurnRunner;
use crate::resume::{interrupted_result, PendingOutcome, CLOSED, NOT_RUN_AGAIN};

impl TurnRunner<'_> {
    /// Closes every open call as `interrupted` (new input arrived instead of a resume); the
    /// calls closed, to announce with [`Self::announce_closed`] once the turn has started.
    pub(crate) fn close_pending(&mut self) -> Vec<ToolCall> {
        self.state.pending_started.clear();
        let closed = std::mem::take(&mut self.state.pending);
        for call in &closed {
            self.state.messages.push(interrupted_result(call, CLOSED));
        }
        closed
    }

    /// Emits `tool_finished` (`interrupted`, with why) for calls closed without running, so
    /// event consumers see every call end.
    pub(crate) async fn announce_closed(&self, calls: &[ToolCall], why: &str) {
        for call in calls {
            let kind = crate::locks::read(&self.inner.registry)
                .get(&call.name)
                .map(|t| t.handle.kind())
                .unwrap_or_default();
            self.emit(cairn_protocol::Event::ToolFinished(
                cairn_protocol::ToolFinished {
                    task_id: self.task_id.clone(),
                    req_id: call.id.clone(),
                    name: call.name.clone(),
                    status: ToolStatus::Interrupted,
                    reason: Some(why.trim_start_matches("interrupted: ").to_string()),
                    duration: None,
                    result_preview: None,
                    kind,
                    truncated: false,
                    attachments: Vec::new(),
                    stale_files: Vec::new(),
                    unchanged: false,
                },
            ))
            .await;
        }
    }

    /// Runs the open calls (asking again for approvals) as the first iteration of a resume.
    pub(crate) async fn run_pending(&mut self) -> PendingOutcome {
        let calls = std::mem::take(&mut self.state.pending);
        let started = std::mem::take(&mut self.state.pending_started);
        self.iteration += 1;
        let (was_running, not_started): (Vec<ToolCall>, Vec<ToolCall>) =
            calls.into_iter().partition(|c| started.contains(&c.id));
        for call in &was_running {
            self.state
                .messages
                .push(interrupted_result(call, NOT_RUN_AGAIN));
        }
        self.announce_closed(&was_running, NOT_RUN_AGAIN).await;
        let interrupted = self.execute_tools(not_started).await;
        self.save_state();
        self.emit(cairn_protocol::Event::IterationEnd(
            cairn_protocol::IterationEnd {
                iteration: self.iteration,
                task_id: self.task_id.clone(),
            },
        ))
        .await;
        if let Some(msg) = self.fatal.take() {
            return PendingOutcome::Fatal(msg);
        }
        if interrupted || self.cancel.is_cancelled() {
            return PendingOutcome::Interrupted;
        }
        PendingOutcome::Continue
    }
}
