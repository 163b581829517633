//! [`AnthropicClient`]: the Anthropic Messages API (`POST /v1/messages`, streamed).

mod parser;
mod request;

use std::sync::Arc;
use std::time::Duration;

use cairn_engine::{LlmChunk, LlmClient, LlmOutcome, LlmRequest};
use futures::stream::BoxStream;
use futures::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::catalog::ModelCatalog;
use crate::error::ProviderError;
use crate::http::{Auth, Transport, TransportConfig};
use crate::reasoning_cache::ReasoningCache;
use crate::stream::{drive, Opened};
use crate::thinking::{request_level, ThinkingLevel};

pub(crate) use parser::AnthropicParser;

/// Default base URL (the `/messages` path is appended).
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";
/// The API version header value.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// One remembered content block of an assistant reply.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    /// A thinking block and its signature.
    Thinking { text: String, signature: String },
    /// A redacted thinking block's opaque data.
    Redacted(String),
    /// A text block.
    Text(String),
    /// The tool call at this index of the message's calls.
    ToolUse(usize),
}

/// What is remembered about a reply: its blocks in order and the thinking configuration of
/// the request that produced it (`Null` = off).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cached {
    pub blocks: Vec<Block>,
    pub thinking: Value,
}

/// Settings of an [`AnthropicClient`].
#[derive(Clone)]
pub struct AnthropicConfig {
    /// Endpoint base including `/v1` (a bare host gets `/v1` appended).
    pub base_url: String,
    /// API key sent as `x-api-key`.
    pub api_key: Option<String>,
    /// Time allowed to connect and receive response headers.
    pub request_timeout: Duration,
    /// Longest silence allowed inside a streamed response.
    pub stream_idle_timeout: Duration,
    /// Extra headers sent with every request (e.g. `anthropic-beta`).
    pub extra_headers: Vec<(String, String)>,
    /// `SOCKS5_PROXY` value (`host:port` or `socks5h://…`).
    pub proxy: Option<String>,
    /// Thinking level when a request names none.
    pub thinking_level: Option<ThinkingLevel>,
    /// Cap on the tokens of one answer; `None` = the model's (`max_tokens` of the model table
    /// for Anthropic, nothing sent for OpenAI-family endpoints).
    pub max_output_tokens: Option<u64>,
    /// Mark the system prompt, tools and stable history prefix for prompt caching.
    pub prompt_caching: bool,
    /// Model capabilities (output cap, thinking style).
    pub catalog: Arc<ModelCatalog>,
}

impl Default for AnthropicConfig {
    fn default() -> Self {
        AnthropicConfig {
            base_url: ANTHROPIC_BASE_URL.to_string(),
            api_key: None,
            request_timeout: crate::DEFAULT_REQUEST_TIMEOUT,
            stream_idle_timeout: crate::DEFAULT_STREAM_IDLE_TIMEOUT,
            extra_headers: Vec::new(),
            proxy: None,
            thinking_level: None,
            max_output_tokens: None,
            prompt_caching: true,
            catalog: Arc::new(ModelCatalog::builtin().clone()),
        }
    }
}

impl std::fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = self.api_key.as_ref().map(|_| "[redacted]");
        let headers: Vec<&str> = self.extra_headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("AnthropicConfig")
            .field("base_url", &crate::classify::display_base(&self.base_url))
            .field("api_key", &key)
            .field("request_timeout", &self.request_timeout)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("extra_headers", &headers)
            .field("proxy", &self.proxy.as_ref().map(|_| "[set]"))
            .field("thinking_level", &self.thinking_level)
            .field("prompt_caching", &self.prompt_caching)
            .finish()
    }
}

impl AnthropicConfig {
    /// A default configuration for this base URL and key.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        AnthropicConfig {
            base_url: base_url.into(),
            api_key,
            ..AnthropicConfig::default()
        }
    }
}

