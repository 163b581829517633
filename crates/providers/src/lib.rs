//! LLM clients for Cairn: OpenAI Responses and Chat Completions, for OpenAI and any
//! OpenAI-compatible endpoint (DeepSeek, OpenRouter, Ollama, LM Studio, …).
//!
//! A client never returns an error to the engine: every request stream ends with exactly one
//! [`cairn_engine::LlmChunk::End`] whose outcome classifies what happened. There are no
//! retries here; the engine loop owns the retry policy.

mod chat;
mod classify;
mod client;
mod config;
mod error;
mod models;
mod parser;
mod redact;
mod responses;
mod stream;

pub use client::OpenAiClient;
pub use config::{
    ApiMode, OpenAiConfig, DEFAULT_BASE_URL, DEFAULT_REQUEST_TIMEOUT, DEFAULT_STREAM_IDLE_TIMEOUT,
};
pub use error::ProviderError;
pub use models::{context_window_for, is_deepseek, is_non_openai_gateway, is_openai_model};
pub use redact::{scrub, REDACTED};
