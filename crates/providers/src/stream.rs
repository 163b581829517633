//! Drives one streamed response: cancellation, idle watchdog, SSE decoding, and exactly one
//! [`LlmChunk::End`] at the end.

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;

use cairn_engine::{FailureKind, LlmChunk, LlmOutcome, OutcomeStatus};
use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::StreamExt;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::classify::outcome_for_body_error;
use crate::parser::{Flow, StreamParser};
use crate::redact::Redactor;

/// An accepted response and the parser for its wire format.
pub(crate) struct Opened {
    /// The HTTP response (status 2xx), body not read yet.
    pub response: reqwest::Response,
    /// Parser for this response's events.
    pub parser: Box<dyn StreamParser>,
}

/// A failure below the SSE layer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TransportError {
    /// No bytes for the idle timeout.
    #[error("no data from the provider for {} ms", .0.as_millis())]
    Idle(Duration),
    /// The body failed (reset, closed mid-chunk, …).
    #[error(transparent)]
    Body(#[from] reqwest::Error),
}

type Events = BoxStream<'static, Result<Event, EventStreamError<TransportError>>>;

enum State {
    Connect(BoxFuture<'static, Result<Opened, LlmOutcome>>),
    Streaming(Events, Box<dyn StreamParser>),
    Done,
}

struct Run {
    state: State,
    pending: VecDeque<LlmChunk>,
    /// Registered once, polled across events (cheaper than a new waiter per event).
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
    idle: Duration,
    redactor: Redactor,
    req_id: String,
}

/// The chunk stream of one request; `open` connects and picks the parser.
pub(crate) fn drive(
    open: BoxFuture<'static, Result<Opened, LlmOutcome>>,
    cancel: CancellationToken,
    idle: Duration,
    redactor: Redactor,
    req_id: String,
) -> BoxStream<'static, LlmChunk> {
    let run = Run {
        state: State::Connect(open),
        pending: VecDeque::new(),
        cancelled: Box::pin(cancel.cancelled_owned()),
        idle,
        redactor,
        req_id,
    };
    futures::stream::unfold(run, |mut run| async move {
        let chunk = run.next_chunk().await?;
        Some((chunk, run))
    })
    .boxed()
}

/// Largest piece of body handed to the SSE decoder at once: its buffer handling is
/// quadratic in the size of one read, and a fast server can send megabytes in one.
const MAX_DECODE_SLICE: usize = 2048;

/// Cuts a body read into zero-copy slices of at most [`MAX_DECODE_SLICE`] bytes.
fn slices(item: Result<Bytes, TransportError>) -> Vec<Result<Bytes, TransportError>> {
    match item {
        Ok(b) if b.len() > MAX_DECODE_SLICE => (0..b.len())
            .step_by(MAX_DECODE_SLICE)
            .map(|i| Ok(b.slice(i..(i + MAX_DECODE_SLICE).min(b.len()))))
            .collect(),
        other => vec![other],
    }
}

/// The response's events: SSE, or one event holding a whole JSON body (a server that
/// ignored `stream: true`, or answered an error with a success status).
fn events(response: reqwest::Response, idle: Duration) -> Events {
    let is_json = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.trim_start().starts_with("application/json"));
    if !is_json {
        return watchdog(response, idle);
    }
    futures::stream::once(async move {
        match tokio::time::timeout(idle, response.text()).await {
            Ok(Ok(data)) => Ok(Event {
                data,
                ..Event::default()
            }),
            Ok(Err(e)) => Err(EventStreamError::Transport(TransportError::Body(e))),
            Err(_) => Err(EventStreamError::Transport(TransportError::Idle(idle))),
        }
    })
    .boxed()
}

