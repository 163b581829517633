//! Server-sent events decoded read by read: lines are split by `sseer`'s line parser
//! ([`sseer::parser::parse_line`]) and assembled into events by the WHATWG rules, exactly as
//! `sseer::EventStream` assembles them, but each event is handed to a callback borrowed from
//! the read it arrived in. The usual event (one `data:` line inside one read) costs no
//! allocation, no reference count and no poll of its own; only an event that spans reads or
//! has several data lines is copied.

use std::ops::ControlFlow;
use std::str::Utf8Error;

use sseer::parser::{parse_line, RawEventLine};

/// The byte order mark a stream may start with (dropped).
const BOM: &[u8] = b"\xEF\xBB\xBF";
/// Event type of an event without an `event:` field.
const MESSAGE: &str = "message";

/// Decoder state carried from one read to the next.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    /// The first bytes, kept until it is known whether they are a byte order mark.
    started: bool,
    /// The last line of the previous read, not ended yet (a trailing CR is kept with it: it
    /// may be the first half of CRLF).
    line: Vec<u8>,
    /// The event in progress when it spans reads or has several data lines.
    owned: OwnedEvent,
}

/// An event in progress, copied.
#[derive(Debug, Default)]
struct OwnedEvent {
    /// Whether anything is held here (otherwise the event, if any, is borrowed).
    active: bool,
    /// The last `event:` value.
    name: String,
    /// The joined `data:` values; `None` before the first.
    data: Option<String>,
}

/// An event in progress whose values are borrowed from the current read.
#[derive(Debug, Default, Clone, Copy)]
struct Borrowed<'a> {
    name: Option<&'a str>,
    data: Option<&'a str>,
}

