//! The integration tests of `testkit`: one test binary (`cargo test -p cairn-testkit --test all`),
//! one module per topic under `suite/`. Run one topic with a filter, e.g.
//! `cargo test -p cairn-testkit --test all suite::mock_server::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
