//! Drives one streamed response: cancellation, idle watchdog, SSE decoding (`sseer`), and
//! exactly one [`LlmChunk::End`] at the end. After each awaited event, the events already
//! decoded are parsed without another wait (a bounded batch), so a fast stream does not pay
//! for a cancellation check per event.

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;

use cairn_engine::{FailureKind, LlmChunk, LlmOutcome, OutcomeStatus};
use futures::future::{BoxFuture, FutureExt};
use futures::stream::BoxStream;
use futures::StreamExt;
use sseer::errors::EventStreamError;
use sseer::event::Event;
use sseer::EventStream;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::classify::outcome_for_body_error;
use crate::parser::{Flow, StreamParser};
use crate::redact::Redactor;

/// Events parsed after one wait before the cancellation token is looked at again.
const BATCH: usize = 1024;

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

/// A failure while reading events.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// Below the SSE layer.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The event stream is not UTF-8.
    #[error(transparent)]
    Utf8(#[from] std::str::Utf8Error),
}

impl From<EventStreamError<TransportError>> for ReadError {
    fn from(e: EventStreamError<TransportError>) -> Self {
        match e {
            EventStreamError::Transport(e) => ReadError::Transport(e),
            EventStreamError::Utf8Error(e) => ReadError::Utf8(e),
        }
    }
}

/// One event of a response.
enum Input {
    /// A decoded server-sent event.
    Sse(Event),
    /// A whole JSON body: one event.
    Whole(String),
}

impl Input {
    /// The event's type (empty for a whole body) and data.
    fn parts(&self) -> (&str, &str) {
        match self {
            Input::Sse(ev) => (&ev.event, &ev.data),
            Input::Whole(data) => ("", data),
        }
    }
}

/// What the body gave next: an event, a failure, or `None` at its end.
type Next = Option<Result<Input, ReadError>>;

/// Where a response's events come from.
enum Body {
    /// An event stream decoded from the body bytes (idle watchdog included).
    Sse(Box<EventStream<BoxStream<'static, Result<Bytes, TransportError>>>>),
    /// A whole JSON body (a server that ignored `stream: true`, or answered an error with a
    /// success status), handed over as one event; `None` once read.
    Json(Option<BoxFuture<'static, Result<String, TransportError>>>),
}

impl Body {
    /// The response's body, by content type.
    fn new(response: reqwest::Response, idle: Duration) -> Body {
        let is_json = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.trim_start().starts_with("application/json"));
        if !is_json {
            return Body::Sse(Box::new(EventStream::new(watchdog(response, idle))));
        }
        Body::Json(Some(
            async move {
                match tokio::time::timeout(idle, response.text()).await {
                    Ok(Ok(data)) => Ok(data),
                    Ok(Err(e)) => Err(TransportError::Body(e)),
                    Err(_) => Err(TransportError::Idle(idle)),
                }
            }
            .boxed(),
        ))
    }

    /// The next event; `None` at the end of the body.
    async fn next(&mut self) -> Next {
        match self {
            Body::Sse(events) => events
                .next()
                .await
                .map(|r| r.map(Input::Sse).map_err(ReadError::from)),
            Body::Json(read) => match read.take() {
                Some(read) => Some(read.await.map(Input::Whole).map_err(ReadError::from)),
                None => None,
            },
        }
    }
}

enum State {
    Connect(BoxFuture<'static, Result<Opened, LlmOutcome>>),
    Streaming(Body, Box<dyn StreamParser>),
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

/// The body's bytes, failing with [`TransportError::Idle`] after `idle` without a byte. The
/// timer is re-armed only when it fires early (not on every read: that takes the timer lock).
fn watchdog(
    response: reqwest::Response,
    idle: Duration,
) -> BoxStream<'static, Result<Bytes, TransportError>> {
    let body = response.bytes_stream().boxed();
    let last = Instant::now();
    let timer = Box::pin(tokio::time::sleep_until(last + idle));
    futures::stream::unfold(Some((body, timer, last)), move |state| async move {
        let (mut body, mut timer, mut last) = state?;
        let item = loop {
            tokio::select! {
                biased;
                item = body.next() => break item,
                _ = &mut timer => {
                    let due = last + idle;
                    if due <= Instant::now() {
                        return Some((Err(TransportError::Idle(idle)), None));
                    }
                    timer.as_mut().reset(due);
                }
            }
        };
        match item {
            Some(Ok(bytes)) => {
                last = Instant::now();
                Some((Ok(bytes), Some((body, timer, last))))
            }
            Some(Err(e)) => Some((Err(TransportError::Body(e)), None)),
            None => None,
        }
    })
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
    fn stream_error(&self, err: ReadError) -> LlmOutcome {
        match err {
            ReadError::Transport(TransportError::Idle(d)) => LlmOutcome::new(
                OutcomeStatus::Timeout,
                Some(format!(
                    "stream idle timeout: no data from the provider for {} ms",
                    d.as_millis()
                )),
            ),
            ReadError::Transport(TransportError::Body(e)) => {
                outcome_for_body_error(&e, &self.redactor)
            }
            ReadError::Utf8(e) => LlmOutcome::new(
                OutcomeStatus::Malformed,
                Some(format!("the stream is not valid UTF-8: {e}")),
            ),
        }
    }

    /// Ends the stream after a read failure (a normal end if the response was complete).
    fn read_failed(&mut self, parser: Box<dyn StreamParser>, err: ReadError) {
        if parser.is_complete() {
            tracing::debug!(req_id = %self.req_id, error = %err, "stream error after the response finished");
            self.finish(parser);
        } else {
            let outcome = self.stream_error(err);
            self.end(outcome);
        }
    }

    /// Handles `next` and then every event that is ready without waiting (at most [`BATCH`]);
    /// leaves the state `Streaming` unless the response ended.
    fn consume(&mut self, mut body: Body, mut parser: Box<dyn StreamParser>, mut next: Next) {
        for left in (0..BATCH).rev() {
            match next {
                Some(Ok(input)) => {
                    let (event, data) = input.parts();
                    match parser.feed(event, data, &mut self.pending) {
                        Ok(Flow::Continue) => {}
                        Ok(Flow::Done) => return self.finish(parser),
                        Err(outcome) => return self.end(outcome),
                    }
                }
                Some(Err(e)) => return self.read_failed(parser, e),
                None if parser.is_complete() => return self.finish(parser),
                None => return self.end(
                    LlmOutcome::new(
                        OutcomeStatus::Timeout,
                        Some(
                            "stream dropped: the connection closed before the response finished"
                                .into(),
                        ),
                    )
                    .with_kind(FailureKind::Network),
                ),
            }
            if left == 0 {
                break;
            }
            match body.next().now_or_never() {
                Some(n) => next = n,
                None => break,
            }
        }
        self.state = State::Streaming(body, parser);
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
                            self.state =
                                State::Streaming(Body::new(o.response, self.idle), o.parser)
                        }
                        Err(outcome) => self.end(outcome),
                    }
                }
                State::Streaming(mut body, parser) => {
                    let next = tokio::select! {
                        biased;
                        _ = &mut self.cancelled => {
                            self.end(aborted());
                            continue;
                        }
                        n = body.next() => n,
                    };
                    self.consume(body, parser, next);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
