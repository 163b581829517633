//! LLM clients for Cairn: OpenAI (Responses with Chat Completions fallback), any
//! OpenAI-compatible endpoint (DeepSeek, OpenRouter, Ollama, LM Studio, Gemini's endpoint)
//! and the Anthropic Messages API, built from a [`ProviderSpec`] by [`build_client`].
//!
//! A client never returns an error to the engine: every request stream ends with exactly one
//! [`cairn_engine::LlmChunk::End`] whose outcome classifies what happened (one classifier for
//! every provider, in `classify`). There are no retries here; the engine loop owns the
//! retry policy. Decorators add session-wide unique tool-call ids ([`UniqueToolCallIds`])
//! and a request audit log ([`AuditLog`]) to any client. The model table
//! (`data/models.toml`) gives context windows, capabilities and prices ([`cost_usd`]).

mod answer;
mod anthropic;
mod args;
mod audit;
mod catalog;
mod classify;
mod endpoint;
mod errinfo;
mod error;
mod factory;
mod fastjson;
mod http;
mod ids;
mod models;
mod openai;
mod parser;
mod presets;
mod reasoning_cache;
mod redact;
mod shape;
mod sse;
mod stream;
mod thinking;

pub use anthropic::{AnthropicClient, AnthropicConfig, ANTHROPIC_BASE_URL, ANTHROPIC_VERSION};
pub use audit::{AuditLog, AuditMeta};
pub use catalog::{
    context_window_for, cost_usd, model_info, ModelCatalog, ModelEntry, ModelInfo, Pricing,
    ThinkingStyle, UNKNOWN_CONTEXT_WINDOW,
};
pub use endpoint::{list_models, parse_models, EndpointError, CHECK_TIMEOUT};
pub use error::ProviderError;
pub use factory::{build_client, ProviderSpec, Resolved};
pub use ids::{ToolCallIds, UniqueToolCallIds};
pub use models::{is_deepseek, is_non_openai_gateway, is_openai_model};
pub use openai::{
    ApiMode, Compat, OpenAiClient, OpenAiConfig, DEFAULT_BASE_URL, DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_STREAM_IDLE_TIMEOUT,
};
pub use presets::{preset, ClientType, ProviderPreset, PRESETS};
pub use redact::{scrub, REDACTED};
pub use thinking::ThinkingLevel;

/// API keys (re-exported so hosts that build clients need no second dependency).
pub use cairn_secrets as secrets;
