//! Test-only helpers for Cairn: a scripted mock LLM server with fault injection and
//! temporary workspaces.
//!
//! The mock speaks OpenAI Chat Completions SSE (`POST /v1/chat/completions`), the
//! Responses API SSE (`POST /v1/responses`, off by default: it answers 404 until
//! [`MockLlmServer::enable_responses_api`]) and the Anthropic Messages API SSE
//! (`POST /v1/messages`). Each model request takes the next [`Reply`] of the script,
//! rendered in the protocol of the endpoint it hit; when the script is exhausted the server
//! answers HTTP 500 `mock script exhausted`. [`Socks5Proxy`] is a minimal SOCKS5 proxy for
//! testing proxied clients. [`child`] runs a test that changes process-wide state in a child
//! process of its own test binary; [`process`] looks at processes (alive, marked, gone).

mod anthropic;
mod chat;
pub mod child;
mod frame;
pub mod git;
pub mod layering;
pub mod long_session;
pub mod naming;
pub mod npm;
pub mod oauth;
pub mod process;
mod reply;
mod responses;
mod server;
mod socks;

pub use reply::{anthropic_error, openai_error, Fault, Reply};
pub use server::{CapturedRequest, MockLlmServer};
pub use socks::Socks5Proxy;

/// A fresh temporary directory to use as a workspace; deleted when dropped.
pub fn temp_workspace() -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new().prefix("cairn-ws-").tempdir()
}

/// The package folder of the running test: cargo's `CARGO_MANIFEST_DIR` at run time, else
/// `built` (pass `env!("CARGO_MANIFEST_DIR")`). A test binary cargo reuses from a clone at
/// another path (one target dir, several clones) still finds this clone's files.
pub fn manifest_dir(built: &str) -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(built))
}
