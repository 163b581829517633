//! The integration tests of `serve`: one test binary (`cargo test -p cairn-serve --test all`),
//! a real HTTP client against the server in this process (with the scripted mock model), one
//! module per topic under `suite/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
