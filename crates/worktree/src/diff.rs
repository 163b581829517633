//! `cairn worktrees diff`: the worktree's working tree against its base commit, as a unified
//! diff (`.worktreeinclude` copies left out).

use git2::{DiffFormat, Oid};

use crate::error::{git, Result};
use crate::record::Record;
use crate::store::StateStore;

/// The worktree's state now against its base commit, in Cairn's store.
fn against_base<'s>(store: &'s StateStore, record: &Record) -> Result<git2::Diff<'s>> {
    let now = crate::status::current_state(store, record)?;
    let base = store
        .repo
        .find_commit(Oid::from_str(&record.base).map_err(git("reading the base"))?)
        .map_err(git("reading the base commit"))?
        .tree()
        .map_err(git("reading the base tree"))?;
    let now = store
        .repo
        .find_tree(now)
        .map_err(git("reading the state"))?;
    store
        .repo
        .diff_tree_to_tree(Some(&base), Some(&now), None)
        .map_err(git("comparing with the base"))
}

/// The unified diff of the worktree of `record` against its base.
pub fn unified(store: &StateStore, record: &Record) -> Result<String> {
    let diff = against_base(store, record)?;
    let mut out = Vec::new();
    diff.print(DiffFormat::Patch, |_, _, line| {
        if matches!(line.origin(), '+' | '-' | ' ') {
            out.push(line.origin() as u8);
        }
        out.extend_from_slice(line.content());
        true
    })
    .map_err(git("printing the diff"))?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// How a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// New in the worktree.
    Added,
    /// Changed.
    Modified,
    /// Gone in the worktree.
    Deleted,
}

/// One file of a worktree's diff against its base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// Path relative to the worktree.
    pub path: String,
    /// How it changed.
    pub status: FileStatus,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    /// Whether git sees it as binary (no lines then).
    pub binary: bool,
    /// Its unified diff (headers included).
    pub patch: String,
}

/// The worktree's diff against its base, file by file.
pub fn files(store: &StateStore, record: &Record) -> Result<Vec<FileDiff>> {
    let diff = against_base(store, record)?;
    let mut out = Vec::new();
    for i in 0..diff.deltas().len() {
        let Some(delta) = diff.get_delta(i) else {
            continue;
        };
        let status = match delta.status() {
            git2::Delta::Added => FileStatus::Added,
            git2::Delta::Deleted => FileStatus::Deleted,
            _ => FileStatus::Modified,
        };
        let path = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let binary = delta.flags().is_binary();
        let mut patch_text = String::new();
        let (mut added, mut removed) = (0, 0);
        if let Ok(Some(mut patch)) = git2::Patch::from_diff(&diff, i) {
            if let Ok((_, a, r)) = patch.line_stats() {
                added = a as u32;
                removed = r as u32;
            }
            if let Ok(buf) = patch.to_buf() {
                patch_text = String::from_utf8_lossy(&buf).into_owned();
            }
        }
        out.push(FileDiff {
            path,
            status,
            added,
            removed,
            binary: binary || (patch_text.contains("Binary files") && added == 0 && removed == 0),
            patch: patch_text,
        });
    }
    Ok(out)
}
