//! Multi-file edits: `apply_patch` (the `*** Begin Patch` envelope) and `apply_unified_diff`,
//! both atomic per call.

mod apply;
mod commit;
pub mod envelope;
pub mod model;
mod tool;
pub mod unified;

pub use apply::{apply_hunks, HunkError, TextFile};
pub use model::{FileOp, Hunk, HunkLine, ParseError};
pub use tool::{ApplyPatch, ApplyUnifiedDiff};
