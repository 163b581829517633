//! Audio transcription through an OpenAI-compatible `/audio/transcriptions` endpoint
//! (OpenAI's `whisper-1` / `gpt-4o-transcribe`, Groq, a local whisper server, ...).

use std::path::Path;
use std::time::Duration;

use cairn_engine::{ToolContext, ToolError};

use crate::web::HttpConfig;

/// Largest audio file sent (the OpenAI limit).
pub const MAX_AUDIO_BYTES: u64 = 25 * 1024 * 1024;

/// The transcription model and where it is served.
#[derive(Clone)]
pub struct TranscriptionConfig {
    /// API base URL, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Bearer key, when the endpoint needs one.
    pub api_key: Option<String>,
    /// Model id, e.g. `whisper-1`.
    pub model: String,
    /// Time allowed for one transcription.
    pub timeout: Duration,
    /// Connection settings (proxy, user agent).
    pub http: HttpConfig,
}

impl std::fmt::Debug for TranscriptionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptionConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("model", &self.model)
            .field("timeout", &self.timeout)
            .finish()
    }
}

impl TranscriptionConfig {
    /// A configuration with a 5-minute timeout and `SOCKS5_PROXY` honoured.
    pub fn new(
        base_url: impl Into<String>,
        api_key: Option<String>,
        model: impl Into<String>,
    ) -> Self {
        TranscriptionConfig {
            base_url: base_url.into(),
            api_key,
            model: model.into(),
            timeout: Duration::from_secs(300),
            http: HttpConfig::from_env(),
        }
    }
}

/// Transcribes the audio file at `path` (`mime` its type, `shown` its name in messages).
pub async fn transcribe(
    cfg: &TranscriptionConfig,
    path: &Path,
    shown: &str,
    mime: &str,
    ctx: &ToolContext,
) -> Result<String, ToolError> {
    let len = tokio::fs::metadata(path)
        .await
        .map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?
        .len();
    if len > MAX_AUDIO_BYTES {
        return Err(ToolError::Failed(format!(
            "{shown} is {} MB; transcription takes audio files up to {} MB",
            len / (1024 * 1024),
            MAX_AUDIO_BYTES / (1024 * 1024)
        )));
    }
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?;
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "audio".into());
    let part = reqwest::multipart::Part::bytes(bytes)
        .file_name(file_name)
        .mime_str(mime)
        .map_err(|e| ToolError::Failed(format!("bad audio type {mime}: {e}")))?;
    let form = reqwest::multipart::Form::new()
        .text("model", cfg.model.clone())
        .text("response_format", "json")
        .part("file", part);
    let client = cfg
        .http
        .client(3)
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    let url = format!(
        "{}/audio/transcriptions",
        cfg.base_url.trim_end_matches('/')
    );
    let mut req = client.post(&url).timeout(cfg.timeout).multipart(form);
    if let Some(key) = &cfg.api_key {
        req = req.bearer_auth(key);
    }
    let resp = tokio::select! {
        r = req.send() => r.map_err(|e| ToolError::Failed(format!(
            "transcription request to {} failed: {}", cfg.base_url, e.without_url()
        )))?,
        _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
    };
    let status = resp.status();
    let body = tokio::select! {
        b = resp.text() => b.map_err(|e| ToolError::Failed(format!(
            "transcription answer could not be read: {}", e.without_url()
        )))?,
        _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
    };
    if !status.is_success() {
        let snippet: String = body.chars().take(300).collect();
        return Err(ToolError::Failed(format!(
            "the transcription model {} answered HTTP {status}: {snippet}",
            cfg.model
        )));
    }
    let v: serde_json::Value = serde_json::from_str(&body)
        .map_err(|e| ToolError::Failed(format!("the transcription answer is not JSON: {e}")))?;
    let text = v["text"]
        .as_str()
        .ok_or_else(|| ToolError::Failed("the transcription answer has no `text` field".into()))?;
    Ok(text.trim().to_string())
}
