//! The `apply_patch` and `apply_unified_diff` tools.

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{RiskLevel, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use super::commit::{self, Change, Kind, RealFs};
use super::model::{FileOp, ParseError};
use super::{envelope, unified};
use crate::guard::ConflictGuard;
use crate::{args, diff};

/// Applies a `*** Begin Patch` envelope: add, update (with context hunks), delete and move
/// files, all or nothing.
#[derive(Debug, Default, Clone)]
pub struct ApplyPatch {
    guard: Arc<ConflictGuard>,
}

impl ApplyPatch {
    /// An apply_patch tool checking writes against `guard`.
    pub fn new(guard: Arc<ConflictGuard>) -> Self {
        ApplyPatch { guard }
    }
}

/// Applies a unified diff (`diff -u`, `git diff`), all or nothing.
#[derive(Debug, Default, Clone)]
pub struct ApplyUnifiedDiff {
    guard: Arc<ConflictGuard>,
}

impl ApplyUnifiedDiff {
    /// An apply_unified_diff tool checking writes against `guard`.
    pub fn new(guard: Arc<ConflictGuard>) -> Self {
        ApplyUnifiedDiff { guard }
    }
}

#[derive(Debug, Deserialize)]
struct PatchArgs {
    patch: String,
}

#[derive(Debug, Deserialize)]
struct DiffArgs {
    diff: String,
}

#[async_trait]
impl Tool for ApplyPatch {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Edit
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "apply_patch".into(),
            description: "Edit files with a patch in this envelope format:\n\
                *** Begin Patch\n\
                *** Add File: path/new.txt\n\
                +every line of the new file, prefixed with +\n\
                *** Delete File: path/old.txt\n\
                *** Update File: path/file.rs\n\
                *** Move to: path/renamed.rs   (optional)\n\
                @@ fn some_function()   (optional anchor: a line just above the change)\n\
                 unchanged context line (prefixed with a space)\n\
                -removed line\n\
                +added line\n\
                *** End of File   (optional: the hunk is at the end of the file)\n\
                *** End Patch\n\
                Give about 3 lines of context before and after each change, copied exactly; \
                separate hunks with @@ lines, in file order. Paths are relative to the \
                workspace. The patch is applied to all files or none: if a hunk does not \
                match, nothing changes and the error says which hunk failed and shows the \
                closest text. Fails if a file changed on disk since you read it."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "patch": {
                        "type": "string",
                        "description": "The whole patch, from `*** Begin Patch` to `*** End Patch`."
                    }
                },
                "required": ["patch"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::mutating("file", RiskLevel::Medium, &["write"])
    }

    fn write_targets(&self, args: &serde_json::Value) -> Option<Vec<String>> {
        let text = args.get("patch")?.as_str()?;
        envelope::parse(text).ok().map(|ops| targets(&ops))
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        cairn_engine::PermissionSubject::writes(self.write_targets(args).unwrap_or_default())
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: PatchArgs = args::parse("apply_patch", args)?;
        let ops =
            envelope::parse(&args.patch).map_err(|e| parse_error("apply_patch", "patch", &e))?;
        run("apply_patch", ops, ctx, self.guard.clone()).await
    }
}

#[async_trait]
impl Tool for ApplyUnifiedDiff {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Edit
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "apply_unified_diff".into(),
            description: "Apply a unified diff (as produced by `diff -u` or `git diff`) to the \
                workspace: `--- a/path` / `+++ b/path` headers (`/dev/null` to add or delete a \
                file, git rename headers to move one) and `@@ -start,count +start,count @@` \
                hunks with ` ` context, `-` removed and `+` added lines. Line numbers are hints: \
                a hunk whose context moved is found nearby. Applied to all files or none; a \
                failing hunk is named with the reason and the closest text in the file."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "diff": {
                        "type": "string",
                        "description": "The unified diff text; paths are relative to the workspace root (a/ and b/ prefixes are stripped)."
                    }
                },
                "required": ["diff"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::mutating("file", RiskLevel::Medium, &["write"])
    }

    fn write_targets(&self, args: &serde_json::Value) -> Option<Vec<String>> {
        let text = args.get("diff")?.as_str()?;
        unified::parse(text).ok().map(|ops| targets(&ops))
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        cairn_engine::PermissionSubject::writes(self.write_targets(args).unwrap_or_default())
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: DiffArgs = args::parse("apply_unified_diff", args)?;
        let ops = unified::parse(&args.diff)
            .map_err(|e| parse_error("apply_unified_diff", "diff", &e))?;
        run("apply_unified_diff", ops, ctx, self.guard.clone()).await
    }
}

