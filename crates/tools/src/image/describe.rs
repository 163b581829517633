//! `describe_image`: for text-only session models, an image is described by the configured
//! vision model (one request, no tools) and the description comes back as text.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{
    answer_text, LlmClient, LlmRequest, Tool, ToolContext, ToolError, ToolHandle, ToolOutput,
};
use cairn_protocol::{ContentPart, Message, RiskLevel, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::load::{prepare_image, PreparedImage};
use crate::paths::{self, Access};
use crate::{args, describe as call_description};

/// Prompt used when the call gives no question.
const DEFAULT_PROMPT: &str = "Describe this image for a software developer who cannot see it: \
    what it shows, all text in it verbatim, layout, colours, and anything that looks like an \
    error, warning or UI defect. Be precise and complete; do not speculate beyond what is visible.";

/// The vision model that describes images.
#[derive(Clone)]
pub struct VisionConfig {
    /// Client for the vision model's provider.
    pub llm: Arc<dyn LlmClient>,
    /// Vision model id.
    pub model: String,
}

impl std::fmt::Debug for VisionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VisionConfig")
            .field("model", &self.model)
            .finish()
    }
}

/// The `describe_image` tool when a vision model is configured, `None` otherwise.
pub fn describe_image_tool(vision: Option<VisionConfig>) -> Option<ToolHandle> {
    vision
        .filter(|v| !v.model.trim().is_empty())
        .map(|v| Arc::new(DescribeImage::new(v)) as ToolHandle)
}

/// Describes an image file through a vision model.
#[derive(Debug, Clone)]
pub struct DescribeImage {
    vision: VisionConfig,
}

impl DescribeImage {
    /// A describe_image tool using `vision`.
    pub fn new(vision: VisionConfig) -> Self {
        DescribeImage { vision }
    }
}

#[derive(Debug, Deserialize)]
struct Args {
    path: String,
    #[serde(default)]
    question: Option<String>,
}

#[async_trait]
impl Tool for DescribeImage {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Read
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "describe_image".into(),
            description: "Get a text description of an image file in the workspace (PNG, JPEG, \
                GIF or WebP; screenshots, diagrams, mockups), written by a vision model. Ask a \
                specific question to get a focused answer."
                .into(),
            parameters: call_description::with_property(json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Image path, relative to the workspace root."},
                    "question": {"type": "string", "description": "What to look for or answer about the image. Default: a complete description."}
                },
                "required": ["path"]
            })),
        }
    }

    fn meta(&self) -> ToolMeta {
        // Reads a local file and sends it to the configured model provider.
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
        let args: Args = args::parse("describe_image", args)?;
        let path = args.path.clone();
        let ctx2 = ctx.clone();
        let (image, shown) = tokio::task::spawn_blocking(move || {
            let target = paths::resolve_for(&ctx2, &path, Access::Read)?;
            prepare_image(&target.abs, &target.rel).map(|i| (i, target.rel))
        })
        .await
        .map_err(|e| ToolError::Failed(format!("describe_image task failed: {e}")))??;
        let prompt = args
            .question
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .unwrap_or(DEFAULT_PROMPT)
            .to_string();
        let text = ask_vision(&self.vision, prompt, &image, &ctx, "describe_image").await?;
        let size = if image.resized() {
            format!(
                "{}×{} px, sent scaled to {}×{}",
                image.original.0, image.original.1, image.sent.0, image.sent.1
            )
        } else {
            format!("{}×{} px", image.original.0, image.original.1)
        };
        Ok(ToolOutput::text(format!(
            "Description of {shown} ({size}) by the vision model {}:\n{}",
            self.vision.model, text
        )))
    }
}

/// Asks the vision model `prompt` about `image` (one request, no tools); the answer, trimmed
/// and non-empty. `who` names the tool in errors.
pub(crate) async fn ask_vision(
    vision: &VisionConfig,
    prompt: String,
    image: &PreparedImage,
    ctx: &ToolContext,
    who: &str,
) -> Result<String, ToolError> {
    let request = LlmRequest {
        model: vision.model.clone(),
        messages: vec![Message::User {
            content: vec![
                ContentPart::Text { text: prompt },
                ContentPart::Image {
                    mime_type: image.mime_type.clone(),
                    data: image.data_base64.clone(),
                },
            ],
        }],
        tools: Vec::new(),
        reasoning_effort: None,
        req_id: format!("{}-vision", ctx.call_id),
    };
    let answer = answer_text(vision.llm.stream(request, ctx.cancel.child_token())).await;
    if ctx.cancel.is_cancelled() {
        return Err(ToolError::Interrupted);
    }
    let text = answer.map_err(|ended| {
        ToolError::Failed(match ended {
            Some(o) => format!(
                "{who}: the vision model {} failed: {}",
                vision.model,
                o.describe()
            ),
            None => format!(
                "{who}: the vision model {} ended without an answer",
                vision.model
            ),
        })
    })?;
    if text.trim().is_empty() {
        return Err(ToolError::Failed(format!(
            "{who}: the vision model {} returned an empty description",
            vision.model
        )));
    }
    Ok(text.trim().to_string())
}
