//! `git_log`: recent commits (of a path, optionally), newest first.

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};
use git2::{DiffOptions, ErrorCode, Repository, Sort};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{format_time, git_err, open, short};
use crate::args;

/// Commits shown when the call gives no `max_count`.
pub const DEFAULT_MAX_COUNT: u64 = 20;
/// Largest `max_count` accepted.
pub const MAX_COUNT: u64 = 500;
/// Commits examined at most when filtering by path.
const SCAN_LIMIT: usize = 50_000;

/// Shows the commit history.
#[derive(Debug, Default, Clone, Copy)]
pub struct GitLog;

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(default)]
    path: Option<String>,
    #[serde(default, deserialize_with = "args::opt_u64")]
    max_count: Option<u64>,
}

#[async_trait]
impl Tool for GitLog {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Git
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "git_log".into(),
            description: "Show recent commits of the workspace's repository, newest first \
                (read-only): short hash, date, author and subject. Give a path to see only \
                the commits that changed it."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Only commits touching this file or directory, relative to the workspace root. Default: all commits."
                    },
                    "max_count": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_COUNT,
                        "description": "How many commits to show. Default 20, maximum 500."
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
        let args: Args = args::parse("git_log", args)?;
        if args.max_count == Some(0) {
            return Err(ToolError::InvalidArguments(
                "git_log: max_count must be at least 1".into(),
            ));
        }
        let max = args.max_count.unwrap_or(DEFAULT_MAX_COUNT).min(MAX_COUNT) as usize;
        let cancel = ctx.cancel.clone();
        tokio::task::spawn_blocking(move || {
            let opened = open(&ctx, args.path.as_deref())?;
            log(&opened.repo, opened.pathspec.as_deref(), max, &cancel).map(ToolOutput::text)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("git_log task failed: {e}")))?
    }
}

fn log(
    repo: &Repository,
    pathspec: Option<&str>,
    max: usize,
    cancel: &CancellationToken,
) -> Result<String, ToolError> {
    match repo.head() {
        Ok(_) => {}
        Err(e) if e.code() == ErrorCode::UnbornBranch || e.code() == ErrorCode::NotFound => {
            return Ok("The repository has no commits yet.".into());
        }
        Err(e) => return Err(git_err("cannot read HEAD", e)),
    }
    let mut walk = repo
        .revwalk()
        .map_err(|e| git_err("cannot walk the history", e))?;
    walk.push_head()
        .map_err(|e| git_err("cannot read HEAD", e))?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)
        .map_err(|e| git_err("cannot sort the history", e))?;
    let mut out = String::new();
    let mut shown = 0usize;
    let mut scanned = 0usize;
    for oid in walk {
        if cancel.is_cancelled() {
            return Err(ToolError::Interrupted);
        }
        let oid = oid.map_err(|e| git_err("cannot walk the history", e))?;
        scanned += 1;
        if scanned > SCAN_LIMIT {
            out.push_str(&format!("[stopped after examining {SCAN_LIMIT} commits]\n"));
            break;
        }
        let commit = repo
            .find_commit(oid)
            .map_err(|e| git_err("cannot read a commit", e))?;
        if let Some(p) = pathspec {
            if !touches(repo, &commit, p)? {
                continue;
            }
        }
        let author = commit.author();
        out.push_str(&format!(
            "{} {} {} {}\n",
            short(oid),
            format_time(commit.time()),
            author.name().unwrap_or("?"),
            commit.summary().ok().flatten().unwrap_or("")
        ));
        shown += 1;
        if shown >= max {
            break;
        }
    }
    if shown == 0 {
        return Ok(match pathspec {
            Some(p) => format!("No commits touch `{p}`."),
            None => "The repository has no commits yet.".into(),
        });
    }
    Ok(out)
}

/// Whether `commit` changed `pathspec` compared with its first parent (or added it).
fn touches(
    repo: &Repository,
    commit: &git2::Commit<'_>,
    pathspec: &str,
) -> Result<bool, ToolError> {
    let tree = commit
        .tree()
        .map_err(|e| git_err("cannot read a tree", e))?;
    let parent_tree = match commit.parent(0) {
        Ok(p) => Some(p.tree().map_err(|e| git_err("cannot read a tree", e))?),
        Err(_) => None,
    };
    let mut opts = DiffOptions::new();
    opts.pathspec(pathspec);
    let diff = repo
        .diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), Some(&mut opts))
        .map_err(|e| git_err("cannot diff a commit", e))?;
    Ok(diff.deltas().len() > 0)
}
