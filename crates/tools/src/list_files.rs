//! `list_files`: a gitignore-aware, sorted, depth-limited directory listing.

use std::path::Path;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};
use ignore::WalkBuilder;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::{args, paths};

/// Depth used when the call gives none.
pub const DEFAULT_DEPTH: u64 = 2;
/// Largest depth accepted (larger values are clamped).
pub const MAX_DEPTH: u64 = 10;
/// Entries listed before the listing is cut.
pub const MAX_ENTRIES: usize = 1000;

/// Lists files and directories under a workspace path.
#[derive(Debug, Default, Clone, Copy)]
pub struct ListFiles;

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(default)]
    path: Option<String>,
    #[serde(default, deserialize_with = "args::opt_u64")]
    depth: Option<u64>,
    #[serde(default, deserialize_with = "args::opt_bool")]
    include_hidden: Option<bool>,
}

#[async_trait]
impl Tool for ListFiles {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "list_files".into(),
            description: "List files and directories under a workspace directory, one \
                workspace-relative path per line, sorted; directories end with `/`. Respects \
                .gitignore (ignored files are not shown) and never shows `.git`. Hidden entries \
                (names starting with `.`) are skipped unless include_hidden is true. At most \
                1000 entries are returned; list a subdirectory or lower depth for more detail."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Directory to list, relative to the workspace root. Default \".\" (the root)."
                    },
                    "depth": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_DEPTH,
                        "description": "How many directory levels to descend: 1 = direct children only. Default 2, maximum 10."
                    },
                    "include_hidden": {
                        "type": "boolean",
                        "description": "Also list hidden files and directories (dotfiles). Default false."
                    }
                }
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::read_only("file")
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("list_files", args)?;
        let path = args
            .path
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| ".".to_string());
        let depth = args.depth.unwrap_or(DEFAULT_DEPTH).clamp(1, MAX_DEPTH) as usize;
        let hidden = args.include_hidden.unwrap_or(false);
        let cancel = ctx.cancel.clone();
        let text = tokio::task::spawn_blocking(move || {
            let target = paths::resolve(&ctx.workspace, &path)?;
            let ws = std::fs::canonicalize(&ctx.workspace).unwrap_or(ctx.workspace.clone());
            list(&ws, &target.abs, &path, depth, hidden, &cancel)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("list_files task failed: {e}")))??;
        Ok(ToolOutput::text(text))
    }
}

fn list(
    workspace: &Path,
    dir: &Path,
    shown: &str,
    depth: usize,
    include_hidden: bool,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(ToolError::Failed(format!(
                "`{shown}` is a file, not a directory; use read_file to read it"
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::NotFound(format!("{shown} (no such directory)")))
        }
        Err(e) => return Err(ToolError::io(format!("cannot list {shown}"), e)),
    }
    let walker = WalkBuilder::new(dir)
        .max_depth(Some(depth))
        .hidden(!include_hidden)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();

    let mut lines = Vec::new();
    let mut capped = false;
    for entry in walker {
        if cancel.is_cancelled() {
            return Err(ToolError::Interrupted);
        }
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                tracing::debug!(error = %e, "list_files: skipping unreadable entry");
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        if lines.len() >= MAX_ENTRIES {
            capped = true;
            break;
        }
        let rel = entry
            .path()
            .strip_prefix(workspace)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        lines.push(if is_dir { format!("{rel}/") } else { rel });
    }
    if lines.is_empty() {
        return Ok(format!(
            "[`{shown}` is empty (or everything in it is ignored)]"
        ));
    }
    let mut out = lines.join("\n");
    out.push('\n');
    if capped {
        out.push_str(&format!(
            "[listing capped at {MAX_ENTRIES} entries; list a subdirectory or use a smaller depth to see the rest]\n"
        ));
    }
    Ok(out)
}
