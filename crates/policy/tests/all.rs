//! The integration tests of `policy`: one test binary (`cargo test -p cairn-policy --test all`),
//! one module per topic under `suite/`. Run one topic with a filter, e.g.
//! `cargo test -p cairn-policy --test all suite::nested_protected::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod suite;
