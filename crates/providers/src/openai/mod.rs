//! [`OpenAiClient`]: an [`LlmClient`] for OpenAI and any OpenAI-compatible endpoint, over
//! the Responses API (with fallback) or Chat Completions.

pub(crate) mod chat;
mod chat_fast;
mod config;
mod responses;

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use cairn_engine::{LlmChunk, LlmClient, LlmOutcome, LlmRequest};
use futures::stream::BoxStream;
use futures::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::classify::is_parameter_incompatibility;
use crate::error::ProviderError;
use crate::http::{Auth, Failure, Transport, TransportConfig};
use crate::models::{is_non_openai_gateway, is_openai_model};
use crate::reasoning_cache::ReasoningCache;
use crate::stream::{drive, Opened};

use chat::ChatParser;
pub(crate) use config::parse_ms;
pub use config::{
    ApiMode, Compat, OpenAiConfig, DEFAULT_BASE_URL, DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_STREAM_IDLE_TIMEOUT,
};
use responses::ResponsesParser;

/// Which endpoint one request goes to first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Chat,
    Responses { fallback: bool },
}

struct Inner {
    cfg: OpenAiConfig,
    transport: Transport,
    /// Models whose `/responses` answered 404/405: they go straight to chat.
    chat_only: Mutex<HashSet<String>>,
    /// Encrypted reasoning items of Responses replies, replayed with their message.
    reasoning: Arc<ReasoningCache<Vec<Value>>>,
}

/// An LLM client for OpenAI and OpenAI-compatible endpoints (Responses or Chat Completions).
#[derive(Clone)]
pub struct OpenAiClient {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiClient")
            .field("cfg", &self.inner.cfg)
            .finish()
    }
}

impl OpenAiClient {
    /// Builds a client; fails on an invalid base URL, extra header or proxy.
    pub fn new(cfg: OpenAiConfig) -> Result<OpenAiClient, ProviderError> {
        let auth = match &cfg.api_key {
            Some(k) => Auth::Bearer(k.clone()),
            None => Auth::None,
        };
        let transport = Transport::new(TransportConfig {
            base_url: cfg.base(),
            request_timeout: cfg.request_timeout,
            extra_headers: &cfg.extra_headers,
            proxy: cfg.proxy.as_deref(),
            auth,
        })?;
        Ok(OpenAiClient {
            inner: Arc::new(Inner {
                cfg,
                transport,
                chat_only: Mutex::new(HashSet::new()),
                reasoning: Arc::new(ReasoningCache::default()),
            }),
        })
    }

    /// The configuration this client was built with.
    pub fn config(&self) -> &OpenAiConfig {
        &self.inner.cfg
    }

    /// Whether requests for `model` have been switched to Chat Completions after a 404/405.
    pub fn falls_back_to_chat(&self, model: &str) -> bool {
        self.inner.is_chat_only(model)
    }
}

impl Inner {
    fn is_chat_only(&self, model: &str) -> bool {
        self.chat_only
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(model)
    }

    fn plan(&self, model: &str) -> Plan {
        match self.cfg.api_mode {
            ApiMode::Chat => Plan::Chat,
            ApiMode::Responses => Plan::Responses { fallback: false },
            ApiMode::Auto
                if is_openai_model(model)
                    && !is_non_openai_gateway(self.cfg.base())
                    && !self.is_chat_only(model) =>
            {
                Plan::Responses { fallback: true }
            }
            ApiMode::Auto => Plan::Chat,
        }
    }

    async fn open_chat(&self, req: &LlmRequest) -> Result<Opened, LlmOutcome> {
        let body = chat::request_body(req, &self.cfg);
        match self
            .transport
            .post("chat/completions", &body, &[], &req.req_id)
            .await
        {
            Ok(response) => Ok(Opened {
                response,
                parser: Box::new(ChatParser::new(
                    &req.req_id,
                    self.transport.redactor().clone(),
                )),
            }),
            Err(f) => Err(self.transport.outcome(f)),
        }
    }

    /// Connects, choosing the API and falling back from Responses to chat when allowed.
    async fn open(&self, req: LlmRequest) -> Result<Opened, LlmOutcome> {
        let Plan::Responses { fallback } = self.plan(&req.model) else {
            return self.open_chat(&req).await;
        };
        let body = responses::request_body(&req, &self.cfg, &self.reasoning);
        match self
            .transport
            .post("responses", &body, &[], &req.req_id)
            .await
        {
            Ok(response) => Ok(Opened {
                response,
                parser: Box::new(ResponsesParser::new(
                    &req.req_id,
                    self.transport.redactor().clone(),
                    self.reasoning.clone(),
                )),
            }),
            Err(Failure::Http(h)) if fallback && matches!(h.status, 404 | 405) => {
                tracing::info!(model = %req.model, status = h.status,
                    "Responses API not available; using Chat Completions for this model from now on");
                self.chat_only
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(req.model.clone());
                self.open_chat(&req).await
            }
            Err(Failure::Http(h)) if fallback && is_parameter_incompatibility(&h) => {
                tracing::info!(model = %req.model, "Responses request rejected as incompatible; using Chat Completions once");
                self.open_chat(&req).await
            }
            Err(f) => Err(self.transport.outcome(f)),
        }
    }
}

impl LlmClient for OpenAiClient {
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
