//! The checkpoint boundary: snapshots of the workspace around side effects, so every turn
//! can be rolled back (including edits made through the shell).

use async_trait::async_trait;

/// What a side-effecting call may change, as far as checkpoints can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SideEffect {
    /// A file tool: it changes exactly the paths it reports as produced.
    FileEdit,
    /// A command (or any other tool): anything may change while it runs.
    Command,
    /// A command known to be read-only: it opens no command window.
    ReadOnlyCommand,
}

/// A checkpoint that could not be stored: the turn ends with an error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("checkpoint failed: {0}")]
pub struct CheckpointError(pub String);

/// Takes workspace snapshots for a session. A failed snapshot is a turn error: the tool it
/// should have protected does not run.
#[async_trait]
pub trait Checkpointer: Send + Sync {
    /// Called after approval, right before a side-effecting tool call runs; an error keeps
    /// the call from running.
    async fn before_side_effect(
        &self,
        turn: u32,
        tool: &str,
        call_id: &str,
        kind: SideEffect,
    ) -> Result<(), CheckpointError>;
    /// Called once that call returned (also when it failed or was interrupted), with the
    /// paths it reported as produced.
    async fn after_side_effect(
        &self,
        _turn: u32,
        _call_id: &str,
        _produced: &[String],
        _kind: SideEffect,
    ) -> Result<(), CheckpointError> {
        Ok(())
    }
    /// Called when a turn ends (whatever its status), before `turn_end` is emitted.
    async fn turn_end(&self, turn: u32, input: &str) -> Result<(), CheckpointError>;
    /// The latest progress report of a long snapshot (entries done, total once known), which
    /// the engine shows as `progress` events while it waits for `before_side_effect`; a new
    /// receiver per wait. Default: no reports.
    fn progress(&self) -> Option<ProgressWatch> {
        None
    }
}

/// A receiver of a checkpointer's latest progress report: (entries done, total when known).
pub type ProgressWatch = tokio::sync::watch::Receiver<Option<(u64, Option<u64>)>>;
