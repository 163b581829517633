//! Test-only helpers for Cairn: a scripted mock LLM server with fault injection and
//! temporary workspaces.
//!
//! The mock speaks OpenAI Chat Completions SSE (`POST /v1/chat/completions`) and the
//! Responses API SSE (`POST /v1/responses`, off by default: it answers 404 until
//! [`MockLlmServer::enable_responses_api`]). Each model request takes the next [`Reply`] of
//! the script; when the script is exhausted the server answers HTTP 500
//! `mock script exhausted`.

mod chat;
mod frame;
mod reply;
mod responses;
mod server;

pub use reply::{openai_error, Fault, Reply};
pub use server::{CapturedRequest, MockLlmServer};

/// A fresh temporary directory to use as a workspace; deleted when dropped.
pub fn temp_workspace() -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new().prefix("cairn-ws-").tempdir()
}
