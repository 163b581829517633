//! The integration tests of `tools`: one test binary (`cargo test -p cairn-tools --test all`),
//! one module per topic under `suite/`. Run one topic with a filter, e.g.
//! `cargo test -p cairn-tools --test all suite::agent_turn::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod suite;
