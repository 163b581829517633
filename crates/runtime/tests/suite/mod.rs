//! The former integration-test files, one module each.

mod agents;
mod host;
mod index;
mod resume;
mod rewind;
mod sandbox;
mod schema;
mod worktrees;
