//! [`OpenAiClient`]: an [`LlmClient`] for any OpenAI-compatible endpoint.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};

use cairn_engine::{LlmChunk, LlmClient, LlmOutcome, LlmRequest, OutcomeStatus};
use futures::stream::BoxStream;
use futures::FutureExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT};
use tokio_util::sync::CancellationToken;

use crate::chat::{self, ChatParser};
use crate::classify::{
    display_base, is_parameter_incompatibility, outcome_for_http, outcome_for_transport,
    parse_retry_after, HttpFailure,
};
use crate::config::{ApiMode, OpenAiConfig};
use crate::error::ProviderError;
use crate::models::{is_non_openai_gateway, is_openai_model};
use crate::redact::Redactor;
use crate::responses::{self, ResponsesParser};
use crate::stream::{drive, Opened};

/// Most bytes of an error body that are read.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Which endpoint one request goes to first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plan {
    Chat,
    Responses { fallback: bool },
}

/// Why a POST did not produce a streamable response.
enum Failure {
    /// The server answered with an error status.
    Http(HttpFailure),
    /// No usable answer (timeout, network); already an outcome.
    Outcome(LlmOutcome),
}

struct Inner {
    cfg: OpenAiConfig,
    http: reqwest::Client,
    redactor: Redactor,
    /// Models whose `/responses` answered 404/405: they go straight to chat.
    chat_only: Mutex<HashSet<String>>,
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
    /// Builds a client; fails on an invalid base URL or extra header.
    pub fn new(cfg: OpenAiConfig) -> Result<OpenAiClient, ProviderError> {
        let url = reqwest::Url::parse(cfg.base()).map_err(|e| {
            ProviderError::InvalidConfig(format!("base URL `{}`: {e}", display_base(cfg.base())))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ProviderError::InvalidConfig(format!(
                "base URL must be http or https, not `{}`",
                url.scheme()
            )));
        }
        let mut headers = HeaderMap::new();
        for (k, v) in &cfg.extra_headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| ProviderError::InvalidConfig(format!("invalid header name `{k}`")))?;
            let mut value = HeaderValue::from_str(v).map_err(|_| {
                ProviderError::InvalidConfig(format!("invalid value for header `{k}`"))
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let http = reqwest::Client::builder()
            .connect_timeout(cfg.request_timeout)
            .default_headers(headers)
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()?;
        let secret_headers = cfg
            .extra_headers
            .iter()
            .filter(|(k, _)| is_secret_header(k))
            .map(|(_, v)| v);
        let secrets = cfg.api_key.iter().chain(secret_headers);
        let redactor = Redactor::new(secrets.map(String::as_str));
        Ok(OpenAiClient {
            inner: Arc::new(Inner {
                cfg,
                http,
                redactor,
                chat_only: Mutex::new(HashSet::new()),
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

    /// POSTs a streaming request; a non-2xx answer comes back with its body read.
    async fn post(
        &self,
        path: &str,
        body: &serde_json::Value,
        req_id: &str,
    ) -> Result<reqwest::Response, Failure> {
        let url = format!("{}/{path}", self.cfg.base());
        tracing::debug!(req_id, %url, model = %body["model"], "sending LLM request");
        let mut rb = self
            .http
            .post(&url)
            .header(ACCEPT, "text/event-stream")
            .json(body);
        if let Some(key) = &self.cfg.api_key {
            rb = rb.bearer_auth(key);
        }
        let resp = match tokio::time::timeout(self.cfg.request_timeout, rb.send()).await {
            Err(_) => {
                return Err(Failure::Outcome(LlmOutcome::new(
                    OutcomeStatus::Timeout,
                    Some(format!(
                        "no response from {} within {} ms",
                        display_base(self.cfg.base()),
                        self.cfg.request_timeout.as_millis()
                    )),
                )))
            }
            Ok(Err(e)) => {
                return Err(Failure::Outcome(outcome_for_transport(
                    &e,
                    self.cfg.base(),
                    &self.redactor,
                )))
            }
            Ok(Ok(resp)) => resp,
        };
        if resp.status().is_success() {
            return Ok(resp);
        }
        let status = resp.status().as_u16();
        let retry_after = parse_retry_after(resp.headers());
        let body = tokio::time::timeout(self.cfg.request_timeout, read_limited(resp))
            .await
            .unwrap_or_default();
        tracing::debug!(req_id, status, "LLM request rejected");
        Err(Failure::Http(HttpFailure {
            status,
            retry_after,
            body,
        }))
    }

    fn fail(&self, f: Failure) -> LlmOutcome {
        match f {
            Failure::Http(h) => outcome_for_http(
                &h,
                self.cfg.base(),
                self.cfg.api_key.is_some(),
                &self.redactor,
            ),
            Failure::Outcome(o) => o,
        }
    }

    async fn open_chat(&self, req: &LlmRequest) -> Result<Opened, LlmOutcome> {
        let body = chat::request_body(req, self.cfg.base());
        match self.post("chat/completions", &body, &req.req_id).await {
            Ok(response) => Ok(Opened {
                response,
                parser: Box::new(ChatParser::new(&req.req_id, self.redactor.clone())),
            }),
            Err(f) => Err(self.fail(f)),
        }
    }

    /// Connects, choosing the API and falling back from Responses to chat when allowed.
    async fn open(&self, req: LlmRequest) -> Result<Opened, LlmOutcome> {
        let Plan::Responses { fallback } = self.plan(&req.model) else {
            return self.open_chat(&req).await;
        };
        let body = responses::request_body(&req);
        match self.post("responses", &body, &req.req_id).await {
            Ok(response) => Ok(Opened {
                response,
                parser: Box::new(ResponsesParser::new(&req.req_id, self.redactor.clone())),
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
            Err(f) => Err(self.fail(f)),
        }
    }
}

/// Whether an extra header carries a credential (its value is then scrubbed from messages).
fn is_secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["key", "auth", "token", "secret", "cookie"]
        .iter()
        .any(|w| n.contains(w))
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of a body as text; a read failure keeps what arrived.
async fn read_limited(mut resp: reqwest::Response) -> String {
    let mut buf = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        buf.extend_from_slice(&chunk);
        if buf.len() >= MAX_ERROR_BODY {
            buf.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
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
            self.inner.redactor.clone(),
            req_id,
        )
    }
}
