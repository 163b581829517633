//! The legacy HTTP+SSE transport (MCP 2024-11-05), which rmcp 3 no longer ships: `GET` the
//! event stream, wait for its `endpoint` event, `POST` every message there, read answers as
//! `message` events. Built on rmcp's sink/stream adapter.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use futures::channel::mpsc;
use futures::{Stream, StreamExt};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::sink_stream::SinkStreamTransport;
use sseer::EventStream;
use tokio::task::AbortHandle;

use crate::http::header_map;
use crate::ServerError;

/// Messages from the server; dropping it stops the reader.
pub struct SseRx {
    rx: mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleClient>>,
    reader: AbortHandle,
}

impl Stream for SseRx {
    type Item = RxJsonRpcMessage<RoleClient>;
    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.rx.poll_next_unpin(cx)
    }
}

impl Drop for SseRx {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The transport type handed to rmcp.
pub type SseTransportInner =
    SinkStreamTransport<mpsc::UnboundedSender<TxJsonRpcMessage<RoleClient>>, SseRx>;

/// Builder for the legacy SSE transport.
pub struct SseTransport;

impl SseTransport {
    /// Opens the event stream and waits (until `deadline`) for the `endpoint` event.
    pub async fn connect(
        url: &str,
        headers: &BTreeMap<String, String>,
        deadline: Instant,
    ) -> Result<SseTransportInner, ServerError> {
        let base = reqwest::Url::parse(url)
            .map_err(|e| ServerError::Transport(format!("bad URL {url}: {e}")))?;
        let headers = header_map(headers)?;
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| ServerError::Transport(format!("cannot build the HTTP client: {e}")))?;
        let mut get = client
            .get(base.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream");
        for (k, v) in &headers {
            get = get.header(k, v);
        }
        let open = async {
            let resp = get
                .send()
                .await
                .map_err(|e| format!("cannot open the event stream at {url}: {e}"))?;
            if !resp.status().is_success() {
                return Err(format!(
                    "the event stream at {url} answered HTTP {}",
                    resp.status()
                ));
            }
            let mut events = EventStream::new(resp.bytes_stream());
            while let Some(ev) = events.next().await {
                let ev = ev.map_err(|e| format!("event stream error: {e}"))?;
                if ev.event == "endpoint" {
                    let endpoint = base
                        .join(ev.data.trim())
                        .map_err(|e| format!("bad endpoint `{}`: {e}", ev.data.trim()))?;
                    return Ok((endpoint, events));
                }
            }
            Err("the event stream ended before announcing its endpoint".to_string())
        };
        let (endpoint, mut events) = tokio::time::timeout_at(deadline.into(), open)
            .await
            .map_err(|_| ServerError::Start(format!("no `endpoint` event from {url} in time")))?
            .map_err(ServerError::Start)?;
        let (in_tx, in_rx) = mpsc::unbounded::<RxJsonRpcMessage<RoleClient>>();
        let reader = tokio::spawn(async move {
            while let Some(ev) = events.next().await {
                let Ok(ev) = ev else { break };
                if ev.event != "message" && !ev.event.is_empty() {
                    continue;
                }
                match serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&ev.data) {
                    Ok(msg) => {
                        if in_tx.unbounded_send(msg).is_err() {
                            break;
                        }
                    }
                    Err(e) => tracing::warn!("unreadable SSE message from the server: {e}"),
                }
            }
        });
        let (out_tx, mut out_rx) = mpsc::unbounded::<TxJsonRpcMessage<RoleClient>>();
        let reader_abort = reader.abort_handle();
        let writer_abort = reader.abort_handle();
        tokio::spawn(async move {
            while let Some(msg) = out_rx.next().await {
                let mut post = client.post(endpoint.clone()).json(&msg);
                for (k, v) in &headers {
                    post = post.header(k, v);
                }
                match post.send().await {
                    Ok(r) if r.status().is_success() => {}
                    Ok(r) => {
                        tracing::warn!(status = %r.status(), "MCP SSE server refused a message; closing");
                        writer_abort.abort();
                        return;
                    }
                    Err(e) => {
                        tracing::warn!("cannot post to the MCP SSE server: {e}; closing");
                        writer_abort.abort();
                        return;
                    }
                }
            }
        });
        Ok(SinkStreamTransport::new(
            out_tx,
            SseRx {
                rx: in_rx,
                reader: reader_abort,
            },
        ))
    }
}
