//! `git_diff`: unstaged changes, staged changes, or the work tree against a revision.

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};
use git2::{Diff, DiffFormat, DiffOptions, ErrorCode, Repository};
use serde::Deserialize;
use serde_json::json;

use std::path::Path;

use super::{git_err, open};
use crate::args;
use crate::search::walk::DeniedSkips;

/// Bytes of patch text returned before the diff is cut.
pub const MAX_DIFF_BYTES: usize = 256 * 1024;

/// Shows changes as a unified diff.
#[derive(Debug, Default, Clone, Copy)]
pub struct GitDiff;

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(default)]
    path: Option<String>,
    #[serde(default, deserialize_with = "args::opt_bool")]
    staged: Option<bool>,
    #[serde(default)]
    rev: Option<String>,
}

#[async_trait]
impl Tool for GitDiff {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Git
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "git_diff".into(),
            description: "Show changes in the workspace's repository as a unified diff \
                (read-only), with a per-file summary first. Default: changes not yet staged \
                (like `git diff`); staged: true shows staged changes (`git diff --cached`); \
                rev compares against a commit, branch or tag (`git diff <rev>`, or with staged \
                `git diff --cached <rev>`). Untracked files are not included."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Limit to this file or directory, relative to the workspace root."
                    },
                    "staged": {
                        "type": "boolean",
                        "description": "Show staged changes (index against HEAD or rev). Default false."
                    },
                    "rev": {
                        "type": "string",
                        "description": "Compare against this revision (e.g. HEAD~3, main, a commit hash)."
                    }
                }
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::read_only("git")
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::reads_path(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("git_diff", args)?;
        let skips = DeniedSkips::new(ctx.host.read_denials());
        tokio::task::spawn_blocking(move || {
            let opened = open(&ctx, args.path.as_deref())?;
            let rev = args.rev.as_deref().map(str::trim).filter(|r| !r.is_empty());
            diff(
                &opened.repo,
                opened.pathspec.as_deref(),
                args.staged.unwrap_or(false),
                rev,
                &skips,
            )
            .map(ToolOutput::text)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("git_diff task failed: {e}")))?
    }
}

fn diff(
    repo: &Repository,
    pathspec: Option<&str>,
    staged: bool,
    rev: Option<&str>,
    skips: &DeniedSkips,
) -> Result<String, ToolError> {
    let mut opts = DiffOptions::new();
    opts.context_lines(3);
    if let Some(p) = pathspec {
        opts.pathspec(p);
    }
    let base_tree = match rev {
        Some(r) => Some(
            repo.revparse_single(r)
                .and_then(|o| o.peel_to_tree())
                .map_err(|e| {
                    ToolError::InvalidArguments(format!(
                        "git_diff: unknown revision `{r}`: {}",
                        e.message()
                    ))
                })?,
        ),
        None if staged => match repo.head() {
            Ok(h) => Some(
                h.peel_to_tree()
                    .map_err(|e| git_err("cannot read HEAD's tree", e))?,
            ),
            // No commits yet: everything staged is new.
            Err(e) if e.code() == ErrorCode::UnbornBranch => None,
            Err(e) => return Err(git_err("cannot read HEAD", e)),
        },
        None => None,
    };
    let d = match (staged, rev) {
        (true, _) => repo.diff_tree_to_index(base_tree.as_ref(), None, Some(&mut opts)),
        (false, Some(_)) => {
            repo.diff_tree_to_workdir_with_index(base_tree.as_ref(), Some(&mut opts))
        }
        (false, None) => repo.diff_index_to_workdir(None, Some(&mut opts)),
    }
    .map_err(|e| git_err("cannot compute the diff", e))?;
    let workdir = repo.workdir().map(Path::to_path_buf).unwrap_or_default();
    render(&d, staged, rev, &workdir, skips)
}

/// Whether a deny rule keeps either side of `delta` (paths under `workdir`) from being read.
fn delta_denied(delta: &git2::DiffDelta<'_>, workdir: &Path, skips: &DeniedSkips) -> bool {
    [delta.old_file().path(), delta.new_file().path()]
        .into_iter()
        .flatten()
        .any(|p| skips.denials_cover(&workdir.join(p)))
}

fn render(
    d: &Diff<'_>,
    staged: bool,
    rev: Option<&str>,
    workdir: &Path,
    skips: &DeniedSkips,
) -> Result<String, ToolError> {
    let what = match (staged, rev) {
        (true, Some(r)) => format!("staged changes against {r}"),
        (true, None) => "staged changes".to_string(),
        (false, Some(r)) => format!("changes in the work tree against {r}"),
        (false, None) => "unstaged changes".to_string(),
    };
    if d.deltas().len() == 0 {
        return Ok(format!("No {what}."));
    }
    let denied = d
        .deltas()
        .filter(|delta| delta_denied(delta, workdir, skips))
        .count();
    for delta in d
        .deltas()
        .filter(|delta| delta_denied(delta, workdir, skips))
    {
        if let Some(p) = delta.new_file().path().or(delta.old_file().path()) {
            skips.skip(&workdir.join(p));
        }
    }
    let shown_files = d.deltas().len() - denied;
    // The stat block would name the denied files: left out when there are any.
    let stats = if denied > 0 {
        String::new()
    } else {
        d.stats()
            .and_then(|s| s.to_buf(git2::DiffStatsFormat::FULL, 80))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    };
    let mut patch = String::new();
    let mut cut = 0usize;
    d.print(DiffFormat::Patch, |delta, _, line| {
        if denied > 0 && delta_denied(&delta, workdir, skips) {
            return true;
        }
        let content = String::from_utf8_lossy(line.content());
        let piece = match line.origin() {
            o @ ('+' | '-' | ' ') => format!("{o}{content}"),
            _ => content.into_owned(),
        };
        if patch.len() + piece.len() > MAX_DIFF_BYTES {
            cut += piece.len();
        } else {
            patch.push_str(&piece);
        }
        true
    })
    .map_err(|e| git_err("cannot print the diff", e))?;
    let mut out = format!("{shown_files} file(s) with {what}:\n{stats}\n{patch}");
    if let Some(note) = skips.note() {
        out.push_str(&format!("\n{note}\n"));
    }
    if cut > 0 {
        out.push_str(&format!(
            "\n[diff cut: {cut} more bytes; give a path to see one file's changes]\n"
        ));
    }
    Ok(out)
}
