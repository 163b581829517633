//! The integration tests of `runtime`: one test binary (`cargo test -p cairn-runtime --test all`),
//! one module per topic under `suite/`. Run one topic with a filter, e.g.
//! `cargo test -p cairn-runtime --test all suite::agents::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod suite;
