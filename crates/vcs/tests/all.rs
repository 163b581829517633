//! The integration tests of `vcs`: one test binary (`cargo test -p cairn-vcs --test all`),
//! one module per topic under `suite/`. Run one topic with a filter, e.g.
//! `cargo test -p cairn-vcs --test all suite::checkpoints::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod suite;
