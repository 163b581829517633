//! `request_directory`: ask the user for access to a directory outside the workspace. A grant
//! lasts for the session; the file tools then accept paths inside it (read-only unless
//! granted writable).

use std::path::Path;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{DirectoryGrant, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::interactive_meta;
use crate::args;
use crate::paths::normalize;

/// Asks the user for access to a directory.
#[derive(Debug, Default, Clone, Copy)]
pub struct RequestDirectory;

#[derive(Debug, Deserialize)]
struct Args {
    path: String,
    reason: String,
    #[serde(default, deserialize_with = "args::opt_bool")]
    writable: Option<bool>,
}

#[async_trait]
impl Tool for RequestDirectory {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Question
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "request_directory".into(),
            description: "Ask the user for access to a directory outside the workspace (e.g. a \
                sibling project or a shared library), read-only unless you ask for writable. \
                Once granted for this session, the file tools accept absolute paths inside it."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "The directory: absolute, or relative to the workspace root."},
                    "reason": {"type": "string", "description": "Why you need it, shown to the user."},
                    "writable": {"type": "boolean", "description": "Ask for write access too. Default false."}
                },
                "required": ["path", "reason"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        interactive_meta("interaction")
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::reads_path(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("request_directory", args)?;
        let reason = args.reason.trim().to_string();
        if reason.is_empty() {
            return Err(ToolError::InvalidArguments(
                "request_directory: say why you need the directory (reason)".into(),
            ));
        }
        let given = Path::new(args.path.trim());
        if args.path.trim().is_empty() {
            return Err(ToolError::InvalidArguments(
                "request_directory: path must not be empty".into(),
            ));
        }
        let joined = if given.is_absolute() {
            given.to_path_buf()
        } else {
            ctx.workspace.join(given)
        };
        let lexical = normalize(&joined);
        let dir = match std::fs::canonicalize(&lexical) {
            Ok(d) if d.is_dir() => d,
            Ok(_) => {
                return Err(ToolError::Failed(format!(
                    "`{}` is a file; request the directory that contains it",
                    lexical.display()
                )))
            }
            Err(_) => {
                return Err(ToolError::NotFound(format!(
                    "{} (no such directory)",
                    lexical.display()
                )))
            }
        };
        let ws = std::fs::canonicalize(&ctx.workspace).unwrap_or(ctx.workspace.clone());
        if dir.starts_with(&ws) {
            return Ok(ToolOutput::text(format!(
                "{} is inside the workspace; no access request is needed.",
                dir.display()
            )));
        }
        let writable = args.writable.unwrap_or(false);
        let shown = dir.to_string_lossy().into_owned();
        if let Some((_, w)) = ctx
            .host
            .granted_directories()
            .iter()
            .find(|(d, _)| Path::new(d) == dir)
        {
            if *w || !writable {
                return Ok(ToolOutput::text(format!(
                    "{shown} is already granted ({}) for this session.",
                    if *w { "writable" } else { "read-only" }
                )));
            }
        }
        let grant = tokio::select! {
            g = ctx.host.request_directory(shown.clone(), reason, writable) => g,
            _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
        };
        match grant {
            DirectoryGrant::Granted { writable: w } => Ok(ToolOutput::text(format!(
                "Access to {shown} granted ({}) for this session. Use absolute paths inside it \
                 with the file tools.",
                if w {
                    "read and write"
                } else if writable {
                    "read-only, although you asked for write access"
                } else {
                    "read-only"
                }
            ))),
            DirectoryGrant::Denied { reason } => Err(ToolError::Failed(format!(
                "access to {shown} was denied: {reason}. Work inside the workspace, or ask the \
                 user how to proceed."
            ))),
        }
    }
}
