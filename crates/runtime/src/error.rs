//! The runtime's error for assembling a session: all of it is the user's configuration to
//! fix (the CLI's exit code 2).

use crate::store::StoreError;

/// Errors assembling a session; all are the user's configuration to fix (CLI exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// A bad or missing option.
    #[error("{0}")]
    Config(String),
    /// Session files could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The workspace asked for is, or is inside, a repository's git directory.
    #[error(transparent)]
    GitDir(#[from] crate::git_dir::GitDirRefusal),
}
