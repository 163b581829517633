//! The built-in OCR server's last fallback (seed §15.6): when `tesseract` is not installed, a
//! multimodal model (the session's, or the configured vision model) transcribes the image.

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use cairn_engine::{answer_text, LlmClient, LlmRequest, ToolContext, ToolError};
use cairn_protocol::{ContentPart, Message};

/// Largest image file sent to the model.
pub const MAX_IMAGE_BYTES: u64 = 10 * 1024 * 1024;

/// What the model is asked to do.
const OCR_PROMPT: &str = "Transcribe all text visible in this image exactly as written, \
    preserving line breaks, reading order and the layout of tables as far as plain text allows. \
    Output only the transcribed text. If there is no text, output exactly: (no text found)";

/// A multimodal model used for OCR when `tesseract` is missing.
#[derive(Clone)]
pub struct OcrModel {
    /// Client of the model's provider.
    pub llm: Arc<dyn LlmClient>,
    /// Model id (must accept images).
    pub model: String,
}

impl std::fmt::Debug for OcrModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OcrModel")
            .field("model", &self.model)
            .finish()
    }
}

/// The MIME type of a PNG, JPEG, GIF or WebP file from its first bytes.
pub fn image_mime(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

impl OcrModel {
    /// Transcribes the image at `path` (`shown` names it in errors).
    pub async fn recognize(
        &self,
        path: &Path,
        shown: &str,
        ctx: &ToolContext,
    ) -> Result<String, ToolError> {
        let len = tokio::fs::metadata(path)
            .await
            .map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?
            .len();
        if len > MAX_IMAGE_BYTES {
            return Err(ToolError::Failed(format!(
                "{shown} is {len} bytes; OCR through the model {} takes images up to {} MB",
                self.model,
                MAX_IMAGE_BYTES / (1024 * 1024)
            )));
        }
        let bytes = tokio::fs::read(path)
            .await
            .map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?;
        let Some(mime) = image_mime(&bytes) else {
            return Err(ToolError::Failed(format!(
                "{shown} is not a PNG, JPEG, GIF or WebP image; without tesseract, OCR goes \
                 through the model {}, which reads only those formats",
                self.model
            )));
        };
        let request = LlmRequest {
            model: self.model.clone(),
            messages: vec![Message::User {
                content: vec![
                    ContentPart::Text {
                        text: OCR_PROMPT.into(),
                    },
                    ContentPart::Image {
                        mime_type: mime.into(),
                        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
                    },
                ],
            }],
            tools: Vec::new(),
            reasoning_effort: None,
            req_id: format!("{}-ocr", ctx.call_id),
        };
        let answer = answer_text(self.llm.stream(request, ctx.cancel.child_token())).await;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Interrupted);
        }
        let text = answer.map_err(|ended| {
            ToolError::Failed(match ended {
                Some(o) => format!(
                    "OCR through the model {} failed: {}",
                    self.model,
                    o.describe()
                ),
                None => format!(
                    "OCR through the model {} ended without an answer",
                    self.model
                ),
            })
        })?;
        let text = text.trim();
        Ok(if text.is_empty() {
            "(no text found)".to_string()
        } else {
            text.to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_image_magic() {
        assert_eq!(image_mime(b"\x89PNG\r\n\x1a\nrest"), Some("image/png"));
        assert_eq!(image_mime(&[0xFF, 0xD8, 0xFF, 0xE0]), Some("image/jpeg"));
        assert_eq!(image_mime(b"GIF89a..."), Some("image/gif"));
        assert_eq!(image_mime(b"RIFF\0\0\0\0WEBPVP8 "), Some("image/webp"));
        assert_eq!(image_mime(b"%PDF-1.7"), None);
        assert_eq!(image_mime(b""), None);
    }
}
