//! `read_image`: for vision session models, an image file goes back to the model as an image
//! part of the tool result (size-capped; scaled down and re-encoded when too large).

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{ContentPart, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::load::{prepare_image, MAX_EDGE, MAX_FILE_BYTES};
use crate::paths::{self, Access};
use crate::{args, describe as call_description};

/// Shows an image file to the (vision) session model.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadImage;

#[derive(Debug, Deserialize)]
struct Args {
    path: String,
}

#[async_trait]
impl Tool for ReadImage {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Read
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "read_image".into(),
            description: format!(
                "Look at an image file in the workspace (PNG, JPEG, GIF or WebP: screenshots, \
                 diagrams, mockups). The image itself is attached to the result. Files up to {} \
                 MB; images larger than {MAX_EDGE} px on a side are scaled down.",
                MAX_FILE_BYTES / (1024 * 1024)
            ),
            parameters: call_description::with_property(json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "Image path, relative to the workspace root."}
                },
                "required": ["path"]
            })),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::read_only("media")
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::reads_path(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("read_image", args)?;
        let (image, shown) = tokio::task::spawn_blocking(move || {
            let target = paths::resolve_for(&ctx, &args.path, Access::Read)?;
            prepare_image(&target.abs, &target.rel).map(|i| (i, target.rel))
        })
        .await
        .map_err(|e| ToolError::Failed(format!("read_image task failed: {e}")))??;
        let size = if image.resized() {
            format!(
                "{}×{} px, scaled to {}×{} {} ({} bytes) to fit the model's limits",
                image.original.0,
                image.original.1,
                image.sent.0,
                image.sent.1,
                image.mime_type,
                image.sent_bytes
            )
        } else {
            format!(
                "{}×{} px {}, {} bytes",
                image.original.0, image.original.1, image.mime_type, image.sent_bytes
            )
        };
        Ok(ToolOutput::with_images(
            format!("Image {shown} ({size}) is attached."),
            vec![ContentPart::Image {
                mime_type: image.mime_type,
                data: image.data_base64,
            }],
        ))
    }
}
