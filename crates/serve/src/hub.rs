//! One session's event frames: numbered, kept in a bounded replay buffer (2,000 events,
//! 4 MiB) and fanned out to the `GET …/events` streams; each stream's unsent output is
//! bounded too ([`Outlet`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Events kept for replay per session.
pub const REPLAY_EVENTS: usize = 2_000;
/// Bytes kept for replay per session.
pub const REPLAY_BYTES: usize = 4 * 1024 * 1024;
/// Unsent output one SSE stream may hold before it is cut off.
pub const UNSENT_LIMIT: usize = 8 * 1024 * 1024;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One SSE event, framed.
#[derive(Debug)]
pub struct Frame {
    /// Its number in the session.
    pub seq: u64,
    /// `event:`, `id:`, `data:` and the blank line.
    pub text: Bytes,
}

/// The sending side of one SSE stream; refuses (and marks the stream cut off) past
/// [`UNSENT_LIMIT`] unsent bytes.
#[derive(Clone)]
pub struct Outlet {
    tx: mpsc::UnboundedSender<Bytes>,
    unsent: Arc<AtomicUsize>,
    cut: Arc<AtomicBool>,
    /// The connection carrying the stream, closed when the reader is cut off.
    conn: Option<CancellationToken>,
}

/// The receiving side of an [`Outlet`].
pub struct Inlet {
    /// Frames to write.
    pub rx: mpsc::UnboundedReceiver<Bytes>,
    /// Bytes sent and not yet taken.
    pub unsent: Arc<AtomicUsize>,
    /// Set when the stream was cut off (a slow reader).
    pub cut: Arc<AtomicBool>,
}

impl Inlet {
    /// Takes one frame out of the count.
    pub fn taken(&self, len: usize) {
        self.unsent.fetch_sub(len, Ordering::SeqCst);
    }
}

/// A new stream's two ends; `conn` is closed when the reader is cut off.
pub fn outlet(conn: Option<CancellationToken>) -> (Outlet, Inlet) {
    let (tx, rx) = mpsc::unbounded_channel();
    let unsent = Arc::new(AtomicUsize::new(0));
    let cut = Arc::new(AtomicBool::new(false));
    (
        Outlet {
            tx,
            unsent: unsent.clone(),
            cut: cut.clone(),
            conn,
        },
        Inlet { rx, unsent, cut },
    )
}

impl Outlet {
    /// Queues `bytes`; false when the reader is gone or was too slow (then cut off).
    pub fn send(&self, bytes: Bytes) -> bool {
        if self.tx.is_closed() || self.cut.load(Ordering::SeqCst) {
            return false;
        }
        let len = bytes.len();
        if self.unsent.fetch_add(len, Ordering::SeqCst) + len > UNSENT_LIMIT {
            self.cut.store(true, Ordering::SeqCst);
            if let Some(c) = &self.conn {
                c.cancel();
            }
            return false;
        }
        self.tx.send(bytes).is_ok()
    }
}

/// What a new `GET …/events` stream starts with.
pub struct Subscription {
    /// Buffered frames to replay first.
    pub replay: Vec<Bytes>,
    /// Whether asked-for events are gone (the stream starts with `resync`).
    pub resync: bool,
    /// Live frames from now on.
    pub inlet: Inlet,
}

/// Where replay starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    /// Live only.
    Now,
    /// Every buffered event.
    Start,
    /// After this event of this process.
    After(u64),
    /// An id this process did not give (another process, or garbage).
    Unknown,
}

#[derive(Default)]
struct Inner {
    frames: VecDeque<Arc<Frame>>,
    bytes: usize,
    next: u64,
    subs: Vec<Outlet>,
    closed: bool,
}

/// One session's frames.
pub struct Hub {
    epoch: String,
    inner: Mutex<Inner>,
}

impl Hub {
    /// An empty hub whose ids carry `epoch` (the server process's).
    pub fn new(epoch: &str) -> Hub {
        Hub {
            epoch: epoch.to_string(),
            inner: Mutex::default(),
        }
    }

    /// The id of event `seq`.
    pub fn id(&self, seq: u64) -> String {
        format!("{}-{seq}", self.epoch)
    }

