//! `list_files`: a gitignore-aware, sorted, depth-limited directory listing (the same walker
//! and ignore rules as `grep`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::args;
use crate::paths::{self, Access};
use crate::search::walk::{self, DeniedSkips};

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
    #[serde(default, deserialize_with = "args::opt_bool")]
    include_ignored: Option<bool>,
}

/// What one listing shows.
#[derive(Debug, Clone, Copy)]
struct Options {
    depth: usize,
    include_hidden: bool,
    include_ignored: bool,
}

#[async_trait]
impl Tool for ListFiles {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Search
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "list_files".into(),
            description: "List files and directories under a workspace directory, one \
                workspace-relative path per line, sorted; directories end with `/`. Respects \
                .gitignore and .ignore like ripgrep (ignored entries are skipped, or shown \
                marked `[ignored]` without their contents when include_ignored is true) and \
                never shows `.git`. Hidden entries (names starting with `.`) are skipped unless \
                include_hidden is true. At most 1000 entries are returned; list a subdirectory \
                or lower depth for more detail."
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
                    },
                    "include_ignored": {
                        "type": "boolean",
                        "description": "Also show entries excluded by .gitignore/.ignore, marked `[ignored]` (their contents are not listed). Default false."
                    }
                }
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::read_only("file")
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::reads_path(args)
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
        let opts = Options {
            depth: args.depth.unwrap_or(DEFAULT_DEPTH).clamp(1, MAX_DEPTH) as usize,
            include_hidden: args.include_hidden.unwrap_or(false),
            include_ignored: args.include_ignored.unwrap_or(false),
        };
        let cancel = ctx.cancel.clone();
        let skips = DeniedSkips::new(ctx.host.read_denials());
        let text = tokio::task::spawn_blocking(move || {
            let target = paths::resolve_for(&ctx, &path, Access::Read)?;
            if skips.skip(&target.abs) {
                let note = skips.note().unwrap_or_default();
                return Err(ToolError::Failed(format!("list_files: `{path}` {note}")));
            }
            let ws = std::fs::canonicalize(&ctx.workspace).unwrap_or(ctx.workspace.clone());
            let mut text = list(&ws, &target.abs, &path, opts, &skips, &cancel)?;
            if let Some(note) = skips.note() {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&note);
                text.push('\n');
            }
            Ok(text)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("list_files task failed: {e}")))??;
        Ok(ToolOutput::text(text))
    }
}

/// One listed entry.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    path: PathBuf,
    is_dir: bool,
    ignored: bool,
}

fn list(
    workspace: &Path,
    dir: &Path,
    shown: &str,
    opts: Options,
    skips: &Arc<DeniedSkips>,
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
    let walker = walk::builder(dir, opts.include_hidden, skips.clone())
        .max_depth(Some(opts.depth))
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();

    let mut entries = Vec::new();
    // Directories whose children were listed (depth below the limit): scanned for ignored entries.
    let mut scanned_dirs = vec![dir.to_path_buf()];
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
        if entries.len() >= MAX_ENTRIES {
            capped = true;
            break;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if is_dir && entry.depth() < opts.depth {
            scanned_dirs.push(entry.path().to_path_buf());
        }
        entries.push(Entry {
            path: entry.into_path(),
            is_dir,
            ignored: false,
        });
    }
    // When the walk was cut, unvisited entries would look ignored: mark only complete listings.
    if opts.include_ignored && !capped {
        add_ignored(
            &mut entries,
            &scanned_dirs,
            opts.include_hidden,
            skips,
            cancel,
        )?;
        entries.sort();
        if entries.len() > MAX_ENTRIES {
            entries.truncate(MAX_ENTRIES);
            capped = true;
        }
    }
    if entries.is_empty() {
        return Ok(format!(
            "[`{shown}` is empty (or everything in it is ignored)]"
        ));
    }
    let mut out = String::new();
    for e in &entries {
        let rel = e.path.strip_prefix(workspace).unwrap_or(&e.path);
        let name = rel.to_string_lossy();
        // A name with a newline or another control character would read as several entries
        // or garble the list: shown quoted and escaped, as a shell would need it.
        if name.chars().any(char::is_control) {
            out.push_str(&format!("{name:?}"));
        } else {
            out.push_str(&name);
        }
        if e.is_dir {
            out.push('/');
        }
        if e.ignored {
            out.push_str(" [ignored]");
        }
        out.push('\n');
    }
    if capped {
        out.push_str(&format!(
            "[listing capped at {MAX_ENTRIES} entries; list a subdirectory or use a smaller depth to see the rest]\n"
        ));
    }
    Ok(out)
}

/// Adds the children of `dirs` that the walker skipped because of ignore rules.
fn add_ignored(
    entries: &mut Vec<Entry>,
    dirs: &[PathBuf],
    include_hidden: bool,
    skips: &DeniedSkips,
    cancel: &CancellationToken,
) -> Result<(), ToolError> {
    let listed: BTreeSet<PathBuf> = entries.iter().map(|e| e.path.clone()).collect();
    for dir in dirs {
        if cancel.is_cancelled() {
            return Err(ToolError::Interrupted);
        }
        let Ok(children) = std::fs::read_dir(dir) else {
            continue;
        };
        for child in children.flatten() {
            let name = child.file_name();
            let hidden = name.to_string_lossy().starts_with('.');
            if name == ".git" || (hidden && !include_hidden) {
                continue;
            }
            let path = child.path();
            // Denied entries were already counted when the walk skipped them.
            if listed.contains(&path) || skips.denials_cover(&path) {
                continue;
            }
            let is_dir = child.file_type().is_ok_and(|t| t.is_dir());
            entries.push(Entry {
                path,
                is_dir,
                ignored: true,
            });
        }
    }
    Ok(())
}
