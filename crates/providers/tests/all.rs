//! The integration tests of `providers`: one test binary (`cargo test -p cairn-providers --test all`),
//! one module per topic under `suite/`. Run one topic with a filter, e.g.
//! `cargo test -p cairn-providers --test all suite::audit::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod suite;
