//! The former integration-test files, one module each.

mod agents;
mod host;
mod index;
mod project_rules;
mod resume;
mod rewind;
mod sandbox;
mod schema;
mod worktrees;
