//! The integration tests of `acp`: one test binary (`cargo test -p cairn-acp --test all`),
//! the agent in this process over in-memory pipes, driven by the SDK's client side against
//! the scripted mock model; one module per topic under `suite/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
