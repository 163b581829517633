//! Server-sent events decoded straight from body bytes (WHATWG event-stream rules, the same
//! dispatch rules as `eventsource-stream`), without a copy of the buffer per line and without
//! an allocation per event: events are lent out as `&str` slices of reused buffers.

use memchr::memchr2;

/// The byte order mark a stream may start with.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A stream that is not valid UTF-8.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Utf8Error(#[from] std::str::Utf8Error);

/// One dispatched event, borrowed from the decoder until the next call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SseEvent<'a> {
    /// The event type (`message` when the stream named none).
    pub event: &'a str,
    /// The data lines joined by `\n`.
    pub data: &'a str,
}

/// Incremental event-stream decoder: push body bytes, then take events until `None`.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    buf: Vec<u8>,
    /// Start of the bytes not decoded yet.
    pos: usize,
    /// Whether the stream's first bytes (and a possible BOM) were seen.
    started: bool,
    /// Event type and data lines of the event being read.
    event: String,
    data: String,
    /// The event handed out last (buffers reused from event to event).
    out_event: String,
    out_data: String,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Appends body bytes.
    pub(crate) fn push(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if self.pos > 0 {
            // Only the unfinished line is kept: the copy is bounded by one line.
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
        if !self.started {
            if self.buf.len() < BOM.len() && BOM.starts_with(&self.buf) {
                return; // maybe a BOM cut in two: wait for more
            }
            self.started = true;
            if self.buf.starts_with(BOM) {
                self.pos = BOM.len();
            }
        }
    }

    /// The next complete event, `None` when more bytes are needed. Bytes that are not UTF-8
    /// end the stream with an error.
    pub(crate) fn next_event(&mut self) -> Result<Option<SseEvent<'_>>, Utf8Error> {
        if !self.started {
            return Ok(None);
        }
        while let Some((line, next)) = self.next_line() {
            let line = std::str::from_utf8(&self.buf[line.0..line.1])?;
            self.pos = next;
            if line.is_empty() {
                if self.dispatch() {
                    return Ok(Some(SseEvent {
                        event: &self.out_event,
                        data: &self.out_data,
                    }));
                }
                continue;
            }
            let (field, value) = match line.find(':') {
                Some(0) => continue, // comment
                Some(i) => {
                    let v = &line[i + 1..];
                    (&line[..i], v.strip_prefix(' ').unwrap_or(v))
                }
                None => (line, ""),
            };
            match field {
                "event" => {
                    self.event.clear();
                    self.event.push_str(value);
                }
                "data" => {
                    self.data.push_str(value);
                    self.data.push('\n');
                }
                // `id` and `retry` matter only to reconnecting clients; others are ignored.
                _ => {}
            }
        }
        Ok(None)
    }

    /// The next complete line as (start, end) in `buf` and the position after its end, or
    /// `None` when the line is not terminated yet (a CR at the very end may be half a CRLF).
    fn next_line(&self) -> Option<((usize, usize), usize)> {
        let rest = &self.buf[self.pos..];
        let i = memchr2(b'\n', b'\r', rest)?;
        let end = self.pos + i;
        if rest[i] == b'\n' {
            return Some(((self.pos, end), end + 1));
        }
        match rest.get(i + 1) {
            None => None,
            Some(b'\n') => Some(((self.pos, end), end + 2)),
            Some(_) => Some(((self.pos, end), end + 1)),
        }
    }

    /// Ends the current event at a blank line; whether it has data to hand out.
    fn dispatch(&mut self) -> bool {
        if self.data.is_empty() {
            self.event.clear();
            return false;
        }
        self.data.pop(); // the `\n` after the last data line
        std::mem::swap(&mut self.data, &mut self.out_data);
        self.data.clear();
        self.out_event.clear();
        self.out_event.push_str(if self.event.is_empty() {
            "message"
        } else {
            &self.event
        });
        self.event.clear();
        true
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
