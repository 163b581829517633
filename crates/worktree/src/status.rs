//! What a worktree holds: changed files against its base, files neither applied nor
//! committed, commits beyond its base, disk use.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use git2::{Oid, Repository};
use serde::Serialize;

use crate::error::{git, Result};
use crate::record::Record;
use crate::repo::Repo;
use crate::store::StateStore;

/// One line of `cairn worktrees list --json` (without `sessions`, which the runtime adds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeStatus {
    /// NAME.
    pub name: String,
    /// Folder.
    pub path: String,
    /// Branch.
    pub branch: String,
    /// Base commit.
    pub base: String,
    /// Files changed against the base (`.worktreeinclude` copies excluded).
    pub changed_files: usize,
    /// Changed files neither applied to the folder nor committed.
    pub unapplied_files: usize,
    /// Commits on its branch beyond the base.
    pub commits_ahead: usize,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// Bytes on disk (ignored build output included).
    pub bytes: u64,
}

/// The paths that differ between two trees of `store`.
pub(crate) fn changed_paths(store: &StateStore, from: Oid, to: Oid) -> Result<BTreeSet<String>> {
    if from == to {
        return Ok(BTreeSet::new());
    }
    let repo = &store.repo;
    let a = repo.find_tree(from).map_err(git("reading a state"))?;
    let b = repo.find_tree(to).map_err(git("reading a state"))?;
    let diff = repo
        .diff_tree_to_tree(Some(&a), Some(&b), None)
        .map_err(git("comparing states"))?;
    let mut out = BTreeSet::new();
    for d in diff.deltas() {
        for f in [d.old_file(), d.new_file()] {
            if let Some(p) = f.path() {
                out.insert(p.to_string_lossy().into_owned());
            }
        }
    }
    Ok(out)
}

/// The worktree's state now, in `store`.
pub fn current_state(store: &StateStore, record: &Record) -> Result<Oid> {
    let skip: HashSet<String> = record.included.iter().cloned().collect();
    store.capture(&record.path, &skip)
}

/// Files changed in the worktree that are neither applied nor committed, given its state now.
pub fn unapplied(store: &StateStore, record: &Record, now: Oid) -> Result<Vec<String>> {
    let applied = store.tree_of(&record.applied)?;
    let since_apply = changed_paths(store, applied, now)?;
    if since_apply.is_empty() {
        return Ok(Vec::new());
    }
    let wt = Repository::open(&record.path).map_err(git("opening the worktree"))?;
    let head = wt
        .head()
        .and_then(|h| h.peel_to_tree())
        .map_err(git("reading the worktree's HEAD"))?
        .id();
    let uncommitted = changed_paths(store, head, now)?;
    Ok(since_apply.intersection(&uncommitted).cloned().collect())
}

/// The status of the worktree of `record`.
pub fn status(repo: &Repo, store: &StateStore, record: &Record) -> Result<WorktreeStatus> {
    let now = current_state(store, record)?;
    let base_tree = store
        .repo
        .find_commit(Oid::from_str(&record.base).map_err(git("reading the base"))?)
        .map_err(git("reading the base commit"))?
        .tree_id();
    let changed = changed_paths(store, base_tree, now)?.len();
    let unapplied = unapplied(store, record, now)?.len();
    Ok(WorktreeStatus {
        name: record.name.clone(),
        path: record.path.display().to_string(),
        branch: record.branch.clone(),
        base: record.base.clone(),
        changed_files: changed,
        unapplied_files: unapplied,
        commits_ahead: commits_ahead(&repo.repo, record)?,
        created_at: record.created_at.clone(),
        bytes: disk_use(&record.path),
    })
}

/// Commits on the worktree's branch beyond its base (0 when the branch is gone).
pub fn commits_ahead(repo: &Repository, record: &Record) -> Result<usize> {
    let Ok(tip) = repo
        .find_branch(&record.branch, git2::BranchType::Local)
        .and_then(|b| b.get().peel_to_commit())
    else {
        return Ok(0);
    };
    let base = Oid::from_str(&record.base).map_err(git("reading the base"))?;
    let (ahead, _) = repo
        .graph_ahead_behind(tip.id(), base)
        .map_err(git("counting the branch's commits"))?;
    Ok(ahead)
}

/// Bytes of every file below `dir` (links not followed).
pub fn disk_use(dir: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else {
                total += meta.len();
            }
        }
    }
    total
}
