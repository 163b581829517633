//! One LLM call of a turn: streaming its deltas, retries with backoff, compaction after a
//! context overflow, and the error the turn ends with when it gives up.

use cairn_protocol::{Event, LlmRequest as LlmRequestEvent, LlmRetry, TokenUsage, ToolCall};
use futures::StreamExt;

use super::{dedupe_call_ids, now, TurnRunner};
use crate::llm::{FailureKind, LlmChunk, LlmOutcome, LlmRequest, OutcomeStatus};
use crate::locks::read;
use crate::retry::RetryPolicy;

/// Result of one LLM call (after retries).
pub(super) enum LlmResult {
    /// A complete reply.
    Reply {
        text: String,
        reasoning: String,
        tool_calls: Vec<ToolCall>,
        usage: Option<TokenUsage>,
        req_id: String,
    },
    /// Interrupted while streaming; partial text kept.
    Interrupted { partial: String, req_id: String },
    /// Gave up; the error event was emitted.
    Failed,
}

impl TurnRunner<'_> {
    /// One LLM call with the retry policy applied.
    pub(super) async fn call_llm(&mut self, tools: Vec<cairn_protocol::ToolSchema>) -> LlmResult {
        let model = self.model();
        let (effort, policy) = {
            let c = read(&self.inner.config);
            (c.reasoning_effort, c.retry.clone())
        };
        let mut attempt: u32 = 0;
        // Whether a 400 of a known transient shape was retried already (once per request).
        let mut retried_400 = false;
        // Overflow compaction rounds so far: each one cuts harder than the last.
        let mut overflow_round: u32 = 0;
        loop {
            let req_id = uuid::Uuid::new_v4().to_string();
            self.emit(Event::LlmRequest(LlmRequestEvent {
                req_id: req_id.clone(),
                task_id: self.task_id.clone(),
                log_time: now(),
                model: model.clone(),
                msg_count: self.state.messages.len() as u32,
                tool_count: tools.len() as u32,
                compact: None,
            }))
            .await;
            let request = LlmRequest {
                model: model.clone(),
                messages: crate::attachments::outbound(&self.state.messages, &self.state.inline),
                tools: tools.clone(),
                reasoning_effort: effort,
                req_id: req_id.clone(),
            };
            let llm = read(&self.inner.llm).clone();
            let mut stream = llm.stream(request, self.cancel.child_token());
            let (mut text, mut reasoning, mut calls, mut usage) =
                (String::new(), String::new(), Vec::new(), None);
            let mut outcome = None;
            // Increments that have already arrived are merged into one delta event: no added
            // latency, far fewer events for a fast stream.
            let mut pending: Option<LlmChunk> = None;
            let mut ended = false;
            loop {
                if ended && pending.is_none() {
                    break;
                }
                let chunk = match pending.take() {
                    Some(c) => c,
                    None => match stream.next().await {
                        Some(c) => c,
                        None => break,
                    },
                };
                match chunk {
                    LlmChunk::Text(mut t) => {
                        (pending, ended) = coalesce(&mut stream, &mut t, |c| match c {
                            LlmChunk::Text(x) => Ok(x),
                            other => Err(other),
                        });
                        text.push_str(&t);
                        self.emit(Event::AssistantDelta(self.delta(t, &req_id)))
                            .await;
                    }
                    LlmChunk::Reasoning(mut t) => {
                        (pending, ended) = coalesce(&mut stream, &mut t, |c| match c {
                            LlmChunk::Reasoning(x) => Ok(x),
                            other => Err(other),
                        });
                        reasoning.push_str(&t);
                        self.emit(Event::ReasoningDelta(self.delta(t, &req_id)))
                            .await;
                    }
                    LlmChunk::ToolCall(c) => calls.push(c),
                    LlmChunk::Usage(u) => usage = Some(u),
                    LlmChunk::End(o) => {
                        outcome = Some(o);
                        break;
                    }
                }
            }
            drop(stream);
            let outcome = outcome.unwrap_or_else(|| {
                LlmOutcome::new(
                    OutcomeStatus::Malformed,
                    Some("the LLM client ended without an outcome".into()),
                )
            });
            if self.cancel.is_cancelled() || outcome.status == OutcomeStatus::Aborted {
                return LlmResult::Interrupted {
                    partial: text,
                    req_id,
                };
            }
            if outcome.status == OutcomeStatus::Completed {
                return LlmResult::Reply {
                    text,
                    reasoning,
                    tool_calls: dedupe_call_ids(calls),
                    usage,
                    req_id,
                };
            }
            // A prompt too long for the model: compact (harder each time) and send it again;
            // give up, naming what is too big, once nothing more can be shrunk.
            let overflow = outcome.kind == Some(FailureKind::ContextOverflow);
            if overflow && self.recover_from_overflow(&mut overflow_round).await {
                continue;
            }
            if self.cancel.is_cancelled() {
                return LlmResult::Interrupted {
                    partial: String::new(),
                    req_id,
                };
            }
            let transient_400 =
                !retried_400 && RetryPolicy::transient_bad_request(&outcome).is_some();
            let retriable = RetryPolicy::is_retriable(&outcome) || transient_400;
            if retriable && attempt < policy.max_retries {
                attempt += 1;
                retried_400 |= transient_400;
                let wait = policy.delay(attempt, &outcome);
                self.emit(Event::LlmRetry(LlmRetry {
                    attempt,
                    max: policy.max_retries,
                    reason: outcome.describe(),
                    wait_ms: wait.as_millis() as u64,
                    iteration: self.iteration,
                    req_id: req_id.clone(),
                }))
                .await;
                tokio::select! {
                    _ = tokio::time::sleep(wait) => continue,
                    _ = self.cancel.cancelled() => {
                        return LlmResult::Interrupted { partial: String::new(), req_id };
                    }
                }
            }
            let error_type = error_type_of(&outcome);
            let message = match outcome.status {
                _ if overflow => self.overflow_message(&tools, &outcome.describe()),
                OutcomeStatus::Auth => auth_message(&outcome),
                _ if attempt > 0 => format!(
                    "{} (The request was tried {} attempts.)",
                    failure_words(&outcome, error_type, &self.model()),
                    attempt + 1
                ),
                _ => failure_words(&outcome, error_type, &self.model()),
            };
            // Context overflow is retriable once compaction has run; auth needs a new key.
            let retriable_later = outcome.status != OutcomeStatus::Auth
                && !matches!(
                    outcome.kind,
                    Some(FailureKind::BadRequest | FailureKind::QuotaExhausted)
                );
            self.emit_error(message, error_type, retriable_later, req_id)
                .await;
            self.state.retry_pending = retriable_later;
            return LlmResult::Failed;
        }
    }
}

