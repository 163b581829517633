//! Per-session turn records: which change-turns a session made, with the snapshots before and
//! after each, kept in `<store>/sessions/<id>.json` (replaced atomically).

use serde::{Deserialize, Serialize};

use crate::attrib::Foreign;
use crate::walk::Excluded;

/// What produced a change-turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnKind {
    /// An agent turn (tool calls, shell commands).
    #[default]
    Agent,
    /// A `restore` (undo it by restoring to the change-turn before it).
    Restore,
    /// The user's own changes since the last change-turn, recorded when a restore follows
    /// them (so undoing the restore brings them back).
    User,
    /// Cairn applied a worktree's changes to the folder (undo it by restoring to the
    /// change-turn before it).
    Apply,
}

/// One change-turn: a session turn that changed files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnRecord {
    /// Change-turn number, from 1.
    pub turn: u32,
    /// The session's turn number (1-based) it happened in.
    pub session_turn: u32,
    /// Paths changed (folders end with `/`).
    pub files: Vec<String>,
    /// The user's input that started it (first line), or what a restore did.
    pub summary: String,
    /// RFC 3339 time of its end.
    pub at: String,
    /// Snapshot commit before the turn.
    pub before: String,
    /// Snapshot commit after the turn.
    pub after: String,
    /// Agent turn or restore.
    #[serde(default)]
    pub kind: TurnKind,
    /// What was present but not covered when the turn ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<Excluded>,
    /// What was present but not covered when the turn began (its `before` snapshot).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded_before: Vec<Excluded>,
    /// Paths that changed during the turn but are not (only) its own: another session's,
    /// uncertain, or the user's. A restore keeps them (logs from before attribution have
    /// none: every change of a turn counts as its own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<Foreign>,
    /// When the turn's first snapshot started and its last one ended (ms since the epoch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<(i64, i64)>,
    /// For a restore: the checkpoint it went back to (absent in logs from before it was
    /// recorded; [`crate::TurnEntry`] then reads it from the summary).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored_to: Option<u32>,
    /// For an apply: what was applied (the worktree's NAME).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_from: Option<String>,
}

/// What a side-effecting call may change (for attribution).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A file tool: its own changes are the paths it reports.
    File,
    /// A command: what changes during its window may be it.
    Command,
    /// A known read-only command.
    ReadOnly,
}

/// The snapshot closing a command's window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct After {
    pub commit: String,
    /// When that snapshot started and ended.
    pub snap_ms: (i64, i64),
}

/// A snapshot taken before a side effect inside a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Step {
    pub tool: String,
    pub call_id: String,
    pub commit: String,
    /// What the call may change (absent in logs from before attribution).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<StepKind>,
    /// When the snapshot before it started and ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snap_ms: Option<(i64, i64)>,
    /// Its window in the workspace's window registry, while open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// The snapshot after a command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<After>,
    /// Paths a file tool reported as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub produced: Vec<String>,
}

/// A turn in progress: snapshotted before its first side effect, not yet ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Pending {
    pub session_turn: u32,
    pub before: String,
    #[serde(default)]
    pub steps: Vec<Step>,
    /// What the `before` snapshot did not cover.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded_before: Vec<Excluded>,
}

/// Everything recorded for one session in one workspace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionLog {
    pub session_id: String,
    #[serde(default)]
    pub turns: Vec<TurnRecord>,
    #[serde(default)]
    pub pending: Option<Pending>,
    /// Latest snapshot commit of the session (its chain's tip).
    #[serde(default)]
    pub head: Option<String>,
    /// RFC 3339 time of the last change.
    #[serde(default)]
    pub updated_at: String,
}

/// The fast-changing part of a session log, saved on every snapshot without fsync.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PendingFile {
    /// Turn records in the main log when this was written (stale otherwise).
    pub turns: usize,
    pub pending: Option<Pending>,
    pub head: Option<String>,
}

/// First line of a turn's input, shortened for listings.
pub(crate) fn summarize(input: &str) -> String {
    let line = input
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut s: String = line.chars().take(80).collect();
    if line.chars().count() > 80 {
        s.push('…');
    }
    s
}
