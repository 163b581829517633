//! Integration tests of cairn-worktree, with real git repositories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
