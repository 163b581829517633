//! Drives one streamed response: cancellation, idle watchdog, SSE decoding, and exactly one
//! [`LlmChunk::End`] at the end. Every event of a body read is decoded and parsed in place
//! (borrowed from the decoder's buffers) before the next read.

use std::collections::VecDeque;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;

use cairn_engine::{FailureKind, LlmChunk, LlmOutcome, OutcomeStatus};
use futures::future::{BoxFuture, FutureExt};
use futures::stream::BoxStream;
use futures::StreamExt;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::classify::outcome_for_body_error;
use crate::parser::{Flow, StreamParser};
use crate::redact::Redactor;
use crate::sse::{SseDecoder, Utf8Error};

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
    Utf8(#[from] Utf8Error),
}

/// What one read of the body gave.
enum Input {
    /// Event-stream bytes for the decoder.
    Bytes(Bytes),
    /// A whole JSON body: one event.
    Event(String),
}

/// Where a response's events come from.
enum Body {
    /// An event stream: body bytes (idle watchdog included) and their decoder.
    Sse(
        BoxStream<'static, Result<Bytes, TransportError>>,
        SseDecoder,
    ),
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
            return Body::Sse(watchdog(response, idle), SseDecoder::new());
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

    /// The next read; `None` at the end of the body.
    async fn next(&mut self) -> Option<Result<Input, TransportError>> {
        match self {
            Body::Sse(bytes, _) => bytes.next().await.map(|r| r.map(Input::Bytes)),
            Body::Json(read) => match read.take() {
                Some(read) => Some(read.await.map(Input::Event)),
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

/// Where the events decoded so far left the response.
enum Fed {
    /// All decoded events handled: read more.
    NeedBytes,
    /// The parser saw the end of the response.
    Done,
    /// The parser ended the stream with this outcome.
    Failed(LlmOutcome),
    /// The event stream itself is broken.
    Broken(Utf8Error),
}

/// Hands every complete event in `decoder` to `parser` (borrowed: no copy per event).
fn feed_decoded(
    decoder: &mut SseDecoder,
    parser: &mut dyn StreamParser,
    out: &mut VecDeque<LlmChunk>,
) -> Fed {
    loop {
        match decoder.next_event() {
            Ok(Some(ev)) => match parser.feed(ev.event, ev.data, out) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Done) => return Fed::Done,
                Err(outcome) => return Fed::Failed(outcome),
            },
            Ok(None) => return Fed::NeedBytes,
            Err(e) => return Fed::Broken(e),
        }
    }
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

    /// Handles the parser's verdict on an event.
    fn after_feed(
        &mut self,
        body: Body,
        parser: Box<dyn StreamParser>,
        flow: Result<Flow, LlmOutcome>,
    ) {
        match flow {
            Ok(Flow::Continue) => self.state = State::Streaming(body, parser),
            Ok(Flow::Done) => self.finish(parser),
            Err(outcome) => self.end(outcome),
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
                            self.state =
                                State::Streaming(Body::new(o.response, self.idle), o.parser)
                        }
                        Err(outcome) => self.end(outcome),
                    }
                }
                State::Streaming(mut body, mut parser) => {
                    if let Body::Sse(_, decoder) = &mut body {
                        match feed_decoded(decoder, parser.as_mut(), &mut self.pending) {
                            Fed::NeedBytes => {}
                            Fed::Done => {
                                self.finish(parser);
                                continue;
                            }
                            Fed::Failed(outcome) => {
                                self.end(outcome);
                                continue;
                            }
                            Fed::Broken(e) => {
                                self.read_failed(parser, e.into());
                                continue;
                            }
                        }
                        if !self.pending.is_empty() {
                            self.state = State::Streaming(body, parser);
                            continue;
                        }
                    }
                    let next = tokio::select! {
                        biased;
                        _ = &mut self.cancelled => {
                            self.end(aborted());
                            continue;
                        }
                        n = body.next() => n,
                    };
                    match next {
                        Some(Ok(Input::Bytes(bytes))) => {
                            if let Body::Sse(_, decoder) = &mut body {
                                decoder.push(&bytes);
                            }
                            self.state = State::Streaming(body, parser);
                        }
                        Some(Ok(Input::Event(data))) => {
                            let flow = parser.feed("", &data, &mut self.pending);
                            self.after_feed(body, parser, flow);
                        }
                        Some(Err(e)) => self.read_failed(parser, e.into()),
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
