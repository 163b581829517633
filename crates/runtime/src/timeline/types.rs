//! The timeline as a face shows it: change-turns with their files and line counts, restores
//! and their conflicts, conversation rewinds kept aside.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Lines a change added to and removed from one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct FileChange {
    /// Path relative to the workspace (folders end with `/`).
    pub path: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
}

/// What made a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum CheckpointKind {
    /// An agent turn that changed files.
    Agent,
    /// A restore (undo it by restoring to the checkpoint before it).
    Restore,
    /// The user's own changes since the last checkpoint, recorded by the restore after them.
    User,
    /// A worktree's changes applied to the folder (undo it by restoring to the checkpoint
    /// before it).
    Apply,
}

/// One change-turn of the session: a checkpoint the workspace can be restored to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct CheckpointView {
    /// Change-turn number, from 1 (restore to it to get the state right after it).
    pub turn: u32,
    /// The chat turn (from 1) it happened in.
    pub session_turn: u32,
    /// Agent turn or restore.
    pub kind: CheckpointKind,
    /// The prompt that started it, or what the restore did.
    pub summary: String,
    /// RFC 3339 time it ended.
    pub at: String,
    /// Files it changed.
    pub files: Vec<FileChange>,
    /// For a restore: the checkpoint it went back to.
    pub restored_to: Option<u32>,
    /// For an apply: the worktree's NAME.
    pub applied_from: Option<String>,
}

/// The session's timeline and its changes since it started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct TimelineView {
    /// Change-turns, oldest first.
    pub checkpoints: Vec<CheckpointView>,
    /// Files that differ between the session's start and its last checkpoint.
    pub changes: Vec<FileChange>,
    /// An interrupted restore that must be resolved with `cairn restore --recover`.
    pub pending_restore: Option<String>,
    /// What conversation rewinds removed (kept in the session dir), newest first.
    pub rewinds: Vec<RewindArchiveView>,
}

/// What one conversation rewind removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct RewindArchiveView {
    /// The archive's file name in the session folder.
    pub file: String,
    /// The turn the conversation went back to.
    pub rewound_to_turn: u32,
    /// When (RFC 3339).
    pub at: String,
    /// The removed turns, in order.
    pub turns: Vec<RewoundTurnView>,
}

/// A turn a rewind removed: what the user sent and the answer's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct RewoundTurnView {
    /// Its session turn number.
    pub turn: u32,
    /// The user's input.
    pub input: String,
    /// The assistant's visible text (long answers shortened).
    pub reply: String,
}

/// A restore the page asks for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct RestoreRequest {
    /// Target checkpoint: the state right after this change-turn; 0 = the session's start.
    pub to_turn: u32,
    /// Only these paths (relative to the workspace); empty = every file.
    pub paths: Vec<String>,
    /// Only report what would change.
    pub dry_run: bool,
    /// Also overwrite files the user changed outside the agent's turns (still undoable).
    pub force: bool,
}

/// A path a restore left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ConflictView {
    /// Path relative to the workspace.
    pub path: String,
    /// Why it was kept (the checkpoint store's words).
    pub reason: String,
    /// Whose change it keeps, so a face can word it (and say whether overwriting is offered).
    pub kind: ConflictKind,
}

/// Whose change a restore kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum ConflictKind {
    /// Changed while no agent command ran: the user's (overwriting is offered).
    Outside,
    /// Changed while commands of several sessions ran (overwriting is offered).
    Uncertain,
    /// Another session's (never overwritten).
    OtherSession,
    /// Anything else (unsafe to write, not covered by the checkpoint).
    Other,
}

/// What a restore did or, for a dry run, would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct RestoreView {
    /// Paths written back.
    pub restored: Vec<String>,
    /// Of those, existing files whose content is replaced.
    pub overwritten: Vec<String>,
    /// Paths deleted (absent at the target).
    pub deleted: Vec<String>,
    /// Requested paths that exist neither now nor at the target.
    pub missing: Vec<String>,
    /// Paths changed by the user since the agent's snapshots: kept as they are.
    pub conflicts: Vec<ConflictView>,
    /// Nothing was changed.
    pub dry_run: bool,
    /// The target checkpoint.
    pub to_turn: u32,
    /// The checkpoint recorded for this restore (restore to the one before it to undo).
    pub turn: Option<u32>,
}
