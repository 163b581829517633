//! The integration tests of `secrets`: one test binary (`cargo test -p cairn-secrets --test all`),
//! one module per topic under `suite/`. Run one topic with a filter, e.g.
//! `cargo test -p cairn-secrets --test all suite::keyring::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
