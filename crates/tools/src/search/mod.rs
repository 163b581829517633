//! Search: the `grep` tool and the walker it shares with `list_files`.

pub mod engine;
mod tool;
pub(crate) mod walk;

pub use engine::{search, FileMatches, GrepError, GrepLine, GrepReport, GrepRequest};
pub use tool::{Grep, DEFAULT_MAX_RESULTS, MAX_RESULTS};
