//! The LLM client contract: a stream of partial output that always ends with an outcome.
//!
//! A client never returns an error to the loop. Whatever happens (HTTP error, dropped stream,
//! malformed chunk, idle timeout, cancellation) it ends the stream with exactly one
//! [`LlmChunk::End`] carrying an [`LlmOutcome`]; the loop owns the retry policy.

use std::time::Duration;

use cairn_protocol::{Message, TokenUsage, ToolCall, ToolSchema};
use futures::stream::BoxStream;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

/// Terminal state of one LLM request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeStatus {
    /// Finished normally.
    Completed,
    /// Request timed out, stream stalled or the connection dropped: retry.
    Timeout,
    /// The response could not be parsed: retry.
    Malformed,
    /// Cancelled by the user: stop.
    Aborted,
    /// Any other failure (5xx, 429, 400, ...): retried by policy, reported honestly.
    Failed,
    /// Credentials rejected (401/403): stop the turn at once.
    Auth,
}

impl OutcomeStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeStatus::Completed => "completed",
            OutcomeStatus::Timeout => "timeout",
            OutcomeStatus::Malformed => "malformed",
            OutcomeStatus::Aborted => "aborted",
            OutcomeStatus::Failed => "failed",
            OutcomeStatus::Auth => "auth",
        }
    }
}

/// Finer classification of a failure, used by the loop's retry policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// 429: honour `retry_after` when given.
    RateLimited,
    /// 5xx from the provider.
    Server,
    /// The prompt does not fit the model's context window.
    ContextOverflow,
    /// 4xx other than auth/rate limit: the request itself is wrong.
    BadRequest,
    /// Network-level failure (connect refused, reset, DNS).
    Network,
    /// The account's quota or credits are used up: no retry helps until the user acts.
    QuotaExhausted,
}

/// How an LLM request ended; `message` never contains a credential.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmOutcome {
    /// Terminal state.
    pub status: OutcomeStatus,
    /// Human-readable detail of a failure.
    pub message: Option<String>,
    /// Finer failure classification.
    pub kind: Option<FailureKind>,
    /// HTTP status, when there was one.
    pub http_status: Option<u16>,
    /// Server-requested wait before retrying (`Retry-After`).
    pub retry_after: Option<Duration>,
}

impl LlmOutcome {
    /// A successful outcome.
    pub fn completed() -> Self {
        Self::new(OutcomeStatus::Completed, None)
    }

    /// An outcome with a status and optional message.
    pub fn new(status: OutcomeStatus, message: Option<String>) -> Self {
        LlmOutcome {
            status,
            message,
            kind: None,
            http_status: None,
            retry_after: None,
        }
    }

    /// Sets the failure kind.
    pub fn with_kind(mut self, kind: FailureKind) -> Self {
        self.kind = Some(kind);
        self
    }

    /// Sets the HTTP status.
    pub fn with_http_status(mut self, status: u16) -> Self {
        self.http_status = Some(status);
        self
    }

    /// Sets the server-requested retry delay.
    pub fn with_retry_after(mut self, d: Option<Duration>) -> Self {
        self.retry_after = d;
        self
    }

    /// A short description for events and logs.
    pub fn describe(&self) -> String {
        let mut s = self.status.as_str().to_string();
        if let Some(code) = self.http_status {
            s.push_str(&format!(" (HTTP {code})"));
        }
        if let Some(m) = &self.message {
            s.push_str(": ");
            s.push_str(m);
        }
        s
    }
}

/// One item of an LLM response stream.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmChunk {
    /// Visible text increment.
    Text(String),
    /// Reasoning text increment.
    Reasoning(String),
    /// A complete, assembled tool call.
    ToolCall(ToolCall),
    /// Token usage for the whole response.
    Usage(TokenUsage),
    /// The last item: how the request ended.
    End(LlmOutcome),
}

/// Reasoning effort requested from models that support it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningEffort {
    Low,
    Medium,
    High,
}

impl ReasoningEffort {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasoningEffort::Low => "low",
            ReasoningEffort::Medium => "medium",
            ReasoningEffort::High => "high",
        }
    }
}

/// The `req_id` prefix of a session-naming request (a cheap side request, not a turn's).
pub const NAMING_REQ_PREFIX: &str = "naming-";

/// One request to the model.
#[derive(Debug, Clone)]
pub struct LlmRequest {
    /// Model id.
    pub model: String,
    /// Full history, system message first.
    pub messages: Vec<Message>,
    /// Tools the model may call (empty = no tools).
    pub tools: Vec<ToolSchema>,
    /// Optional reasoning effort.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Request id for logs and events.
    pub req_id: String,
}

/// Prices token usage (the model capability table lives with the providers).
pub trait Pricing: Send + Sync {
    /// Cost in USD of `usage` on `model`; `None` when the price is unknown.
    fn cost_usd(&self, model: &str, usage: &TokenUsage) -> Option<f64>;
}

/// An LLM client: streams one response per request and never fails out of band.
pub trait LlmClient: Send + Sync {
    /// Starts a request. The stream yields partial output and ends with exactly one
    /// [`LlmChunk::End`]; cancelling `cancel` must end it promptly with `Aborted`.
    fn stream(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxStream<'static, LlmChunk>;

    /// Credentials this client sends (API keys). The session scrubs them from everything
    /// tools return, so the model, the events and the session files never hold them.
    /// Wrappers forward their inner client's.
    fn secrets(&self) -> Vec<String> {
        Vec::new()
    }
}

/// A one-shot answer's text (reasoning and tool calls ignored) once the stream completed; how
/// it ended otherwise (`None`: it ended without an outcome).
pub async fn answer_text(stream: BoxStream<'_, LlmChunk>) -> Result<String, Option<LlmOutcome>> {
    answer_text_and_usage(stream).await.0
}

/// [`answer_text`], plus the tokens the request used (billed even when it failed).
pub async fn answer_text_and_usage(
    mut stream: BoxStream<'_, LlmChunk>,
) -> (Result<String, Option<LlmOutcome>>, Option<TokenUsage>) {
    use futures::StreamExt;
    let mut text = String::new();
    let mut usage = None;
    while let Some(chunk) = stream.next().await {
        match chunk {
            LlmChunk::Text(t) => text.push_str(&t),
            LlmChunk::Usage(u) => usage = Some(u),
            LlmChunk::End(o) if o.status == OutcomeStatus::Completed => return (Ok(text), usage),
            LlmChunk::End(o) => return (Err(Some(o)), usage),
            _ => {}
        }
    }
    (Err(None), usage)
}

#[cfg(test)]
mod answer_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use futures::StreamExt;

    fn run(chunks: Vec<LlmChunk>) -> Result<String, Option<LlmOutcome>> {
        futures::executor::block_on(answer_text(futures::stream::iter(chunks).boxed()))
    }

    #[test]
    fn text_of_a_completed_answer_and_how_others_ended() {
        let done = LlmOutcome::new(OutcomeStatus::Completed, None);
        let failed = LlmOutcome::new(OutcomeStatus::Failed, Some("boom".into()));
        assert_eq!(
            run(vec![
                LlmChunk::Reasoning("hm".into()),
                LlmChunk::Text("a".into()),
                LlmChunk::Text("b".into()),
                LlmChunk::End(done),
                LlmChunk::Text("after the end".into()),
            ]),
            Ok("ab".into())
        );
        assert_eq!(
            run(vec![
                LlmChunk::Text("a".into()),
                LlmChunk::End(failed.clone())
            ]),
            Err(Some(failed))
        );
        assert_eq!(run(vec![LlmChunk::Text("a".into())]), Err(None));
    }
}
