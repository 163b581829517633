//! `write_file`: create or overwrite a file atomically, keeping its line endings and mode.

use std::io::Read;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{RiskLevel, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use crate::guard::ConflictGuard;
use crate::paths::{self, Access};
use crate::read_file::open_regular_file;
use crate::{args, atomic, diff, text};

/// Creates or overwrites a whole file.
#[derive(Debug, Default, Clone)]
pub struct WriteFile {
    guard: Arc<ConflictGuard>,
}

impl WriteFile {
    /// A write_file tool checking writes against `guard`.
    pub fn new(guard: Arc<ConflictGuard>) -> Self {
        WriteFile { guard }
    }
}

#[derive(Debug, Deserialize)]
struct Args {
    path: String,
    content: String,
}

#[async_trait]
impl Tool for WriteFile {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Edit
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "write_file".into(),
            description: "Create a file, or overwrite an existing one, with exactly `content`. \
                Parent directories are created as needed. Replaces the whole file: to change \
                part of an existing file prefer replace_in_file or apply_patch, and read a file \
                before overwriting it. An existing file keeps its permissions and its CRLF line \
                endings; binary files are refused. Fails if the file changed on disk since you \
                read it."
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

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::writes_path(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("write_file", args)?;
        if args.content.contains('\0') {
            return Err(ToolError::InvalidArguments(
                "write_file: content contains NUL characters; write_file only writes text".into(),
            ));
        }
        let guard = self.guard.clone();
        tokio::task::spawn_blocking(move || write(&ctx, &guard, &args))
            .await
            .map_err(|e| ToolError::Failed(format!("write_file task failed: {e}")))?
    }
}

fn write(ctx: &ToolContext, guard: &ConflictGuard, args: &Args) -> Result<ToolOutput, ToolError> {
    let target = paths::resolve_for(ctx, &args.path, Access::Write)?;
    if target.rel == "." {
        return Err(ToolError::Failed(
            "the workspace root is a directory; give a file path".into(),
        ));
    }
    let shown = &target.rel;
    if args.path.ends_with('/') || args.path.ends_with(std::path::MAIN_SEPARATOR) {
        return Err(ToolError::Failed(format!(
            "`{}` ends with a slash: give a file path (write_file creates missing folders \
             itself)",
            args.path
        )));
    }
    let before = match std::fs::symlink_metadata(&target.abs) {
        Ok(_) => {
            let mut bytes = Vec::new();
            open_regular_file(&target.abs, shown)?
                .read_to_end(&mut bytes)
                .map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?;
            guard.check(&target.abs, shown, Some(&bytes))?;
            if text::looks_binary(&bytes) {
                return Err(ToolError::Failed(format!(
                    "`{shown}` is a binary file (it contains NUL bytes); write_file does not \
                     overwrite binary files"
                )));
            }
            if std::str::from_utf8(&bytes).is_err() && args.content.contains('\u{FFFD}') {
                return Err(ToolError::Failed(format!(
                    "write refused: `{shown}` is not UTF-8 text (Latin-1 or another encoding) and \
                     your content has U+FFFD replacement characters, which read_file shows in \
                     place of its non-UTF-8 bytes: writing it would destroy them. Change the file \
                     with a command that keeps its encoding (iconv, sed)."
                )));
            }
            Some(String::from_utf8_lossy(&bytes).into_owned())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            guard.check(&target.abs, shown, None)?;
            None
        }
        Err(e) => return Err(ToolError::io(format!("cannot stat {shown}"), e)),
    };
    let content = match &before {
        Some(old) => text::with_line_ending(&args.content, text::line_ending(old)),
        None => args.content.clone(),
    };
    // The write counts as this call's the moment it happens; nothing is written once the
    // call was interrupted.
    let unchanged = before.as_deref() == Some(content.as_str());
    // The same content: nothing is written (the file, its time and the call's record stay as
    // they were, and the card says "no change").
    if !unchanged {
        ctx.write_files(std::slice::from_ref(&target.rel), || {
            atomic::write_atomic(&target.abs, content.as_bytes())?;
            guard.record(&target.abs, content.as_bytes());
            Ok(())
        })?;
    }
    let lines = count_lines(&content);
    tracing::debug!(path = %shown, existed = before.is_some(), "write_file");
    let text = match &before {
        None => format!("Created {shown} ({} bytes, {lines} lines).", content.len()),
        Some(old) if *old == content => {
            format!("{shown} already had exactly this content ({lines} lines); nothing changed.")
        }
        Some(old) => {
            let described = diff::describe(shown, old, &content);
            format!(
                "Overwrote {shown} ({} bytes, {lines} lines; {}).\n{}",
                content.len(),
                described.summary,
                described.snippet
            )
        }
    };
    Ok(ToolOutput {
        content: text,
        produced_files: if unchanged {
            Vec::new()
        } else {
            vec![target.rel.clone()]
        },
        images: Vec::new(),
        stale_files: Vec::new(),
    })
}

/// Lines as an editor counts them: a final line without `\n` still counts.
pub(crate) fn count_lines(s: &str) -> usize {
    s.lines().count()
}
