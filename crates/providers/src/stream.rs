//! Drives one streamed response: cancellation, idle watchdog, SSE decoding ([`SseDecoder`]
//! over `sseer`'s line parser), and exactly one [`LlmChunk::End`] at the end. Each body read
//! is decoded whole, its events parsed borrowed from it, and reads that are already there
//! are taken without another wait (a bounded batch), so a fast stream pays for one
//! cancellation check and one poll per batch of reads, not per event.

use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;

use cairn_engine::{FailureKind, LlmChunk, LlmOutcome, OutcomeStatus};
use futures::future::{BoxFuture, FutureExt};
use futures::stream::BoxStream;
use futures::StreamExt;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::answer::{
    is_completion_like, not_a_completion, not_a_stream, sniff, Answer, Shape, EXCERPT_BYTES,
};
use crate::classify::outcome_for_body_error;
use crate::parser::{Flow, StreamParser};
use crate::redact::Redactor;
use crate::sse::SseDecoder;

/// Body reads decoded after one wait before the cancellation token is looked at again.
const BATCH: usize = 16;

/// Longest wait for the rest of an excerpt once a body is known not to be a stream.
const EXCERPT_WAIT: Duration = Duration::from_millis(500);

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

/// What the body gave next.
enum Input {
    /// One read of an event stream.
    Read(Bytes),
    /// A whole JSON body: one event.
    Whole(String),
}

/// What the body gave next: input, a failure, or `None` at its end.
type Next = Option<Result<Input, TransportError>>;

/// A body's reads (idle watchdog included).
type Reads = BoxStream<'static, Result<Bytes, TransportError>>;

/// Where a response's events come from.
enum Body {
    /// An event stream: body reads and their decoder.
    Sse(Reads, Box<SseDecoder>),
    /// A whole JSON body (a server that ignored `stream: true`, or answered an error with a
    /// success status), handed over as one event.
    Json {
        /// The read of the whole body; `None` once read.
        read: Option<BoxFuture<'static, Result<String, TransportError>>>,
        /// Who answered, for messages.
        answer: Answer,
        /// The body, once read.
        seen: String,
    },
}

impl Body {
    /// The response's body, by declared content type, else by its first bytes. A success
    /// answer that is neither an event stream nor JSON ends the request here.
    async fn open(
        response: reqwest::Response,
        idle: Duration,
        redactor: &Redactor,
    ) -> Result<Body, LlmOutcome> {
        let answer = Answer::of(&response);
        match answer.declared() {
            Some(Shape::Sse) => return Ok(Body::Sse(watchdog(response, idle), Box::default())),
            Some(Shape::Json) => {
                let read = async move {
                    match tokio::time::timeout(idle, response.text()).await {
                        Ok(Ok(data)) => Ok(data),
                        Ok(Err(e)) => Err(TransportError::Body(e)),
                        Err(_) => Err(TransportError::Idle(idle)),
                    }
                };
                return Ok(Body::json(read.boxed(), answer));
            }
            Some(Shape::Other) | None => {}
        }
        let mut reads = watchdog(response, idle);
        let mut head = Vec::new();
        let (shape, ended) = loop {
            match reads.next().await {
                Some(Ok(bytes)) => {
                    head.extend_from_slice(&bytes);
                    if let Some(shape) = sniff(&head, false) {
                        break (shape, false);
                    }
                }
                Some(Err(e)) => return Err(read_outcome(e.into(), redactor)),
                None => break (sniff(&head, true).unwrap_or(Shape::Sse), true),
            }
        };
        match shape {
            Shape::Sse => {
                let first = futures::stream::iter([Ok(Bytes::from(head))]);
                Ok(Body::Sse(first.chain(reads).boxed(), Box::default()))
            }
            Shape::Json => {
                let read = async move {
                    while let Some(bytes) = reads.next().await {
                        head.extend_from_slice(&bytes?);
                    }
                    Ok::<_, TransportError>(String::from_utf8_lossy(&head).into_owned())
                };
                Ok(Body::json(read.boxed(), answer))
            }
            Shape::Other => {
                if !ended {
                    let more = async {
                        while head.len() < EXCERPT_BYTES {
                            match reads.next().await {
                                Some(Ok(bytes)) => head.extend_from_slice(&bytes),
                                _ => break,
                            }
                        }
                    };
                    let _ = tokio::time::timeout(EXCERPT_WAIT, more).await;
                }
                Err(not_a_stream(&answer, &head, redactor))
            }
        }
    }

    fn json(read: BoxFuture<'static, Result<String, TransportError>>, answer: Answer) -> Body {
        Body::Json {
            read: Some(read),
            answer,
            seen: String::new(),
        }
    }

    /// The next input; `None` at the end of the body.
    async fn next(&mut self) -> Next {
        match self {
            Body::Sse(reads, _) => reads.next().await.map(|r| r.map(Input::Read)),
            Body::Json { read, .. } => match read.take() {
                Some(read) => Some(read.await.map(Input::Whole)),
                None => None,
            },
        }
    }
}

