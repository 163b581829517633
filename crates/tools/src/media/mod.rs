//! `media` (seed §7.1, external risk): understands a media file in the workspace (or an
//! attachment saved there). What it does depends on the file's type, found from its content:
//!
//! - image: a description (or the answer to `question`) by the vision-capable model;
//! - audio: a transcript by the configured transcription model;
//! - video: container and stream metadata (ffprobe when installed, else the MP4 header).
//!
//! A kind the configured models cannot handle ends with a clear "unsupported by this model".

mod audio;
mod video;

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{RiskLevel, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

pub use audio::{transcribe, TranscriptionConfig, MAX_AUDIO_BYTES};
pub use video::{find_ffprobe, format_ffprobe, mp4_metadata};

use crate::image::{prepare_image, VisionConfig};
use crate::paths::{self, Access};
use crate::{args, describe as call_description};

/// Prompt used for images when the call gives no question.
const IMAGE_PROMPT: &str = "Describe this image for a software developer who cannot see it: \
    what it shows, all text in it verbatim, layout, and anything that looks like an error or \
    defect. Be precise; do not speculate beyond what is visible.";

/// What `media` can use.
#[derive(Debug, Clone, Default)]
pub struct MediaConfig {
    /// The session model's id (named in "unsupported" answers).
    pub session_model: String,
    /// A model that sees images (the session model when it can, else the vision model).
    pub vision: Option<VisionConfig>,
    /// Audio transcription; `None`: audio is unsupported.
    pub transcription: Option<TranscriptionConfig>,
    /// The `ffprobe` program; `None`: looked up in the system folders (never `PATH`).
    pub ffprobe: Option<PathBuf>,
}

/// The `media` tool.
#[derive(Debug, Clone)]
pub struct Media {
    config: Arc<MediaConfig>,
    ffprobe: Option<PathBuf>,
}

impl Media {
    /// A media tool over `config` (ffprobe resolved now).
    pub fn new(config: MediaConfig) -> Self {
        let ffprobe = find_ffprobe(config.ffprobe.as_deref());
        Media {
            config: Arc::new(config),
            ffprobe,
        }
    }

    fn unsupported(&self, what: &str, hint: &str) -> ToolError {
        let model = if self.config.session_model.is_empty() {
            "this model".to_string()
        } else {
            format!("this model ({})", self.config.session_model)
        };
        ToolError::Failed(format!("unsupported by {model}: {what}. {hint}"))
    }
}

#[derive(Debug, Deserialize)]
struct Args {
    path: String,
    #[serde(default)]
    question: Option<String>,
}

/// What a file is, from its content.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Image,
    Audio(String),
    Video,
    Other(Option<String>),
}

fn kind_of(path: &std::path::Path) -> std::io::Result<Kind> {
    Ok(match infer::get_from_path(path)? {
        Some(t) => match t.matcher_type() {
            infer::MatcherType::Image => Kind::Image,
            infer::MatcherType::Audio => Kind::Audio(t.mime_type().to_string()),
            infer::MatcherType::Video => Kind::Video,
            _ => Kind::Other(Some(t.mime_type().to_string())),
        },
        None => Kind::Other(None),
    })
}

#[async_trait]
impl Tool for Media {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Read
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "media".into(),
            description: "Understand a media file in the workspace: an image is described (or \
                `question` answered about it), an audio file is transcribed, a video's \
                container and streams (duration, codecs, resolution, frame rate) are listed. \
                Fails with `unsupported by this model` when no configured model handles that \
                kind."
                .into(),
            parameters: call_description::with_property(json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Media file path, relative to the workspace root."},
                    "question": {"type": "string", "description": "For images: what to look for or answer. Default: a complete description."}
                },
                "required": ["path"]
            })),
        }
    }

    fn meta(&self) -> ToolMeta {
        // Sends workspace files to the model provider (external).
        ToolMeta {
            risk: RiskLevel::Medium,
            capabilities: vec!["read".into(), "network".into()],
            ..ToolMeta::read_only("media")
        }
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::reads_path(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("media", args)?;
        let target = paths::resolve_for(&ctx, &args.path, Access::Read)?;
        let shown = target.rel.clone();
        if !target.abs.is_file() {
            return Err(if target.abs.exists() {
                ToolError::Failed(format!("`{shown}` is not a file"))
            } else {
                ToolError::NotFound(format!("{shown} (no such file)"))
            });
        }
        let abs = target.abs.clone();
        let kind = tokio::task::spawn_blocking(move || kind_of(&abs))
            .await
            .map_err(|e| ToolError::Failed(format!("media task failed: {e}")))?
            .map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?;
        match kind {
            Kind::Image => {
                let Some(vision) = &self.config.vision else {
                    return Err(self.unsupported(
                        "it cannot see images and no vision model is configured",
                        "Set CAIRN_VISION_MODEL to a vision-capable model.",
                    ));
                };
                let (abs, name) = (target.abs.clone(), shown.clone());
                let image = tokio::task::spawn_blocking(move || prepare_image(&abs, &name))
                    .await
                    .map_err(|e| ToolError::Failed(format!("media task failed: {e}")))??;
                let prompt = args
                    .question
                    .as_deref()
                    .map(str::trim)
                    .filter(|q| !q.is_empty())
                    .unwrap_or(IMAGE_PROMPT)
                    .to_string();
                let text = crate::image::ask_vision(vision, prompt, &image, &ctx, "media").await?;
                Ok(ToolOutput::text(format!(
                    "Image {shown} ({}×{} px), by the model {}:\n{text}",
                    image.original.0, image.original.1, vision.model
                )))
            }
            Kind::Audio(mime) => {
                let Some(cfg) = &self.config.transcription else {
                    return Err(self.unsupported(
                        "audio transcription needs a transcription model and none is configured",
                        "Set CAIRN_TRANSCRIBE_MODEL (e.g. whisper-1) for an OpenAI-compatible \
                         /audio/transcriptions endpoint.",
                    ));
                };
                let text = transcribe(cfg, &target.abs, &shown, &mime, &ctx).await?;
                Ok(ToolOutput::text(format!(
                    "Transcript of {shown} ({mime}) by the model {}:\n{}",
                    cfg.model,
                    if text.is_empty() {
                        "(no speech found)"
                    } else {
                        &text
                    }
                )))
            }
            Kind::Video => {
                let meta =
                    video::metadata(&target.abs, &shown, self.ffprobe.as_deref(), &ctx).await?;
                Ok(ToolOutput::text(format!("Video {shown}:\n{meta}")))
            }
            Kind::Other(mime) => Err(ToolError::Failed(format!(
                "`{shown}` is not an image, audio or video file{}; use read_file for text",
                mime.map(|m| format!(" (it is {m})")).unwrap_or_default()
            ))),
        }
    }
}