    /// Reads an id back (`Last-Event-ID`, `?after`).
    pub fn parse_id(&self, id: &str) -> From {
        match id.rsplit_once('-') {
            Some((epoch, seq)) if epoch == self.epoch => {
                seq.parse().map(From::After).unwrap_or(From::Unknown)
            }
            _ => From::Unknown,
        }
    }

    /// Numbers, buffers and fans out one event; returns its frame.
    pub fn publish(&self, kind: &str, data: &str) -> Arc<Frame> {
        let mut inner = lock(&self.inner);
        let seq = inner.next;
        inner.next += 1;
        let text = Bytes::from(format!(
            "event: {kind}\nid: {}\ndata: {data}\n\n",
            self.id(seq)
        ));
        let frame = Arc::new(Frame { seq, text });
        inner.bytes += frame.text.len();
        inner.frames.push_back(frame.clone());
        while inner.frames.len() > REPLAY_EVENTS || inner.bytes > REPLAY_BYTES {
            match inner.frames.pop_front() {
                Some(old) => inner.bytes -= old.text.len(),
                None => break,
            }
        }
        inner.subs.retain(|s| s.send(frame.text.clone()));
        frame
    }

    /// A new stream: the replay `from` asks for, then live frames.
    pub fn subscribe(&self, from: From, conn: Option<CancellationToken>) -> Subscription {
        let (out, inlet) = outlet(conn);
        let mut inner = lock(&self.inner);
        let oldest = inner.frames.front().map_or(inner.next, |f| f.seq);
        let (replay, resync): (Vec<Bytes>, bool) = match from {
            From::Now => (Vec::new(), false),
            From::Start => (inner.frames.iter().map(|f| f.text.clone()).collect(), false),
            From::Unknown => (Vec::new(), true),
            From::After(seq) if seq >= inner.next => (Vec::new(), true),
            From::After(seq) if seq + 1 < oldest => (Vec::new(), true),
            From::After(seq) => (
                inner
                    .frames
                    .iter()
                    .filter(|f| f.seq > seq)
                    .map(|f| f.text.clone())
                    .collect(),
                false,
            ),
        };
        if !inner.closed {
            inner.subs.push(out);
        }
        Subscription {
            replay,
            resync,
            inlet,
        }
    }

    /// Ends every stream (the session closed).
    pub fn close(&self) {
        let mut inner = lock(&self.inner);
        inner.closed = true;
        inner.subs.clear();
    }

    /// How many frames are buffered and their bytes.
    #[cfg(test)]
    pub fn buffered(&self) -> (usize, usize) {
        let inner = lock(&self.inner);
        (inner.frames.len(), inner.bytes)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn replay_is_bounded_and_a_gone_id_asks_for_a_resync() {
        let hub = Hub::new("e1");
        for i in 0..(REPLAY_EVENTS + 10) {
            hub.publish("x", &format!("{{\"n\":{i}}}"));
        }
        assert_eq!(hub.buffered().0, REPLAY_EVENTS);
        let s = hub.subscribe(From::After(3), None);
        assert!(s.resync);
        let last = (REPLAY_EVENTS + 8) as u64;
        let s = hub.subscribe(hub.parse_id(&hub.id(last)), None);
        assert!(!s.resync);
        assert_eq!(s.replay.len(), 1);
        assert_eq!(hub.parse_id("other-3"), From::Unknown);
        assert!(hub.subscribe(From::Unknown, None).resync);
        assert_eq!(hub.subscribe(From::Start, None).replay.len(), REPLAY_EVENTS);
    }

    #[test]
    fn a_big_event_stream_stays_under_four_mebibytes() {
        let hub = Hub::new("e");
        let data = format!("\"{}\"", "y".repeat(64 * 1024));
        for _ in 0..200 {
            hub.publish("x", &data);
        }
        let (n, bytes) = hub.buffered();
        assert!(bytes <= REPLAY_BYTES && n < 200, "{n} {bytes}");
    }

    #[test]
    fn an_outlet_past_its_limit_is_cut_off() {
        let (out, inlet) = outlet(None);
        let chunk = Bytes::from(vec![b'a'; 1024 * 1024]);
        for _ in 0..8 {
            assert!(out.send(chunk.clone()));
        }
        assert!(!out.send(chunk.clone()));
        assert!(inlet.cut.load(Ordering::SeqCst));
    }
}
