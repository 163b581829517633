//! Keeping a worktree current: the folder's newer HEAD merged (or rebased) into the
//! worktree's branch, conflicts left in the worktree for the agent or the user to resolve.
//! Runs the git CLI in the worktree (as the user would) with the repository's hooks off.

use std::path::Path;

use serde::Serialize;

use crate::error::{git, Result, WorktreeError};
use crate::repo::Repo;

/// How to bring the folder's HEAD in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateHow {
    /// `git merge` (a merge commit when both moved).
    Merge,
    /// `git rebase` (the worktree's commits replayed on the folder's HEAD).
    Rebase,
}

/// What an update did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Updated {
    /// The folder's HEAD that was brought in.
    pub head: String,
    /// Whether the worktree already had it (nothing ran).
    pub up_to_date: bool,
    /// Files git left in conflict (resolve, commit or continue, then update again).
    pub conflicts: Vec<String>,
}

/// Brings the folder's HEAD into worktree `name`.
pub fn update(repo: &Repo, name: &str, how: UpdateHow) -> Result<Updated> {
    let _lock = repo.records.lock(name)?;
    let mut record = crate::remove::owned(repo, name)?;
    crate::create::check(repo, &record)?;
    let head = repo
        .repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(git("reading the folder's HEAD"))?
        .id();
    let wt = git2::Repository::open(&record.path).map_err(git("opening the worktree"))?;
    let wt_head = wt
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(git("reading the worktree's HEAD"))?
        .id();
    let contains = wt_head == head
        || wt
            .graph_descendant_of(wt_head, head)
            .map_err(git("comparing the worktree with the folder"))?;
    if contains {
        record.base = head.to_string();
        repo.records.put(&record)?;
        return Ok(Updated {
            head: head.to_string(),
            up_to_date: true,
            conflicts: Vec::new(),
        });
    }
    let sha = head.to_string();
    let args: Vec<&str> = match how {
        UpdateHow::Merge => vec!["merge", "--no-edit", &sha],
        UpdateHow::Rebase => vec!["rebase", &sha],
    };
    let out = crate::gitcli::run(&record.path, &args)?;
    let conflicts = conflicted(&record.path)?;
    if !out.status.success() && conflicts.is_empty() {
        return Err(WorktreeError::Refused(format!(
            "git {} in worktree {name} failed: {}",
            args[0],
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    if conflicts.is_empty() {
        record.base = sha.clone();
        repo.records.put(&record)?;
    }
    Ok(Updated {
        head: sha,
        up_to_date: false,
        conflicts,
    })
}

/// Files in conflict in the worktree.
fn conflicted(dir: &Path) -> Result<Vec<String>> {
    let out = crate::gitcli::run(dir, &["diff", "--name-only", "--diff-filter=U"])?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}