/// The body's events, failing with [`TransportError::Idle`] after `idle` without a byte.
fn watchdog(response: reqwest::Response, idle: Duration) -> Events {
    let body = response.bytes_stream().boxed();
    let timer = Box::pin(tokio::time::sleep(idle));
    futures::stream::unfold(Some((body, timer)), move |state| async move {
        let (mut body, mut timer) = state?;
        let item = tokio::select! {
            biased;
            item = body.next() => item,
            _ = &mut timer => return Some((Err(TransportError::Idle(idle)), None)),
        };
        match item {
            Some(Ok(bytes)) => {
                timer.as_mut().reset(Instant::now() + idle);
                Some((Ok(bytes), Some((body, timer))))
            }
            Some(Err(e)) => Some((Err(TransportError::Body(e)), None)),
            None => None,
        }
    })
    .flat_map(|item| futures::stream::iter(slices(item)))
    .eventsource()
    .boxed()
}

fn aborted() -> LlmOutcome {
    LlmOutcome::new(OutcomeStatus::Aborted, Some("cancelled".to_string()))
}

impl Run {
    /// Ends the stream with `outcome` after whatever is pending.
    fn end(&mut self, outcome: LlmOutcome) {
        tracing::debug!(req_id = %self.req_id, outcome = %outcome.describe(), "LLM request ended");
        self.pending.push_back(LlmChunk::End(outcome));
        self.state = State::Done;
    }

    /// Ends a completed response: its final chunks, then the outcome.
    fn finish(&mut self, mut parser: Box<dyn StreamParser>) {
        let outcome = parser.finish(&mut self.pending);
        self.end(outcome);
    }

    /// The outcome of a failure while reading events.
    fn stream_error(&self, err: EventStreamError<TransportError>) -> LlmOutcome {
        match err {
            EventStreamError::Transport(TransportError::Idle(d)) => LlmOutcome::new(
                OutcomeStatus::Timeout,
                Some(format!(
                    "stream idle timeout: no data from the provider for {} ms",
                    d.as_millis()
                )),
            ),
            EventStreamError::Transport(TransportError::Body(e)) => {
                outcome_for_body_error(&e, &self.redactor)
            }
            EventStreamError::Utf8(e) => LlmOutcome::new(
                OutcomeStatus::Malformed,
                Some(format!("the stream is not valid UTF-8: {e}")),
            ),
            EventStreamError::Parser(e) => {
                let detail = self.redactor.scrub_truncated(&e.to_string(), 200);
                LlmOutcome::new(
                    OutcomeStatus::Malformed,
                    Some(format!("invalid server-sent events: {detail}")),
                )
            }
        }
    }

    async fn next_chunk(&mut self) -> Option<LlmChunk> {
        loop {
            if let Some(chunk) = self.pending.pop_front() {
                return Some(chunk);
            }
            match std::mem::replace(&mut self.state, State::Done) {
                State::Done => return None,
                State::Connect(open) => {
                    let opened = tokio::select! {
                        biased;
                        _ = &mut self.cancelled => Err(aborted()),
                        r = open => r,
                    };
                    match opened {
                        Ok(o) => {
                            self.state = State::Streaming(events(o.response, self.idle), o.parser)
                        }
                        Err(outcome) => self.end(outcome),
                    }
                }
                State::Streaming(mut events, mut parser) => {
                    let next = tokio::select! {
                        biased;
                        _ = &mut self.cancelled => {
                            self.end(aborted());
                            continue;
                        }
                        n = events.next() => n,
                    };
                    match next {
                        Some(Ok(ev)) => match parser.feed(&ev.event, &ev.data, &mut self.pending) {
                            Ok(Flow::Continue) => self.state = State::Streaming(events, parser),
                            Ok(Flow::Done) => self.finish(parser),
                            Err(outcome) => self.end(outcome),
                        },
                        Some(Err(e)) if parser.is_complete() => {
                            tracing::debug!(req_id = %self.req_id, error = %e, "stream error after the response finished");
                            self.finish(parser);
                        }
                        Some(Err(e)) => {
                            let outcome = self.stream_error(e);
                            self.end(outcome);
                        }
                        None if parser.is_complete() => self.finish(parser),
                        None => self.end(
                            LlmOutcome::new(
                                OutcomeStatus::Timeout,
                                Some("stream dropped: the connection closed before the response finished".into()),
                            )
                            .with_kind(FailureKind::Network),
                        ),
                    }
                }
            }
        }
    }
}
