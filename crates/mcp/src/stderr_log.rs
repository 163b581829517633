//! A bounded log of a server's stderr: the newest bytes are kept, older ones counted and
//! dropped, so a server that floods stderr costs a fixed amount of memory and never blocks.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::watch;

/// Shared handle on one server's stderr tail.
#[derive(Clone, Debug)]
pub struct StderrLog {
    inner: Arc<Mutex<Ring>>,
    closed: Arc<watch::Sender<bool>>,
}

#[derive(Debug)]
struct Ring {
    buf: VecDeque<u8>,
    cap: usize,
    dropped: u64,
}

impl StderrLog {
    /// A log keeping at most `cap` bytes.
    pub fn new(cap: usize) -> Self {
        StderrLog {
            inner: Arc::new(Mutex::new(Ring {
                buf: VecDeque::with_capacity(cap.min(4096)),
                cap: cap.max(1),
                dropped: 0,
            })),
            closed: Arc::new(watch::channel(false).0),
        }
    }

    /// Waits up to `within` for the stream to end (so a dead server's last words are in).
    pub async fn wait_closed(&self, within: Duration) {
        let mut rx = self.closed.subscribe();
        let _ = tokio::time::timeout(within, rx.wait_for(|c| *c)).await;
    }

    /// Appends bytes, dropping the oldest beyond the cap.
    pub fn push(&self, bytes: &[u8]) {
        let mut r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let cap = r.cap;
        let bytes = if bytes.len() > cap {
            r.dropped += (bytes.len() - cap) as u64;
            &bytes[bytes.len() - cap..]
        } else {
            bytes
        };
        let overflow = (r.buf.len() + bytes.len()).saturating_sub(cap);
        if overflow > 0 {
            r.buf.drain(..overflow);
            r.dropped += overflow as u64;
        }
        r.buf.extend(bytes);
    }

    /// Bytes dropped so far.
    pub fn dropped(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).dropped
    }

    /// Bytes held now.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .buf
            .len()
    }

    /// Whether nothing was logged.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The last `max_chars` characters (whole lines where possible), noting what was dropped.
    pub fn tail(&self, max_chars: usize) -> String {
        let (bytes, dropped) = {
            let r = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            (r.buf.iter().copied().collect::<Vec<u8>>(), r.dropped)
        };
        let text = String::from_utf8_lossy(&bytes);
        let text = text.trim_end();
        let count = text.chars().count();
        let mut out = if count > max_chars {
            let skip = count - max_chars;
            let cut: String = text.chars().skip(skip).collect();
            match cut.find('\n') {
                Some(i) if i + 1 < cut.len() => cut[i + 1..].to_string(),
                _ => cut,
            }
        } else {
            text.to_string()
        };
        let shown = out.len() as u64;
        let total_dropped = dropped + (text.len() as u64).saturating_sub(shown);
        if total_dropped > 0 && !out.is_empty() {
            out = format!("[… {total_dropped} earlier bytes not shown]\n{out}");
        }
        out
    }

    /// Copies `reader` into the log until it ends (spawn this on its own task).
    pub async fn drain<R: AsyncRead + Unpin>(self, mut reader: R) {
        let mut buf = vec![0u8; 8192];
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => self.push(&buf[..n]),
            }
        }
        self.closed.send_replace(true);
    }
}

/// The last non-blank lines of `text` as a terminal would show them (escape sequences and
/// control characters removed, a `\r` keeping only what follows it), at most `max_lines`
/// lines and `max_bytes` bytes (the oldest line cut at its start when needed).
pub fn clean_lines(text: &str, max_lines: usize, max_bytes: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut bytes = 0;
    for line in text.split('\n').rev() {
        if out.len() >= max_lines || bytes >= max_bytes {
            break;
        }
        let shown = line
            .rsplit('\r')
            .find(|s| !s.trim().is_empty())
            .unwrap_or("");
        let clean = strip_controls(shown);
        let clean = clean.trim();
        if clean.is_empty() || clean.starts_with("[… ") && clean.ends_with("not shown]") {
            continue;
        }
        let room = max_bytes - bytes;
        let kept = if clean.len() > room {
            let mut start = clean.len() - room;
            while !clean.is_char_boundary(start) {
                start += 1;
            }
            format!("…{}", &clean[start..])
        } else {
            clean.to_string()
        };
        bytes += kept.len() + 1;
        out.push(kept);
    }
    out.reverse();
    out
}

/// `s` without ANSI escape sequences (CSI, OSC, two-byte) or other control characters; a tab
/// becomes a space.
fn strip_controls(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates up to a final byte in @..~.
                Some('[') => {
                    for n in chars.by_ref() {
                        if ('@'..='~').contains(&n) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ESC \.
                Some(']') => {
                    while let Some(n) = chars.next() {
                        if n == '\u{7}' {
                            break;
                        }
                        if n == '\u{1b}' {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\t' => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn keeps_the_newest_bytes_within_the_cap() {
        let log = StderrLog::new(32);
        for i in 0..100 {
            log.push(format!("line {i}\n").as_bytes());
        }
        assert!(log.len() <= 32);
        assert!(log.dropped() > 0);
        let t = log.tail(1000);
        assert!(t.ends_with("line 99"), "{t}");
        assert!(t.starts_with("[… "), "{t}");
        log.push(&[b'y'; 100]);
        assert_eq!(log.len(), 32);
    }

    #[test]
    fn tail_cuts_at_a_line_start() {
        let log = StderrLog::new(1024);
        log.push(b"first line\nsecond line\nthird line\n");
        assert_eq!(log.tail(15), "[… 23 earlier bytes not shown]\nthird line");
        assert_eq!(StderrLog::new(8).tail(10), "");
    }

    #[tokio::test]
    async fn drains_a_reader() {
        let log = StderrLog::new(1024);
        log.clone().drain(&b"hello\nworld\n"[..]).await;
        assert_eq!(log.tail(100), "hello\nworld");
        log.wait_closed(Duration::from_secs(5)).await;
        assert!(*log.closed.borrow());
    }

    #[test]
    fn clean_lines_strip_escapes_and_keep_the_newest() {
        let text =
            "\u{1b}[31mred\u{1b}[0m\u{7}\n\n\u{1b}]0;title\u{7}tab\there\r\n10%\r50%\rdone\n  \n";
        assert_eq!(clean_lines(text, 20, 2048), ["red", "tab here", "done"]);
        let many: String = (0..30).map(|i| format!("line {i}\n")).collect();
        let last = clean_lines(&many, 20, 2048);
        assert_eq!(last.len(), 20);
        assert_eq!(last[0], "line 10");
        let capped = clean_lines(&"x".repeat(5000), 20, 100);
        assert_eq!(capped.len(), 1);
        assert!(
            capped[0].starts_with('…') && capped[0].len() <= 103,
            "{capped:?}"
        );
        assert!(clean_lines("[… 12 earlier bytes not shown]\nlast", 5, 100) == ["last"]);
    }
}
