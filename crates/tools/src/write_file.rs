//! `write_file`: create or overwrite a file atomically.

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{RiskLevel, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use crate::{args, atomic, paths};

/// Creates or overwrites a whole file.
#[derive(Debug, Default, Clone, Copy)]
pub struct WriteFile;

#[derive(Debug, Deserialize)]
struct Args {
    path: String,
    content: String,
}

#[async_trait]
impl Tool for WriteFile {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "write_file".into(),
            description: "Create a file, or overwrite an existing one, with exactly `content`. \
                Parent directories are created as needed. Replaces the whole file: to change \
                part of an existing file prefer replace_in_file, and read a file before \
                overwriting it."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path, relative to the workspace root (or absolute inside it)."
                    },
                    "content": {
                        "type": "string",
                        "description": "The complete new content of the file."
                    }
                },
                "required": ["path", "content"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::mutating("file", RiskLevel::Medium, &["write"])
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("write_file", args)?;
        tokio::task::spawn_blocking(move || {
            let target = paths::resolve(&ctx.workspace, &args.path)?;
            if target.rel == "." {
                return Err(ToolError::Failed(
                    "the workspace root is a directory; give a file path".into(),
                ));
            }
            let existed = atomic::write_atomic(&target.abs, args.content.as_bytes())?;
            let lines = count_lines(&args.content);
            let verb = if existed { "Overwrote" } else { "Created" };
            tracing::debug!(path = %target.rel, existed, "write_file");
            Ok(ToolOutput {
                content: format!(
                    "{verb} {} ({} bytes, {lines} lines).",
                    target.rel,
                    args.content.len()
                ),
                produced_files: vec![target.rel],
            })
        })
        .await
        .map_err(|e| ToolError::Failed(format!("write_file task failed: {e}")))?
    }
}

/// Lines as an editor counts them: a final line without `\n` still counts.
pub(crate) fn count_lines(s: &str) -> usize {
    s.lines().count()
}
