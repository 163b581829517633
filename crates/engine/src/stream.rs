//! The event stream of one run (a turn and the steering turns it goes on with), and how the
//! run ended.

use std::pin::Pin;
use std::task::{Context, Poll};

use cairn_protocol::{Event, RunEnd, TurnStatus};
use futures::Stream;
use tokio::sync::{mpsc, oneshot};

/// The ordered events of one run; ends after the last `turn_end`, once the session let go of
/// the run (it is no longer busy with it).
pub struct EventStream {
    rx: mpsc::Receiver<Event>,
    end: oneshot::Receiver<RunEnd>,
}

impl EventStream {
    /// A stream over `rx` whose run reports its end on `end`.
    pub(crate) fn new(rx: mpsc::Receiver<Event>, end: oneshot::Receiver<RunEnd>) -> Self {
        EventStream { rx, end }
    }

    /// A stream with no events whose run did not start.
    pub(crate) fn empty() -> Self {
        let (_tx, rx) = mpsc::channel(1);
        let (end_tx, end) = oneshot::channel();
        let _ = end_tx.send(RunEnd::NotStarted);
        EventStream { rx, end }
    }

    /// Receives the next event; `None` after the run ended.
    pub async fn recv(&mut self) -> Option<Event> {
        self.rx.recv().await
    }

    /// How the run ended: reads (and drops) the events not received yet, then waits for the
    /// run to let go of the session. A run whose task died reports an error.
    pub async fn end(mut self) -> RunEnd {
        while self.rx.recv().await.is_some() {}
        self.end.await.unwrap_or(RunEnd::Ended {
            status: TurnStatus::Error,
            turns: 0,
            steering_turns: 0,
        })
    }
}

impl Stream for EventStream {
    type Item = Event;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.rx.poll_recv(cx)
    }
}
