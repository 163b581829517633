//! Streams a command's output to the session as partial tool output (`tool_output` events)
//! while it runs, without ever blocking the command on a slow consumer.

use cairn_engine::ToolHost;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Bytes of output streamed per call at most (the result still carries all of it).
const STREAM_CAP: usize = 1024 * 1024;

/// A forwarder of output chunks to `host.output`.
pub(crate) struct PartialOutput {
    tx: Option<mpsc::UnboundedSender<Vec<u8>>>,
    task: Option<JoinHandle<()>>,
    sent: usize,
}

impl PartialOutput {
    /// A forwarder to `host`; inert when the host is detached.
    pub(crate) fn new(host: &ToolHost) -> Self {
        if !host.is_attached() {
            return PartialOutput {
                tx: None,
                task: None,
                sent: 0,
            };
        }
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let host = host.clone();
        let task = tokio::spawn(async move {
            let mut pending: Vec<u8> = Vec::new();
            while let Some(chunk) = rx.recv().await {
                pending.extend_from_slice(&chunk);
                // Coalesce whatever else already arrived.
                while let Ok(more) = rx.try_recv() {
                    pending.extend_from_slice(&more);
                }
                // Keep an incomplete UTF-8 sequence for the next chunk.
                let valid = match std::str::from_utf8(&pending) {
                    Ok(_) => pending.len(),
                    Err(e) if e.error_len().is_none() => e.valid_up_to(),
                    Err(_) => pending.len(),
                };
                if valid == 0 {
                    continue;
                }
                let text = String::from_utf8_lossy(&pending[..valid]).into_owned();
                pending.drain(..valid);
                host.output(text).await;
            }
            if !pending.is_empty() {
                host.output(String::from_utf8_lossy(&pending).into_owned())
                    .await;
            }
        });
        PartialOutput {
            tx: Some(tx),
            task: Some(task),
            sent: 0,
        }
    }

    /// Queues a chunk (dropped past the streaming cap).
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        if let Some(tx) = &self.tx {
            if self.sent < STREAM_CAP {
                let take = chunk.len().min(STREAM_CAP - self.sent);
                self.sent += take;
                let _ = tx.send(chunk[..take].to_vec());
            }
        }
    }

    /// Waits until everything queued was emitted (so it precedes `tool_finished`).
    pub(crate) async fn finish(mut self) {
        self.tx.take();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}