/// `base` with `/v1` appended when it is a bare host.
fn with_version_path(base: &str) -> String {
    let trimmed = base.trim().trim_end_matches('/');
    match reqwest::Url::parse(trimmed) {
        Ok(url) if url.path().is_empty() || url.path() == "/" => format!("{trimmed}/v1"),
        _ => trimmed.to_string(),
    }
}

struct Inner {
    cfg: AnthropicConfig,
    transport: Transport,
    cache: Arc<ReasoningCache<Cached>>,
}

/// An LLM client for the Anthropic Messages API.
#[derive(Clone)]
pub struct AnthropicClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicClient")
            .field("cfg", &self.inner.cfg)
            .finish()
    }
}

impl AnthropicClient {
    /// Builds a client; fails on an invalid base URL, header or proxy.
    pub fn new(cfg: AnthropicConfig) -> Result<AnthropicClient, ProviderError> {
        let base = with_version_path(&cfg.base_url);
        let auth = match &cfg.api_key {
            Some(k) => Auth::Header("x-api-key", k.clone()),
            None => Auth::None,
        };
        let transport = Transport::new(TransportConfig {
            base_url: &base,
            request_timeout: cfg.request_timeout,
            extra_headers: &cfg.extra_headers,
            proxy: cfg.proxy.as_deref(),
            auth,
        })?;
        Ok(AnthropicClient {
            inner: Arc::new(Inner {
                cfg,
                transport,
                cache: Arc::new(ReasoningCache::default()),
            }),
        })
    }

    /// The configuration this client was built with.
    pub fn config(&self) -> &AnthropicConfig {
        &self.inner.cfg
    }
}

impl Inner {
    async fn open(&self, req: LlmRequest) -> Result<Opened, LlmOutcome> {
        let mut info = self.cfg.catalog.lookup(&req.model);
        if let Some(n) = self.cfg.max_output_tokens {
            info.max_output = Some(n);
        }
        let level = request_level(req.reasoning_effort, self.cfg.thinking_level);
        let built = request::request_body(&req, &info, level, self.cfg.prompt_caching, &self.cache);
        let headers = [("anthropic-version", ANTHROPIC_VERSION)];
        match self
            .transport
            .post("messages", &built.body, &headers, &req.req_id)
            .await
        {
            Ok(response) => Ok(Opened {
                response,
                parser: Box::new(AnthropicParser::new(
                    &req.req_id,
                    self.transport.redactor().clone(),
                    self.cache.clone(),
                    built.thinking,
                )),
            }),
            Err(f) => Err(self.transport.outcome(f)),
        }
    }
}

impl LlmClient for AnthropicClient {
    fn stream(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxStream<'static, LlmChunk> {
        let inner = self.inner.clone();
        let req_id = request.req_id.clone();
        let open = async move { inner.open(request).await }.boxed();
        drive(
            open,
            cancel,
            self.inner.cfg.stream_idle_timeout,
            self.inner.transport.redactor().clone(),
            req_id,
        )
    }

    fn secrets(&self) -> Vec<String> {
        self.inner.cfg.api_key.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_hosts_get_the_version_path() {
        assert_eq!(
            with_version_path("https://api.anthropic.com"),
            "https://api.anthropic.com/v1"
        );
        assert_eq!(
            with_version_path("https://api.anthropic.com/"),
            "https://api.anthropic.com/v1"
        );
        assert_eq!(
            with_version_path("http://127.0.0.1:9/v1/"),
            "http://127.0.0.1:9/v1"
        );
        assert_eq!(
            with_version_path("https://gw.test/anthropic"),
            "https://gw.test/anthropic"
        );
    }

    #[test]
    fn debug_never_prints_secrets() {
        let mut cfg = AnthropicConfig::new("https://u:pw@x.test/v1", Some("sk-ant-secret".into()));
        cfg.proxy = Some("socks5h://user:proxypw@p.test:1080".into());
        let s = format!("{cfg:?}");
        assert!(
            !s.contains("sk-ant-secret") && !s.contains("proxypw") && !s.contains("pw@"),
            "{s}"
        );
    }
}
