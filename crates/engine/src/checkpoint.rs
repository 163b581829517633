//! The checkpoint boundary: snapshots of the workspace around side effects, so every turn
//! can be rolled back (including edits made through the shell).

use async_trait::async_trait;

/// Takes workspace snapshots for a session. Failures are the implementation's to report
/// (log, event); they never stop a turn.
#[async_trait]
pub trait Checkpointer: Send + Sync {
    /// Called after approval, right before a side-effecting tool call runs.
    async fn before_side_effect(&self, turn: u32, tool: &str, call_id: &str);
    /// Called when a turn ends (whatever its status), before `turn_end` is emitted.
    async fn turn_end(&self, turn: u32, input: &str);
}
