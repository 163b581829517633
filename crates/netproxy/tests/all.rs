//! The network proxy's integration tests (one binary): `cargo test -p cairn-netproxy --test all`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
