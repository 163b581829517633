//! `git_status`: branch, upstream distance, staged, unstaged, untracked and conflicted files.

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};
use git2::{BranchType, Repository, Status, StatusOptions};
use serde::Deserialize;
use serde_json::json;

use std::path::Path;

use super::{git_err, head_description, open};
use crate::args;
use crate::search::walk::DeniedSkips;

/// Entries listed per section before the list is cut.
const MAX_ENTRIES: usize = 500;

/// Shows the working tree status of the repository holding the workspace.
#[derive(Debug, Default, Clone, Copy)]
pub struct GitStatus;

#[derive(Debug, Deserialize)]
struct Args {
    #[serde(default)]
    path: Option<String>,
}

#[async_trait]
impl Tool for GitStatus {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Git
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "git_status".into(),
            description: "Show the git status of the workspace's repository (read-only): the \
                branch and its distance from upstream, then staged, unstaged, untracked and \
                conflicted files. Ignored files are not listed."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Limit to this file or directory, relative to the workspace root. Default: the whole repository."
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
        let args: Args = args::parse("git_status", args)?;
        let skips = DeniedSkips::new(ctx.host.read_denials());
        tokio::task::spawn_blocking(move || {
            let opened = open(&ctx, args.path.as_deref())?;
            let mut text = status(&opened.repo, opened.pathspec.as_deref(), &skips)?;
            if let Some(note) = skips.note() {
                text.push_str(&note);
                text.push('\n');
            }
            Ok(ToolOutput::text(text))
        })
        .await
        .map_err(|e| ToolError::Failed(format!("git_status task failed: {e}")))?
    }
}

fn status(
    repo: &Repository,
    pathspec: Option<&str>,
    skips: &DeniedSkips,
) -> Result<String, ToolError> {
    let workdir = repo.workdir().map(Path::to_path_buf).unwrap_or_default();
    let mut out = head_description(repo);
    if let Some(upstream) = upstream_line(repo) {
        out.push_str(&format!("; {upstream}"));
    }
    out.push('\n');
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        .renames_head_to_index(true)
        .exclude_submodules(false);
    if let Some(p) = pathspec {
        opts.pathspec(p);
    }
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(|e| git_err("cannot read the git status", e))?;
    let mut staged = Vec::new();
    let mut unstaged = Vec::new();
    let mut untracked = Vec::new();
    let mut conflicted = Vec::new();
    for entry in statuses.iter() {
        let s = entry.status();
        let path = entry.path().unwrap_or("(non-UTF-8 path)").to_string();
        // A path a deny rule keeps from being read is not named either.
        if skips.skip(&workdir.join(&path)) {
            continue;
        }
        if s.contains(Status::CONFLICTED) {
            conflicted.push(path);
            continue;
        }
        let index = if s.contains(Status::INDEX_NEW) {
            Some("new file")
        } else if s.contains(Status::INDEX_MODIFIED) {
            Some("modified")
        } else if s.contains(Status::INDEX_DELETED) {
            Some("deleted")
        } else if s.contains(Status::INDEX_RENAMED) {
            Some("renamed")
        } else if s.contains(Status::INDEX_TYPECHANGE) {
            Some("typechange")
        } else {
            None
        };
        if let Some(kind) = index {
            let shown = match entry.head_to_index().and_then(|d| {
                d.old_file()
                    .path()
                    .map(|p| p.to_string_lossy().into_owned())
            }) {
                Some(old) if kind == "renamed" && old != path => format!("{old} -> {path}"),
                _ => path.clone(),
            };
            staged.push(format!("{kind}: {shown}"));
        }
        if s.contains(Status::WT_NEW) {
            untracked.push(path.clone());
        } else if s.contains(Status::WT_MODIFIED) {
            unstaged.push(format!("modified: {path}"));
        } else if s.contains(Status::WT_DELETED) {
            unstaged.push(format!("deleted: {path}"));
        } else if s.contains(Status::WT_TYPECHANGE) {
            unstaged.push(format!("typechange: {path}"));
        } else if s.contains(Status::WT_RENAMED) {
            unstaged.push(format!("renamed: {path}"));
        }
    }
    if staged.is_empty() && unstaged.is_empty() && untracked.is_empty() && conflicted.is_empty() {
        out.push_str("Nothing to commit, working tree clean");
        if let Some(p) = pathspec {
            out.push_str(&format!(" (in {p})"));
        }
        out.push('\n');
        return Ok(out);
    }
    section(&mut out, "Unmerged paths (conflicts)", &conflicted);
    section(&mut out, "Changes staged for commit", &staged);
    section(&mut out, "Changes not staged for commit", &unstaged);
    section(&mut out, "Untracked files", &untracked);
    Ok(out)
}

fn section(out: &mut String, title: &str, items: &[String]) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("{title} ({}):\n", items.len()));
    for i in items.iter().take(MAX_ENTRIES) {
        out.push_str("  ");
        out.push_str(i);
        out.push('\n');
    }
    if items.len() > MAX_ENTRIES {
        out.push_str(&format!(
            "  … and {} more (give a path to narrow the status)\n",
            items.len() - MAX_ENTRIES
        ));
    }
}

/// `ahead 2, behind 1 of origin/main`, when the branch has an upstream.
fn upstream_line(repo: &Repository) -> Option<String> {
    let head = repo.head().ok()?;
    if !head.is_branch() {
        return None;
    }
    let name = head.shorthand().ok()?;
    let branch = repo.find_branch(name, BranchType::Local).ok()?;
    let upstream = branch.upstream().ok()?;
    let up_name = upstream.name().ok().flatten()?.to_string();
    let (ahead, behind) = repo
        .graph_ahead_behind(head.target()?, upstream.get().target()?)
        .ok()?;
    Some(match (ahead, behind) {
        (0, 0) => format!("up to date with {up_name}"),
        (a, 0) => format!("ahead of {up_name} by {a} commit(s)"),
        (0, b) => format!("behind {up_name} by {b} commit(s)"),
        (a, b) => format!("diverged from {up_name}: {a} ahead, {b} behind"),
    })
}
