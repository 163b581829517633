//! Errors of worktree operations, split by what the user should do about them.

/// What went wrong; [`WorktreeError::is_usage`] tells a usage error (exit 2) from a refusal.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    /// The request cannot be carried out as asked (unknown NAME, not a git repository, a
    /// worktree Cairn did not create, a deleted worktree folder).
    #[error("{0}")]
    Usage(String),
    /// Refused to protect work (changes neither applied nor committed).
    #[error("{0}")]
    Refused(String),
    /// Refused to remove worktree `name`: `files` hold changes neither applied nor committed.
    #[error(
        "worktree {name} has changes neither applied nor committed: {}; apply them \
         (`cairn worktrees apply {name}`), commit them in the worktree, or remove with \
         --force (its last state stays restorable for {days} days)",
        crate::error::listed(files)
    )]
    Unapplied {
        /// The worktree.
        name: String,
        /// Its files with such changes.
        files: Vec<String>,
        /// How long a forced removal keeps its last state restorable.
        days: i64,
    },
    /// Refused to remove worktree `name`: `files` cannot be kept (each with why).
    #[error(
        "worktree {name} holds what Cairn cannot keep when removing it: {}; move it out of \
         the worktree, or remove with --force to lose it (everything else stays restorable)",
        crate::error::listed(files)
    )]
    NotKept {
        /// The worktree.
        name: String,
        /// What cannot be kept, with why.
        files: Vec<String>,
    },
    /// A libgit2 failure, with what was being done.
    #[error("{context}: {source}")]
    Git {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: git2::Error,
    },
    /// A file-system failure, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A record in Cairn's state dir that cannot be read.
    #[error("{context}: {source}")]
    Record {
        /// Which record.
        context: String,
        /// The parse error.
        #[source]
        source: serde_json::Error,
    },
}

impl WorktreeError {
    /// Whether this is a usage error (the CLI's exit 2) rather than a refusal or failure.
    pub fn is_usage(&self) -> bool {
        matches!(self, WorktreeError::Usage(_))
    }
}

/// The first 20 of `files`, comma-separated, then how many more.
pub fn listed(files: &[String]) -> String {
    let shown: Vec<&str> = files.iter().take(20).map(String::as_str).collect();
    let more = files.len().saturating_sub(shown.len());
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Shorthand for results of this crate.
pub type Result<T> = std::result::Result<T, WorktreeError>;

/// Maps a git2 error to [`WorktreeError::Git`] with `context`.
pub(crate) fn git(context: impl Into<String>) -> impl FnOnce(git2::Error) -> WorktreeError {
    let context = context.into();
    move |source| WorktreeError::Git { context, source }
}

/// Maps an I/O error to [`WorktreeError::Io`] with `context`.
pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> WorktreeError {
    let context = context.into();
    move |source| WorktreeError::Io { context, source }
}
