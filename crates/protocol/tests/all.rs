//! The integration tests of `protocol`: one test binary (`cargo test -p cairn-protocol --test all`),
//! one module per topic under `suite/`. Run one topic with a filter, e.g.
//! `cargo test -p cairn-protocol --test all suite::bindings::`.
//!
//! Regenerate the TypeScript bindings in `ui/src/bindings/` with
//! `CAIRN_UPDATE_BINDINGS=1 cargo test -p cairn-protocol --test all suite::bindings`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
