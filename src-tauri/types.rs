//! The app's own IPC types: what commands take and return. TypeScript bindings for every
//! type here are generated into `ui/src/bindings/app/` (see `tests/suite/bindings.rs`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

pub use crate::dialogs::CardRect;
pub use cairn_runtime::attach::ImageUpload;
pub use cairn_runtime::commands::CommandView;
pub use cairn_runtime::doctor::{CheckRow, CheckStatus};
pub use cairn_runtime::extensions::ExtensionsView;
pub use cairn_runtime::face_settings::{Language, RecentWorkspace};
pub use cairn_runtime::host::board::{BoardRow, BoardView, OpenRequestView};
pub use cairn_runtime::host::budget::{BudgetLimit, BudgetView};
pub use cairn_runtime::host::rules_view::{GrantedDirectory, PermissionRules, PersistentRule};
pub use cairn_runtime::host::view::{SandboxView, SessionStatus, SessionView};
pub use cairn_runtime::host::RunOutcome;
pub use cairn_runtime::keys::{KeyStatus, ProviderView};
pub use cairn_runtime::llm_setup::{ModelView, PriceView};
pub use cairn_runtime::mcp_view::McpServerView;
pub use cairn_runtime::settings_view::{EndpointCheck, SettingsUpdate, SettingsView};
pub use cairn_runtime::timeline::types::{
    CheckpointKind, CheckpointView, ConflictKind, ConflictView, FileChange, RestoreRequest,
    RestoreView, RewindArchiveView, RewoundTurnView, TimelineView,
};
pub use cairn_runtime::usage::{FailureRow, UsageReport, UsageRow};
pub use cairn_runtime::vault::{Stored, VaultEntry, VaultView};
pub use cairn_runtime::worktrees::faces::{
    ApplyConflictView, ApplyView, CommitView, HandoffView, RemovalView,
};
pub use cairn_runtime::worktrees::{
    ReviewComment, ReviewFile, ReviewStatus, ReviewView, UpdateView, WorktreeDiskView, WorktreeView,
};

/// What the UI shows in its header: product name, app version and protocol version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct AppInfo {
    /// Product name ("Cairn").
    pub name: String,
    /// App version (the Cargo package version).
    pub version: String,
    /// [`cairn_protocol::PROTOCOL_VERSION`] this build speaks.
    pub protocol_version: u32,
}

/// Who answers approvals in this run of the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum ApprovalHost {
    /// A native modal dialog, and the in-chat card (whichever answers first).
    Native,
    /// Only the in-chat card (test hook `CAIRN_TEST_APPROVER=ui`).
    Ui,
    /// Every request is allowed once (test hook `CAIRN_TEST_APPROVER=allow`).
    Allow,
    /// Every request is denied (test hook `CAIRN_TEST_APPROVER=deny`).
    Deny,
}

/// Everything the UI needs at start.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct Bootstrap {
    /// Name and versions.
    pub info: AppInfo,
    /// Current settings.
    pub settings: SettingsView,
    /// Recently opened workspaces, newest first.
    pub recent: Vec<RecentWorkspace>,
    /// The state dir shared with the CLI.
    pub state_dir: String,
    /// Where the rotating log files are.
    pub log_dir: String,
    /// Who answers approvals.
    pub approvals: ApprovalHost,
    /// The app runs its start-up benchmark (`CAIRN_BENCH=1`).
    pub bench: bool,
    /// The workspace this window has open, if any (after a page reload).
    pub workspace: Option<WorkspaceView>,
}

/// An open workspace and its sessions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct WorkspaceView {
    /// Absolute, canonical path.
    pub path: String,
    /// Folder name.
    pub name: String,
    /// Sessions of this workspace, newest first.
    pub sessions: Vec<SessionEntry>,
    /// The session shown last in this workspace (one of `sessions`), reopened with it.
    pub last_session: Option<String>,
}

/// One row of the sessions sidebar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SessionEntry {
    /// Session id.
    pub id: String,
    /// Display name (may be empty: the UI shows a placeholder).
    pub name: String,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last save.
    pub updated_at: String,
    /// Turns run.
    pub turns: u32,
    /// Model id.
    pub model: String,
}

/// Whose terminal a panel tab shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum TerminalKind {
    /// The user's own shell (the agent can read it with `terminal_read`).
    User,
    /// A command session the agent started (`exec_command`); the user can answer its prompts.
    Agent,
}

/// A tab of the terminal panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct TerminalTab {
    /// Terminal id (`term-N`) or command session id (`cmd-N`).
    pub id: String,
    /// The shell's name or the agent's command line.
    pub title: String,
    /// The user's terminal or an agent command session.
    pub kind: TerminalKind,
    /// Whether its program still runs.
    pub running: bool,
}

/// What a conversation rewind did, and the session as the page shows it afterwards.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct RewindView {
    /// The session turn the conversation went back to (kept).
    pub turn: u32,
    /// The session turns removed from the history and the transcript.
    pub removed_turns: Vec<u32>,
    /// How many history messages were removed.
    pub removed_messages: u32,
    /// The file in the session dir that keeps the removed messages and events (`None` when
    /// nothing was removed).
    pub archive: Option<String>,
    /// The session after the rewind (its transcript holds only the kept turns).
    pub session: SessionView,
}

pub use cairn_runtime::workspace::types::{
    DirListing, FileEntry, FileIndex, FilesEvent, WatchStatus,
};
