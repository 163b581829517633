//! The checkpointer's part of running one side-effecting call: the snapshot before it (no
//! snapshot, no run) and the record after it, whose failure fails the turn.

use cairn_protocol::{Event, Progress, ToolStatus, TurnStatus};

use super::exec::{error_json, Finished, Prepared};
use super::TurnRunner;
use crate::checkpoint::{ProgressWatch, SideEffect};
use crate::locks::lock;
use crate::registry::RegisteredTool;

/// How a mutating call counts for checkpoints: file tools change what they report, known
/// read-only commands nothing, anything else may change anything.
pub(crate) fn side_effect(
    runner: &TurnRunner<'_>,
    tool: &RegisteredTool,
    args: &serde_json::Value,
) -> SideEffect {
    let caps = &tool.meta.capabilities;
    if caps.iter().any(|c| c == "exec") {
        let subject = tool.handle.permission_subject(args);
        let read_only = subject.command_run().is_some_and(|run| {
            lock(&runner.inner.permissions).is_known_read_only(
                &tool.schema.name,
                &run.command,
                run.cwd.as_deref(),
            )
        });
        return if read_only {
            SideEffect::ReadOnlyCommand
        } else {
            SideEffect::Command
        };
    }
    if caps.iter().any(|c| c == "write") {
        return SideEffect::FileEdit;
    }
    SideEffect::Command
}

impl TurnRunner<'_> {
    /// Snapshots before the call; on failure, the call's result (it does not run) and the
    /// turn is marked failed.
    pub(crate) async fn checkpoint_before(
        &mut self,
        p: &Prepared,
        kind: SideEffect,
    ) -> Result<(), Finished> {
        let Some(c) = self.inner.checkpointer.clone() else {
            return Ok(());
        };
        let turn = self.state.turns;
        let before = c.before_side_effect(turn, &p.call.name, &p.call.id, kind);
        let result = match c.progress() {
            Some(reports) => self.showing_progress(before, reports).await,
            None => before.await,
        };
        match result {
            Ok(()) => Ok(()),
            Err(e) => {
                let msg = format!("{e}; the tool did not run");
                tracing::warn!(tool = %p.call.name, error = %e, "checkpoint before a side effect failed");
                self.checkpoint_failed.get_or_insert(msg.clone());
                Err(Finished {
                    status: ToolStatus::Error,
                    content: error_json(&msg, "checkpoint"),
                    reason: Some(msg),
                    duration_ms: None,
                    produced: Vec::new(),
                    images: Vec::new(),
                    stale: Vec::new(),
                })
            }
        }
    }

    /// Awaits a snapshot, sending its progress reports (a long first snapshot) as `progress`
    /// events meanwhile.
    async fn showing_progress<T>(
        &self,
        snapshot: impl std::future::Future<Output = T>,
        mut reports: ProgressWatch,
    ) -> T {
        tokio::pin!(snapshot);
        loop {
            tokio::select! {
                biased;
                r = &mut snapshot => return r,
                changed = reports.changed() => {
                    if changed.is_err() {
                        return snapshot.await;
                    }
                    let report = *reports.borrow_and_update();
                    if let Some((done, total)) = report {
                        self.emit(Event::Progress(Progress {
                            task: "snapshot".into(),
                            done,
                            total,
                        }))
                        .await;
                    }
                }
            }
        }
    }

    /// Records what the call produced; a failure marks the turn failed.
    pub(crate) async fn checkpoint_after(
        &mut self,
        p: &Prepared,
        kind: SideEffect,
        produced: &[String],
    ) {
        let Some(c) = self.inner.checkpointer.clone() else {
            return;
        };
        let turn = self.state.turns;
        if let Err(e) = c.after_side_effect(turn, &p.call.id, produced, kind).await {
            tracing::warn!(tool = %p.call.name, error = %e, "checkpoint after a side effect failed");
            self.checkpoint_failed
                .get_or_insert(format!("{e} (after {})", p.call.name));
        }
    }

    /// Records the turn's end with the checkpointer; a checkpoint failure of the turn (not
    /// reported yet) or of this record makes the turn end with an `error` event.
    pub(crate) async fn end_checkpoint(&mut self, status: TurnStatus, input: &str) -> TurnStatus {
        let mut status = status;
        if let Some(msg) = self.checkpoint_failed.take() {
            self.emit_error(msg, "checkpoint", false, String::new())
                .await;
            status = TurnStatus::Error;
        }
        let Some(c) = self.inner.checkpointer.clone() else {
            return status;
        };
        if let Err(e) = c.turn_end(self.state.turns, input).await {
            tracing::warn!(error = %e, "checkpoint at the end of the turn failed");
            let msg = format!("{e}; this turn's changes could not be recorded for restore");
            self.emit_error(msg, "checkpoint", false, String::new())
                .await;
            status = TurnStatus::Error;
        }
        status
    }
}
