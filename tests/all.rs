//! The desktop app's integration tests without a display, in one test binary: the generated
//! TypeScript bindings check (`suite::bindings`) and the commands through Tauri's IPC layer on
//! the mock runtime (`suite::ipc`). The desktop E2E suite is its own binary (`--test e2e`).
//!
//! Regenerate the app's TypeScript bindings with
//! `CAIRN_UPDATE_BINDINGS=1 cargo test -p cairn-app --features custom-protocol --test all suite::bindings`
//! (the engine's: the same with `-p cairn-protocol` and without the feature).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
