//! Errors of the checkpoint store.

use std::path::PathBuf;

/// Everything that can go wrong in the checkpoint store. None of these ever touch the user's
/// `.git`; a failed operation leaves the store usable.
#[derive(Debug, thiserror::Error)]
pub enum VcsError {
    /// A libgit2 failure inside Cairn's own store.
    #[error("checkpoint store: {0}")]
    Git(#[from] git2::Error),
    /// A file-system failure, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The session id cannot name a file.
    #[error("invalid session id `{0}`: use letters, digits, `-` and `_` only")]
    InvalidSession(String),
    /// A `--path` that is not inside the workspace.
    #[error("`{0}` is not inside the workspace: give a path in it (relative or absolute)")]
    PathOutside(String),
    /// The requested change-turn does not exist.
    #[error("no change-turn {turn}: this session has {count} (valid: {first}..={count})")]
    NoSuchTurn {
        /// The requested number.
        turn: u32,
        /// The lowest valid number: 0 where "before the first change" makes sense, else 1.
        first: u32,
        /// How many change-turns the session has.
        count: u32,
    },
    /// The session has no recorded snapshots at all.
    #[error("session `{0}` has no checkpoints in this workspace (did it change any file with --vcs auto?)")]
    NoCheckpoints(String),
    /// A restore was interrupted; it must be finished or rolled back first.
    #[error("an interrupted {what} (session {session}) is pending in {}: finish it or roll it back first (`cairn restore --session {session} --recover finish|rollback`)", .journal.display())]
    PendingRestore {
        /// The journal file.
        journal: PathBuf,
        /// The session that started it.
        session: String,
        /// Its target change-turn.
        to: u32,
        /// What was interrupted: "restore to turn N" or "apply of worktree NAME".
        what: String,
    },
    /// An apply of a worktree stopped part-way and was rolled back: the folder is as before.
    #[error("the apply of worktree {from} stopped part-way ({source}) and was rolled back: the folder is as it was before; free the cause (disk space, permissions) and apply again")]
    ApplyRolledBack {
        /// The worktree.
        from: String,
        /// Why it stopped.
        #[source]
        source: Box<VcsError>,
    },
    /// An apply of a worktree stopped part-way and could not be rolled back either.
    #[error("the apply of worktree {from} stopped part-way ({source}) and could not be rolled back: the folder is partly applied; free the cause, then finish it or roll it back with `cairn restore --session {session} --recover finish|rollback`")]
    ApplyUnfinished {
        /// The folder session it is a change-turn of.
        session: String,
        /// The worktree.
        from: String,
        /// Why it stopped.
        #[source]
        source: Box<VcsError>,
    },
    /// No interrupted restore to recover.
    #[error("no interrupted restore is pending for this workspace")]
    NothingToRecover,
    /// A store file exists but cannot be parsed.
    #[error("corrupt checkpoint file {}: {reason}", .path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        reason: String,
    },
    /// The workspace folder is not usable.
    #[error("workspace {}: {reason}", .path.display())]
    Workspace {
        /// The folder.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A restore stopped part-way (a path could not be written): the workspace stays half
    /// restored until the restore is finished or rolled back.
    #[error("the restore to turn {to} stopped part-way: {source}. The workspace is partly restored: remove the cause, then finish the restore or roll it back with `cairn restore --session {session} --recover finish|rollback`")]
    Unfinished {
        /// The session restored.
        session: String,
        /// Its target change-turn.
        to: u32,
        /// Why it stopped.
        #[source]
        source: Box<VcsError>,
    },
    /// A restore was stopped by its writer (a crash, or a failure injected by a test).
    #[error("restore interrupted while writing {}: {source}", .path.display())]
    Interrupted {
        /// The path being written.
        path: PathBuf,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
}

/// Result alias for this crate.
pub type Result<T, E = VcsError> = std::result::Result<T, E>;

/// Wraps an I/O error with what was being done.
pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> VcsError {
    let context = context.into();
    move |source| VcsError::Io { context, source }
}
