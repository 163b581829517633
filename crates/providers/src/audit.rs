//! The request audit log (seed `logDir`): a decorator around any [`LlmClient`] that writes
//! one request file and one response file per request, under `<dir>/<YYYY-MM-DD>/`, named
//! by request id. Keys and credential headers are redacted, key-looking tokens masked, and
//! base64 attachments elided unless asked for.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use cairn_engine::{LlmChunk, LlmClient, LlmOutcome, LlmRequest};
use cairn_protocol::{Message, TokenUsage, ToolCall};
use futures::stream::BoxStream;
use futures::StreamExt;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::catalog::ModelCatalog;
use crate::http::is_secret_header;
use crate::redact::{Redactor, REDACTED};

/// What the log says about the endpoint (the client itself is opaque to the decorator).
#[derive(Clone, Default)]
pub struct AuditMeta {
    /// Provider name (`openai`, `anthropic`, …).
    pub provider: String,
    /// Endpoint base URL (credentials in it are dropped when written).
    pub endpoint: String,
    /// Headers the client sends (credential values are written as `[redacted]`).
    pub headers: Vec<(String, String)>,
    /// Secrets to scrub from everything written (the API key, secret header values).
    pub secrets: Vec<String>,
    /// Keep base64 attachments instead of eliding them.
    pub include_attachments: bool,
}

impl std::fmt::Debug for AuditMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditMeta")
            .field("provider", &self.provider)
            .field("endpoint", &crate::classify::display_base(&self.endpoint))
            .field("secrets", &self.secrets.len())
            .finish()
    }
}

/// A client that writes an audit trail of every request it forwards.
pub struct AuditLog {
    inner: Arc<dyn LlmClient>,
    dir: PathBuf,
    meta: Arc<AuditMeta>,
    redactor: Redactor,
    catalog: Arc<ModelCatalog>,
}

impl AuditLog {
    /// Wraps `inner`, writing under `dir`.
    pub fn new(inner: Arc<dyn LlmClient>, dir: impl Into<PathBuf>, meta: AuditMeta) -> AuditLog {
        let redactor = Redactor::new(meta.secrets.iter().map(String::as_str));
        AuditLog {
            inner,
            dir: dir.into(),
            meta: Arc::new(meta),
            redactor,
            catalog: Arc::new(ModelCatalog::builtin().clone()),
        }
    }

    /// Prices costs with this catalog instead of the built-in one.
    pub fn with_catalog(mut self, catalog: Arc<ModelCatalog>) -> AuditLog {
        self.catalog = catalog;
        self
    }
}

/// A file-name-safe form of a request id.
fn file_stem(req_id: &str) -> String {
    let s: String = req_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if s.is_empty() {
        uuid::Uuid::new_v4().to_string()
    } else {
        s
    }
}

/// Replaces every string in `v` by its scrubbed form; elides `data:…;base64,` strings.
fn scrub_value(v: &mut Value, redactor: &Redactor, keep_attachments: bool) {
    match v {
        Value::String(s) => {
            if !keep_attachments && s.starts_with("data:") && s.contains(";base64,") {
                *s = format!("[base64 elided: {} chars]", s.len());
            } else {
                *s = redactor.scrub(s);
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|i| scrub_value(i, redactor, keep_attachments)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|i| scrub_value(i, redactor, keep_attachments)),
        _ => {}
    }
}

/// A history message for the log, images elided unless kept.
fn message_json(m: &Message, keep_attachments: bool) -> Value {
    let mut v = serde_json::to_value(m).unwrap_or(Value::Null);
    if keep_attachments {
        return v;
    }
    if let Some(parts) = v.get_mut("content").and_then(Value::as_array_mut) {
        for p in parts {
            if p["type"] == "image" {
                let n = p["data"].as_str().map_or(0, str::len);
                p["data"] = json!(format!("[base64 elided: {n} chars]"));
            }
        }
    }
    v
}

fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// Writes `value` as pretty JSON to `path` (owner-only on Unix); failures are logged.
fn write_json(path: &Path, value: &Value) {
    let result = (|| -> std::io::Result<()> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut f = opts.open(path)?;
        let text = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
        std::io::Write::write_all(&mut f, &text)
    })();
    if let Err(e) = result {
        tracing::warn!(path = %path.display(), error = %e, "could not write the LLM audit log");
    }
}

/// What one response produced, collected as it streams.
#[derive(Default)]
struct Collected {
    text: String,
    reasoning: String,
    calls: Vec<ToolCall>,
    usage: Option<TokenUsage>,
}

