//! The integration tests of `mcp`: one test binary (`cargo test -p cairn-mcp --test all`),
//! one module per topic under `suite/`. Run one topic with a filter, e.g.
//! `cargo test -p cairn-mcp --test all suite::builtin::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod suite;