/// Hands one event to the parser; a break carries how the response ended.
fn feed_event(
    parser: &mut dyn StreamParser,
    out: &mut VecDeque<LlmChunk>,
    event: &str,
    data: &str,
) -> ControlFlow<Result<(), LlmOutcome>> {
    match parser.feed(event, data, out) {
        Ok(Flow::Continue) => ControlFlow::Continue(()),
        Ok(Flow::Done) => ControlFlow::Break(Ok(())),
        Err(outcome) => ControlFlow::Break(Err(outcome)),
    }
}

/// A connected response: its body and parser.
type Connected = (Body, Box<dyn StreamParser>);

enum State {
    Connect(BoxFuture<'static, Result<Connected, LlmOutcome>>),
    Streaming(Body, Box<dyn StreamParser>),
    Done,
}

struct Run {
    state: State,
    pending: VecDeque<LlmChunk>,
    /// Registered once, polled across events (cheaper than a new waiter per event).
    cancelled: Pin<Box<WaitForCancellationFutureOwned>>,
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
    let opening = redactor.clone();
    let connect = async move {
        let opened = open.await?;
        let body = Body::open(opened.response, idle, &opening).await?;
        Ok((body, opened.parser))
    };
    let run = Run {
        state: State::Connect(connect.boxed()),
        pending: VecDeque::new(),
        cancelled: Box::pin(cancel.cancelled_owned()),
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

/// The outcome of a failure while reading events.
fn read_outcome(err: ReadError, redactor: &Redactor) -> LlmOutcome {
    match err {
        ReadError::Transport(TransportError::Idle(d)) => LlmOutcome::new(
            OutcomeStatus::Timeout,
            Some(format!(
                "stream idle timeout: no data from the provider for {} ms",
                d.as_millis()
            )),
        ),
        ReadError::Transport(TransportError::Body(e)) => outcome_for_body_error(&e, redactor),
        ReadError::Utf8(e) => LlmOutcome::new(
            OutcomeStatus::Malformed,
            Some(format!("the stream is not valid UTF-8: {e}")),
        ),
    }
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

    /// Ends the stream after a read failure (a normal end if the response was complete).
    fn read_failed(&mut self, parser: Box<dyn StreamParser>, err: ReadError) {
        if parser.is_complete() {
            tracing::debug!(req_id = %self.req_id, error = %err, "stream error after the response finished");
            self.finish(parser);
        } else {
            let outcome = read_outcome(err, &self.redactor);
            self.end(outcome);
        }
    }

    /// Handles `next` and then every input that is ready without waiting (at most [`BATCH`]
    /// reads); leaves the state `Streaming` unless the response ended.
    fn consume(&mut self, mut body: Body, mut parser: Box<dyn StreamParser>, mut next: Next) {
        for left in (0..BATCH).rev() {
            let pending = &mut self.pending;
            let mut on_event =
                |event: &str, data: &str| feed_event(parser.as_mut(), pending, event, data);
            let flow = match (next, &mut body) {
                (Some(Ok(Input::Read(bytes))), Body::Sse(_, decoder)) => {
                    decoder.feed(&bytes, &mut on_event)
                }
                (Some(Ok(Input::Read(_))), Body::Json { .. }) => Ok(ControlFlow::Continue(())),
                (Some(Ok(Input::Whole(data))), Body::Json { seen, .. }) => {
                    let flow = on_event("", &data);
                    *seen = data;
                    Ok(flow)
                }
                (Some(Ok(Input::Whole(data))), Body::Sse(..)) => Ok(on_event("", &data)),
                (Some(Err(e)), _) => return self.read_failed(parser, e.into()),
                (None, body) => {
                    // The end of the body: a last event ended by CR still counts.
                    let last = match body {
                        Body::Sse(_, decoder) => decoder.finish(&mut on_event),
                        Body::Json { .. } => Ok(ControlFlow::Continue(())),
                    };
                    return match last {
                        Ok(ControlFlow::Break(Err(outcome))) => self.end(outcome),
                        Err(e) => self.read_failed(parser, e.into()),
                        Ok(_) => self.body_ended(parser, body),
                    };
                }
            };
            match flow {
                Ok(ControlFlow::Continue(())) => {}
                Ok(ControlFlow::Break(Ok(()))) => return self.finish(parser),
                Ok(ControlFlow::Break(Err(outcome))) => return self.end(outcome),
                Err(e) => return self.read_failed(parser, e.into()),
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

    /// The body ended: a normal end if the response was complete; if not, a wrong endpoint
    /// when a whole JSON body was no completion at all, else a dropped stream.
    fn body_ended(&mut self, parser: Box<dyn StreamParser>, body: &Body) {
        if parser.is_complete() {
            return self.finish(parser);
        }
        if let Body::Json { answer, seen, .. } = body {
            if !is_completion_like(seen) {
                let outcome = not_a_completion(answer, seen, &self.redactor);
                return self.end(outcome);
            }
        }
        self.end(
            LlmOutcome::new(
                OutcomeStatus::Timeout,
                Some("stream dropped: the connection closed before the response finished".into()),
            )
            .with_kind(FailureKind::Network),
        )
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
                        Ok((body, parser)) => self.state = State::Streaming(body, parser),
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
