//! Cairn's checkpoints: turn-by-turn snapshots of a workspace in a shadow git store kept under
//! the state dir, so every change-turn can be listed, diffed and rolled back (including edits
//! made through the shell), without ever writing to the workspace's own `.git`.
//!
//! [`Vcs`] is the store of one workspace; [`VcsCheckpointer`] plugs it into the engine.

mod attrib;
mod cache;
mod checkpointer;
mod config;
mod diff;
mod error;
mod external;
mod fsops;
mod gc;
mod hash;
mod listing;
mod log;
mod pack;
mod progress;
mod restore;
mod rules;
mod snapshot;
mod store;
mod tracked;
mod tracker;
mod tree;
mod treediff;
mod turns;
mod vcs;
mod walk;
mod windows;

pub use attrib::{Cause, Foreign};
pub use checkpointer::VcsCheckpointer;
pub use config::{VcsConfig, DEFAULT_EXCLUDES};
pub use diff::{FileStat, FileStatus};
pub use error::{Result, VcsError};
pub use external::{Applied, ApplyEdit};
pub use fsops::{FsWriter, TreeWriter};
pub use gc::{GcReport, Usage};
pub use listing::TurnEntry;
pub use log::{StepKind, TurnKind, TurnRecord};
pub use progress::ProgressFn;
pub use restore::{Conflict, RestoreOptions, RestoreReport};
pub use snapshot::TreeSnapshot;
pub use store::{store_dir, workspace_of_session};
pub use vcs::{PendingRestore, Recovery, Vcs};
pub use walk::Excluded;