/// Writes the response file once, when the stream ends or is dropped.
struct ResponseWriter {
    path: PathBuf,
    req_id: String,
    model: String,
    started: Instant,
    redactor: Redactor,
    catalog: Arc<ModelCatalog>,
    collected: Collected,
    written: bool,
}

impl ResponseWriter {
    fn observe(&mut self, chunk: &LlmChunk) {
        match chunk {
            LlmChunk::Text(t) => self.collected.text.push_str(t),
            LlmChunk::Reasoning(t) => self.collected.reasoning.push_str(t),
            LlmChunk::ToolCall(c) => self.collected.calls.push(c.clone()),
            LlmChunk::Usage(u) => self.collected.usage = Some(*u),
            LlmChunk::End(o) => self.write(Some(o)),
        }
    }

    fn write(&mut self, outcome: Option<&LlmOutcome>) {
        if self.written {
            return;
        }
        self.written = true;
        let c = &self.collected;
        let outcome = match outcome {
            Some(o) => json!({
                "status": o.status, "kind": o.kind, "httpStatus": o.http_status,
                "message": o.message,
                "retryAfterMs": o.retry_after.map(|d| d.as_millis() as u64),
            }),
            None => json!({ "status": "dropped", "message": "the consumer stopped reading" }),
        };
        let cost = c
            .usage
            .as_ref()
            .and_then(|u| self.catalog.cost_usd(&self.model, u));
        let mut v = json!({
            "reqId": self.req_id,
            "time": now().to_rfc3339(),
            "durationMs": self.started.elapsed().as_millis() as u64,
            "outcome": outcome,
            "text": c.text,
            "reasoning": c.reasoning,
            "toolCalls": c.calls,
            "usage": c.usage,
            "costUsd": cost,
        });
        scrub_value(&mut v, &self.redactor, true);
        write_json(&self.path, &v);
    }
}

impl Drop for ResponseWriter {
    fn drop(&mut self) {
        self.write(None);
    }
}

impl LlmClient for AuditLog {
    fn secrets(&self) -> Vec<String> {
        self.inner.secrets()
    }

    fn stream(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxStream<'static, LlmChunk> {
        let started = now();
        let day = self.dir.join(started.format("%Y-%m-%d").to_string());
        let stem = file_stem(&request.req_id);
        let keep = self.meta.include_attachments;
        let headers: serde_json::Map<String, Value> = self
            .meta
            .headers
            .iter()
            .map(|(k, v)| {
                let shown = if is_secret_header(k) {
                    REDACTED.to_string()
                } else {
                    v.clone()
                };
                (k.clone(), json!(shown))
            })
            .collect();
        let mut req = json!({
            "reqId": request.req_id,
            "time": started.to_rfc3339(),
            "provider": self.meta.provider,
            "endpoint": crate::classify::display_base(&self.meta.endpoint),
            "headers": headers,
            "model": request.model,
            "reasoningEffort": request.reasoning_effort.map(|e| e.as_str()),
            "messages": request.messages.iter().map(|m| message_json(m, keep)).collect::<Vec<_>>(),
            "tools": request.tools,
        });
        scrub_value(&mut req, &self.redactor, keep);
        write_json(&day.join(format!("{stem}.request.json")), &req);
        let mut writer = ResponseWriter {
            path: day.join(format!("{stem}.response.json")),
            req_id: request.req_id.clone(),
            model: request.model.clone(),
            started: Instant::now(),
            redactor: self.redactor.clone(),
            catalog: self.catalog.clone(),
            collected: Collected::default(),
            written: false,
        };
        self.inner
            .stream(request, cancel)
            .map(move |chunk| {
                writer.observe(&chunk);
                chunk
            })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stems_are_safe() {
        assert_eq!(file_stem("abc-123_x"), "abc-123_x");
        assert_eq!(file_stem("../../etc/passwd"), "______etc_passwd");
        assert!(!file_stem("").is_empty());
    }

    #[test]
    fn scrubbing_elides_data_urls_and_masks_keys() {
        let r = Redactor::new(["my-secret-key-123"]);
        let mut v = json!({"a": ["data:image/png;base64,AAAA", "key my-secret-key-123"],
                           "b": {"c": "Bearer abcdef12345"}});
        scrub_value(&mut v, &r, false);
        let s = v.to_string();
        assert!(s.contains("[base64 elided: 26 chars]"), "{s}");
        assert!(
            !s.contains("my-secret") && !s.contains("abcdef12345"),
            "{s}"
        );
    }
}
