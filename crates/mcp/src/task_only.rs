//! Tools a server offers only as tasks (`execution.taskSupport: "required"`, 2025-11-25):
//! Cairn does not run task-augmented calls yet, so such a tool would always fail. The MCP
//! library's tool type drops `execution`, so a stdio server's output is read on its way in
//! and the names of those tools are noted; the listing leaves them out and names each once.
//! (An HTTP server's task-only tools are offered and fail with the server's own error.)

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use serde_json::Value;
use tokio::io::{AsyncRead, ReadBuf};

/// Longest line inspected (longer ones are passed on unread).
const MAX_LINE: usize = 8 * 1024 * 1024;

/// Line buffer kept between lines; a larger one is given back.
const KEEP_CAPACITY: usize = 64 * 1024;

/// The names of the tools a server offers only as tasks, as seen so far.
#[derive(Debug, Clone, Default)]
pub struct TaskOnly(Arc<Mutex<HashSet<String>>>);

impl TaskOnly {
    /// Whether `tool` may only be called as a task.
    pub fn contains(&self, tool: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
    }

    /// Notes the task-only tools of one JSON-RPC message (a `tools/list` result).
    pub fn note_line(&self, line: &[u8]) {
        if !contains(line, b"taskSupport") {
            return;
        }
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let Some(tools) = v
            .get("result")
            .and_then(|r| r.get("tools"))
            .and_then(Value::as_array)
        else {
            return;
        };
        let mut set = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        for t in tools {
            let required = t
                .get("execution")
                .and_then(|e| e.get("taskSupport"))
                .and_then(Value::as_str)
                == Some("required");
            if let (true, Some(name)) = (required, t.get("name").and_then(Value::as_str)) {
                set.insert(name.to_string());
            }
        }
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// A server's stdout, read through: each line is shown to a [`TaskOnly`] on its way.
pub struct Sniffed<R> {
    inner: R,
    line: Vec<u8>,
    too_long: bool,
    seen: TaskOnly,
}

impl<R> Sniffed<R> {
    /// Reads `inner`, noting task-only tools into `seen`.
    pub fn new(inner: R, seen: TaskOnly) -> Self {
        Sniffed {
            inner,
            line: Vec::new(),
            too_long: false,
            seen,
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for Sniffed<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            for &b in &buf.filled()[before..] {
                if b == b'\n' {
                    if !this.too_long {
                        this.seen.note_line(&this.line);
                    }
                    this.line.clear();
                    // One huge message does not keep its buffer for the connection's life.
                    if this.line.capacity() > KEEP_CAPACITY {
                        this.line = Vec::new();
                    }
                    this.too_long = false;
                } else if this.line.len() < MAX_LINE {
                    this.line.push(b);
                } else {
                    this.too_long = true;
                }
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use tokio::io::AsyncReadExt;

    #[tokio::test]
    async fn task_only_tools_are_noted_from_a_listing_split_across_reads() {
        let listing = br#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","inputSchema":{}},{"name":"research","inputSchema":{},"execution":{"taskSupport":"required"}},{"name":"b","execution":{"taskSupport":"optional"}}]}}"#;
        let mut input = listing.to_vec();
        input.push(b'\n');
        let seen = TaskOnly::default();
        let (mut w, r) = tokio::io::duplex(16);
        let mut sniffed = Sniffed::new(r, seen.clone());
        let writer = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            w.write_all(&input).await.unwrap();
        });
        let mut out = Vec::new();
        sniffed.read_to_end(&mut out).await.unwrap();
        writer.await.unwrap();
        assert_eq!(&out[..out.len() - 1], &listing[..], "passed on unchanged");
        assert!(seen.contains("research"));
        assert!(!seen.contains("a") && !seen.contains("b"));
    }
}