/// Appends every already-available chunk of the same kind to `acc`. Returns the first ready
/// chunk of another kind (to handle next) and whether the stream has ended.
fn coalesce(
    stream: &mut futures::stream::BoxStream<'static, LlmChunk>,
    acc: &mut String,
    same: impl Fn(LlmChunk) -> Result<String, LlmChunk>,
) -> (Option<LlmChunk>, bool) {
    use futures::FutureExt;
    const MAX_MERGED: usize = 64 * 1024;
    while acc.len() < MAX_MERGED {
        match stream.next().now_or_never() {
            Some(Some(c)) => match same(c) {
                Ok(more) => acc.push_str(&more),
                Err(other) => return (Some(other), false),
            },
            Some(None) => return (None, true),
            None => return (None, false),
        }
    }
    (None, false)
}

/// The `error_type` of a failed LLM outcome.
/// What a rejected or missing key says: the provider's words once, the HTTP status, and what
/// to do (no nested parentheses).
fn auth_message(outcome: &LlmOutcome) -> String {
    let status = outcome
        .http_status
        .map(|c| format!(" (HTTP {c})"))
        .unwrap_or_default();
    match outcome.message.as_deref() {
        Some(m) if !m.is_empty() => {
            let mut chars = m.chars();
            let first: String = chars
                .next()
                .map(|c| c.to_uppercase().collect())
                .unwrap_or_default();
            format!(
                "{first}{}{status}. Set a valid API key and try again.",
                chars.as_str()
            )
        }
        _ => {
            format!("The provider rejected the API key{status}. Set a valid API key and try again.")
        }
    }
}

/// A failed model request in words a person reads (every face shows them): what happened,
/// the endpoint's own message, and what to do.
fn failure_words(outcome: &LlmOutcome, error_type: &str, model: &str) -> String {
    if error_type == "model_not_found" {
        // The endpoint's own message says the same; the model's name is what to act on.
        return format!(
            "The endpoint does not know the model `{model}` (HTTP 404). Choose another model, \
             or check the base URL."
        );
    }
    let code = outcome
        .http_status
        .map(|c| format!(" (HTTP {c})"))
        .unwrap_or_default();
    let detail = outcome
        .message
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(|m| {
            let end = if m.ends_with(['.', '!', '?']) {
                ""
            } else {
                "."
            };
            format!(" It said: {m}{end}")
        })
        .unwrap_or_default();
    let (what, todo) = match error_type {
        "server_error" => ("The model's server had an error", "Try again in a moment."),
        "network" => (
            "The model's server could not be reached",
            "Check the network and the base URL, then try again.",
        ),
        "timeout" => ("The model's server did not answer in time", "Try again."),
        "rate_limited" => (
            "The model's server is limiting requests",
            "Try again later.",
        ),
        "malformed" => (
            "The model's server sent an answer that could not be read",
            "Try again, or check the base URL.",
        ),
        _ => ("The model request failed", "Try again, or check Settings."),
    };
    format!("{what}{code}.{detail} {todo}")
}

fn error_type_of(outcome: &LlmOutcome) -> &'static str {
    match (outcome.status, outcome.kind) {
        (OutcomeStatus::Auth, _) => "auth",
        (_, Some(FailureKind::RateLimited)) => "rate_limited",
        (_, Some(FailureKind::ContextOverflow)) => "context_length_exceeded",
        (_, Some(FailureKind::Server)) => "server_error",
        // A chat endpoint answers 404 for a model it does not serve (or a wrong base URL).
        (_, Some(FailureKind::BadRequest)) if outcome.http_status == Some(404) => "model_not_found",
        (_, Some(FailureKind::BadRequest)) => "bad_request",
        (_, Some(FailureKind::Network)) => "network",
        (_, Some(FailureKind::QuotaExhausted)) => "quota_exhausted",
        (OutcomeStatus::Timeout, _) => "timeout",
        (OutcomeStatus::Malformed, _) => "malformed",
        _ => "failed",
    }
}