/// One decoded line.
enum Line<'a> {
    /// A blank line: dispatch.
    Blank,
    /// A `data` field.
    Data(&'a str),
    /// An `event` field.
    Event(&'a str),
    /// Anything else (comments, `id`, `retry`, unknown fields).
    Other,
}

/// Reads one line as `sseer` validates it: field values must be UTF-8, names and comments
/// are not looked at.
fn classify(line: RawEventLine<'_>) -> Result<Line<'_>, Utf8Error> {
    match line {
        RawEventLine::Empty => Ok(Line::Blank),
        RawEventLine::Comment => Ok(Line::Other),
        RawEventLine::Field {
            field_name,
            field_value,
        } => {
            let value = field_value.map(std::str::from_utf8).transpose()?;
            Ok(match (field_name, value) {
                (b"data", v) => Line::Data(v.unwrap_or("")),
                (b"event", Some(v)) => Line::Event(v),
                _ => Line::Other,
            })
        }
    }
}

impl OwnedEvent {
    /// Takes over a borrowed event in progress.
    fn adopt(&mut self, b: Borrowed<'_>) {
        if let Some(n) = b.name {
            self.name.clear();
            self.name.push_str(n);
        }
        if let Some(d) = b.data {
            self.push_data(d);
        }
        self.active = true;
    }

    fn push_data(&mut self, d: &str) {
        match &mut self.data {
            Some(data) => {
                data.push('\n');
                data.push_str(d);
            }
            None => self.data = Some(d.to_owned()),
        }
    }

    fn clear(&mut self) {
        self.active = false;
        self.name.clear();
        self.data = None;
    }
}

impl SseDecoder {
    /// Decodes one read of the body, calling `on_event(type, data)` for every event it
    /// completes; stops early when the callback breaks. A field value that is not UTF-8 is an
    /// error (the stream cannot be trusted past it).
    pub(crate) fn feed<B>(
        &mut self,
        bytes: &[u8],
        on_event: &mut impl FnMut(&str, &str) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>, Utf8Error> {
        if bytes.is_empty() {
            // Nothing to decide on (a CR held from the last read may still be half a CRLF).
            return Ok(ControlFlow::Continue(()));
        }
        if !self.started {
            return self.feed_start(bytes, on_event);
        }
        let mut bytes = bytes;
        if self.line.last() == Some(&b'\r') {
            // The previous read ended its last line with CR; a LF here is the rest of CRLF.
            self.line.pop();
            bytes = bytes.strip_prefix(b"\n").unwrap_or(bytes);
            if let ControlFlow::Break(b) = self.held_line(on_event)? {
                return Ok(ControlFlow::Break(b));
            }
        } else if !self.line.is_empty() {
            // The previous read's last line: complete it from this read, or keep waiting.
            let Some(end) = memchr::memchr2(b'\r', b'\n', bytes) else {
                self.line.extend_from_slice(bytes);
                return Ok(ControlFlow::Continue(()));
            };
            let used = match (bytes[end], bytes.get(end + 1)) {
                (b'\r', Some(b'\n')) => end + 2,
                (b'\r', None) => {
                    // CR or the first half of CRLF: decided by the next read.
                    self.line.extend_from_slice(bytes);
                    return Ok(ControlFlow::Continue(()));
                }
                _ => end + 1,
            };
            self.line.extend_from_slice(&bytes[..end]);
            if let ControlFlow::Break(b) = self.held_line(on_event)? {
                return Ok(ControlFlow::Break(b));
            }
            bytes = &bytes[used..];
        }
        self.lines(bytes, on_event)
    }

    /// The end of the body: a last line ended by CR still counts (as `sseer` counts it); an
    /// unterminated line or event is dropped.
    pub(crate) fn finish<B>(
        &mut self,
        on_event: &mut impl FnMut(&str, &str) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>, Utf8Error> {
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
            return self.held_line(on_event);
        }
        self.line.clear();
        Ok(ControlFlow::Continue(()))
    }

    /// The first bytes of the body: a byte order mark is dropped, even when it is split
    /// across reads.
    fn feed_start<B>(
        &mut self,
        bytes: &[u8],
        on_event: &mut impl FnMut(&str, &str) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>, Utf8Error> {
        let mut head = std::mem::take(&mut self.line);
        head.extend_from_slice(bytes);
        if head.len() < BOM.len() && BOM.starts_with(&head) {
            self.line = head;
            return Ok(ControlFlow::Continue(()));
        }
        self.started = true;
        let body = head.strip_prefix(BOM).unwrap_or(&head);
        self.feed(body, on_event)
    }

    /// Handles the completed line held in `self.line` (no end-of-line bytes in it).
    fn held_line<B>(
        &mut self,
        on_event: &mut impl FnMut(&str, &str) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>, Utf8Error> {
        let mut line = std::mem::take(&mut self.line);
        line.push(b'\n');
        let flow = match parse_line(&line) {
            Some((raw, _)) => match classify(raw)? {
                Line::Blank => self.dispatch(Borrowed::default(), on_event),
                Line::Data(d) => {
                    self.owned.active = true;
                    self.owned.push_data(d);
                    ControlFlow::Continue(())
                }
                Line::Event(n) => {
                    self.owned.adopt(Borrowed {
                        name: Some(n),
                        data: None,
                    });
                    ControlFlow::Continue(())
                }
                Line::Other => ControlFlow::Continue(()),
            },
            None => ControlFlow::Continue(()),
        };
        line.clear();
        self.line = line;
        Ok(flow)
    }

    /// Decodes the complete lines of `bytes`; the unterminated rest is kept for the next read.
    fn lines<B>(
        &mut self,
        bytes: &[u8],
        on_event: &mut impl FnMut(&str, &str) -> ControlFlow<B>,
    ) -> Result<ControlFlow<B>, Utf8Error> {
        let mut cur = Borrowed::default();
        let mut rest = bytes;
        while let Some((raw, next)) = parse_line(rest) {
            rest = next;
            match classify(raw)? {
                Line::Blank => {
                    let flow = self.dispatch(cur, on_event);
                    cur = Borrowed::default();
                    if flow.is_break() {
                        return Ok(flow);
                    }
                }
                Line::Data(d) if self.owned.active || cur.data.is_some() => {
                    self.owned.adopt(std::mem::take(&mut cur));
                    self.owned.push_data(d);
                }
                Line::Data(d) => cur.data = Some(d),
                Line::Event(n) if self.owned.active => self.owned.adopt(Borrowed {
                    name: Some(n),
                    data: None,
                }),
                Line::Event(n) => cur.name = Some(n),
                Line::Other => {}
            }
        }
        if cur.name.is_some() || cur.data.is_some() {
            self.owned.adopt(cur);
        }
        self.line.extend_from_slice(rest);
        Ok(ControlFlow::Continue(()))
    }

    /// Ends the event in progress: hands it over if it has data, and forgets it.
    fn dispatch<B>(
        &mut self,
        cur: Borrowed<'_>,
        on_event: &mut impl FnMut(&str, &str) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        if self.owned.active {
            let flow = match &self.owned.data {
                Some(data) => on_event(non_empty_or_message(&self.owned.name), data),
                None => ControlFlow::Continue(()),
            };
            self.owned.clear();
            flow
        } else {
            match cur.data {
                Some(data) => on_event(non_empty_or_message(cur.name.unwrap_or("")), data),
                None => ControlFlow::Continue(()),
            }
        }
    }
}

/// The event type to report: `message` when none was given.
fn non_empty_or_message(name: &str) -> &str {
    if name.is_empty() {
        MESSAGE
    } else {
        name
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;
