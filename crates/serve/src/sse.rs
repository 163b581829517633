//! An SSE response body: frames from an [`Inlet`], a comment every so often (`: ping` each
//! second while a run is attached, so a gone client is noticed within 2 s; `: keepalive`
//! every 15 s on idle streams), cut off with an error when the reader fell too far behind,
//! and a callback when the body is dropped (the client went away, or the stream ended).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use futures::Stream;

use crate::hub::Inlet;

/// How often an attached run's stream is pinged.
pub const PING: Duration = Duration::from_secs(1);
/// How often an idle events stream gets a keepalive comment by default
/// ([`crate::ServeConfig::keepalive`]).
pub const KEEPALIVE: Duration = Duration::from_secs(15);

/// Called once when the body is dropped.
pub type OnDrop = Box<dyn FnOnce() + Send>;

/// The body stream.
pub struct SseBody {
    first: VecDeque<Bytes>,
    inlet: Inlet,
    tick: tokio::time::Interval,
    comment: &'static str,
    on_drop: Option<OnDrop>,
    done: bool,
}

impl SseBody {
    /// A body sending `first`, then what `inlet` gets, with `comment` every `every`.
    pub fn new(
        first: Vec<Bytes>,
        inlet: Inlet,
        every: Duration,
        comment: &'static str,
        on_drop: Option<OnDrop>,
    ) -> SseBody {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        SseBody {
            first: first.into(),
            inlet,
            tick,
            comment,
            on_drop,
            done: false,
        }
    }

    /// The `200 text/event-stream` response carrying this body.
    pub fn response(self) -> Response {
        let mut resp = Response::new(Body::from_stream(self));
        *resp.status_mut() = StatusCode::OK;
        let h = resp.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        h.insert("x-accel-buffering", HeaderValue::from_static("no"));
        resp
    }
}

impl Drop for SseBody {
    fn drop(&mut self) {
        if let Some(f) = self.on_drop.take() {
            f();
        }
    }
}

impl Stream for SseBody {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(b) = self.first.pop_front() {
            return Poll::Ready(Some(Ok(b)));
        }
        match self.inlet.rx.poll_recv(cx) {
            Poll::Ready(Some(b)) => {
                self.inlet.taken(b.len());
                return Poll::Ready(Some(Ok(b)));
            }
            Poll::Ready(None) => {
                self.done = true;
                if self.inlet.cut.load(Ordering::SeqCst) {
                    // A slow reader: the connection is closed, not ended cleanly.
                    return Poll::Ready(Some(Err(std::io::Error::other(
                        "the client read too slowly; the stream was cut off",
                    ))));
                }
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if self.inlet.cut.load(Ordering::SeqCst) {
            self.done = true;
            return Poll::Ready(Some(Err(std::io::Error::other(
                "the client read too slowly; the stream was cut off",
            ))));
        }
        match self.tick.poll_tick(cx) {
            Poll::Ready(_) => Poll::Ready(Some(Ok(Bytes::from_static(self.comment.as_bytes())))),
            Poll::Pending => Poll::Pending,
        }
    }
}
