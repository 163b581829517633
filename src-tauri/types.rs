//! The app's own IPC types: what commands take and return. TypeScript bindings for every
//! type here are generated into `ui/src/bindings/app/` (see `tests/suite/bindings.rs`).

use cairn_protocol::Mode;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

pub use cairn_runtime::attach::ImageUpload;
pub use cairn_runtime::commands::CommandView;
pub use cairn_runtime::extensions::ExtensionsView;
pub use cairn_runtime::face_settings::{Language, RecentWorkspace};
pub use cairn_runtime::host::view::{SandboxView, SessionStatus, SessionView};
pub use cairn_runtime::host::RunOutcome;
pub use cairn_runtime::keys::KeyStatus;
pub use cairn_runtime::llm_setup::{ModelView, PriceView};
pub use cairn_runtime::mcp_view::McpServerView;
pub use cairn_runtime::timeline::types::{
    CheckpointKind, CheckpointView, ConflictKind, ConflictView, FileChange, RestoreRequest,
    RestoreView, RewindArchiveView, RewoundTurnView, TimelineView,
};
pub use cairn_runtime::usage::{FailureRow, UsageReport, UsageRow};
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

/// One row of the sessions board: a session of the workspace and its live state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct BoardRow {
    /// Session id.
    pub id: String,
    /// Display name (may be empty: the UI shows a placeholder).
    pub name: String,
    /// RFC 3339 time of the last save.
    pub updated_at: String,
    /// Turns run.
    pub turns: u32,
    /// Model id.
    pub model: String,
    /// Running, queued, waiting for the user, idle or failed.
    pub activity: cairn_runtime::host::view::SessionActivity,
    /// Files the session changed since it started (from its checkpoints); `None` before
    /// they were counted.
    pub changed_files: Option<u32>,
    /// The git worktree the session works in (its name), when Cairn made one for it.
    pub worktree: Option<String>,
    /// Open in this window (shown or running in the background).
    pub open: bool,
}

/// A session the user asked to see from outside the page (a click on its notification).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct OpenRequestView {
    /// Grows with each request, so the page acts on each once.
    pub seq: u64,
    /// The session to open.
    pub id: String,
}

/// The window's sessions board, newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct BoardView {
    /// Every session of the workspace.
    pub rows: Vec<BoardRow>,
    /// The session the window shows.
    pub viewed: Option<String>,
    /// A session to open now.
    pub open_request: Option<OpenRequestView>,
    /// The git worktrees Cairn made for the workspace's repository (their sessions are
    /// rows of `rows` with their `worktree` set).
    pub worktrees: Vec<WorktreeView>,
    /// Why the workspace cannot have worktrees (not in a git repository, no commit yet).
    pub worktrees_unavailable: Option<String>,
}

/// What applying a worktree to the folder did (or, for a dry run, would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ApplyView {
    /// Nothing was written.
    pub dry_run: bool,
    /// Paths applied (written, removed, or already as in the worktree).
    pub applied: Vec<String>,
    /// Paths left untouched, and why (plain words).
    pub conflicts: Vec<ApplyConflictView>,
    /// The folder session the apply is a change-turn of.
    pub session: Option<String>,
    /// That change-turn (its Undo restores to the one before).
    pub checkpoint: Option<u32>,
}

/// What handing a session over did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct HandoffView {
    /// The new session (the copy, in its new place).
    pub session: String,
    /// Its worktree, or null in the folder.
    pub worktree: Option<String>,
    /// Handed to the folder: the apply of the worktree's changes.
    pub apply: Option<ApplyView>,
}

/// A path an apply left untouched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ApplyConflictView {
    /// Path relative to the folder.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// A commit made on a worktree's branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct CommitView {
    /// The new commit.
    pub commit: String,
    /// The branch.
    pub branch: String,
}

/// What removing a worktree did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct RemovalView {
    /// NAME.
    pub name: String,
    /// Its branch was deleted (it held no commits beyond its base).
    pub branch_deleted: bool,
    /// Commits that kept the branch.
    pub commits_ahead: u32,
    /// Files neither applied nor committed that were removed (restorable for a while).
    pub unapplied: Vec<String>,
}

/// Session permission allowances, for the settings' rules list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct PermissionRules {
    /// Current mode.
    pub mode: Mode,
    /// Tools allowed for the session ("Always allow").
    pub tools: Vec<String>,
    /// Programs allowed for the session (shell "Always allow this command").
    pub commands: Vec<String>,
    /// Directories outside the workspace granted to the session.
    pub directories: Vec<GrantedDirectory>,
    /// Persistent rules (user and project files) in force for the session.
    pub persistent: Vec<PersistentRule>,
}

/// A rule from a permissions file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct PersistentRule {
    /// `allow`, `ask` or `deny`.
    pub decision: String,
    /// The rule as written.
    pub text: String,
    /// Where it comes from.
    pub source: String,
    /// Whether the app can remove it (rules of the user-level file).
    pub revocable: bool,
    /// The project (its folder key) the rule is limited to, for a rule kept by "Always
    /// allow in this project"; `None` = everywhere. Only rules of the current project and
    /// global ones are listed.
    pub project: Option<String>,
}

/// A directory outside the workspace the user granted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct GrantedDirectory {
    /// Absolute path.
    pub path: String,
    /// Writes allowed too.
    pub writable: bool,
}

/// One provider in the settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ProviderView {
    /// Name (also the keyring entry).
    pub id: String,
    /// Shown name.
    pub label: String,
    /// `cloud`, `compatible` (any OpenAI-compatible endpoint) or `local`.
    pub kind: String,
    /// Default endpoint ("" when the user must give one).
    pub default_base_url: String,
    /// Whether requests need a key.
    pub needs_key: bool,
    /// Key state.
    pub key: KeyStatus,
}

/// The settings as the UI edits them.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SettingsView {
    /// Selected provider.
    pub provider: String,
    /// Selected model ("" = none yet).
    pub model: String,
    /// Endpoint override ("" = the provider's default or its environment variable).
    pub base_url: String,
    /// Reasoning level ("" = the model's default).
    pub reasoning: String,
    /// UI language.
    pub language: Language,
    /// Every provider with its key state.
    pub providers: Vec<ProviderView>,
    /// Models of the built-in table.
    pub models: Vec<ModelView>,
    /// MCP servers configured for the open workspace, with their state.
    pub mcp: Vec<McpServerView>,
    /// How many turns may run at once on this machine (every window and `cairn run`).
    pub turn_limit: u32,
}

/// What an endpoint check found: the models it serves, or why it could not be reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct EndpointCheck {
    /// Whether the endpoint answered with a model list.
    pub ok: bool,
    /// The model ids it serves, sorted.
    pub models: Vec<String>,
    /// What failed, for the user.
    pub error: Option<String>,
    /// How long the check took.
    #[ts(type = "number")]
    pub ms: u64,
}

/// A settings change from the UI.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SettingsUpdate {
    /// Provider.
    pub provider: String,
    /// Model.
    pub model: String,
    /// Endpoint override ("" = default).
    pub base_url: String,
    /// Reasoning level ("" = default).
    pub reasoning: String,
    /// UI language.
    pub language: Language,
    /// Turns running at once on this machine (1–64); unchanged when absent.
    #[serde(default)]
    #[ts(optional)]
    pub turn_limit: Option<u32>,
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