/// Every path a patch writes: its files and their move destinations.
fn targets(ops: &[FileOp]) -> Vec<String> {
    let mut out = Vec::new();
    for op in ops {
        out.push(op.path().to_string());
        if let FileOp::Update {
            move_to: Some(dest),
            ..
        } = op
        {
            out.push(dest.clone());
        }
    }
    out
}

fn parse_error(tool: &str, what: &str, e: &ParseError) -> ToolError {
    ToolError::InvalidArguments(format!(
        "{tool}: the {what} cannot be parsed at its line {}: {}. Nothing was changed.",
        e.line, e.message
    ))
}

async fn run(
    tool: &'static str,
    ops: Vec<FileOp>,
    ctx: ToolContext,
    guard: Arc<ConflictGuard>,
) -> Result<ToolOutput, ToolError> {
    tokio::task::spawn_blocking(move || {
        let changes = commit::plan(&ctx, &guard, &ops, tool)?;
        if changes.is_empty() {
            return Ok(ToolOutput::text(format!(
                "{tool}: the patch changes nothing (the files already have this content)."
            )));
        }
        // The files count as this call's the moment they are written; nothing is written
        // once the call was interrupted.
        let shown: Vec<String> = changes.iter().map(|c| c.shown.clone()).collect();
        ctx.write_files(&shown, || {
            commit::commit(&RealFs, &changes)?;
            for c in &changes {
                match &c.after {
                    Some(bytes) => guard.record(&c.abs, bytes),
                    None => guard.forget(&c.abs),
                }
            }
            Ok(())
        })?;
        Ok(ToolOutput {
            content: summary(&changes),
            produced_files: shown,
            images: Vec::new(),
            stale_files: Vec::new(),
        })
    })
    .await
    .map_err(|e| ToolError::Failed(format!("{tool} task failed: {e}")))?
}

fn summary(changes: &[Change]) -> String {
    let moved_sources: Vec<&str> = changes
        .iter()
        .filter_map(|c| c.moved_from.as_deref())
        .collect();
    let original_of = |shown: &str| {
        changes
            .iter()
            .find(|c| c.shown == shown)
            .and_then(|c| c.before.as_deref())
            .map(String::from_utf8_lossy)
            .unwrap_or_default()
    };
    let mut out = format!(
        "Applied: {} file{} changed.\n",
        changes.len() - moved_sources.len(),
        if changes.len() - moved_sources.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    for c in changes {
        let after = c
            .after
            .as_deref()
            .map(String::from_utf8_lossy)
            .unwrap_or_default();
        let line = match (c.kind(), &c.moved_from) {
            (Kind::Deleted, _) if moved_sources.contains(&c.shown.as_str()) => continue,
            (Kind::Deleted, _) => format!("D {}", c.shown),
            (_, Some(from)) => format!(
                "R {from} → {} ({})",
                c.shown,
                diff::summary(&original_of(from), &after)
            ),
            (Kind::Added, None) => format!("A {} ({} lines)", c.shown, after.lines().count()),
            (Kind::Modified, None) => {
                let before = c
                    .before
                    .as_deref()
                    .map(String::from_utf8_lossy)
                    .unwrap_or_default();
                format!("M {} ({})", c.shown, diff::summary(&before, &after))
            }
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}
