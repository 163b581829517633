//! Unified diffs between snapshot trees (git's patch format, with rename detection), and the
//! per-file line counts of the same diffs.

use git2::{Delta, Diff, DiffFindOptions, DiffFormat, DiffOptions, Oid, Patch, Repository};
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// How a file changed between two checkpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// It did not exist before.
    Added,
    /// Its content or mode changed.
    Modified,
    /// It no longer exists.
    Deleted,
    /// It moved (and may have changed).
    Renamed,
    /// Not diffed: a folder, or a path the diff does not show (counts are zero).
    Unknown,
}

/// One changed file of a diff, with the lines added and removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileStat {
    /// Path relative to the workspace (the new path of a rename; folders end with `/`).
    pub path: String,
    /// How it changed.
    pub status: FileStatus,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
}

/// The git diff from tree `a` to tree `b`, optionally limited to `paths`.
fn tree_diff<'r>(repo: &'r Repository, a: Oid, b: Oid, paths: &[String]) -> Result<Diff<'r>> {
    let ta = repo.find_tree(a)?;
    let tb = repo.find_tree(b)?;
    let mut opts = DiffOptions::new();
    opts.show_binary(false).context_lines(3);
    for p in paths {
        opts.pathspec(p);
    }
    let mut diff = repo.diff_tree_to_tree(Some(&ta), Some(&tb), Some(&mut opts))?;
    let mut find = DiffFindOptions::new();
    find.renames(true);
    diff.find_similar(Some(&mut find))?;
    Ok(diff)
}

/// The unified diff from tree `a` to tree `b`, optionally limited to `paths`.
pub(crate) fn unified(repo: &Repository, a: Oid, b: Oid, paths: &[String]) -> Result<String> {
    let diff = tree_diff(repo, a, b, paths)?;
    let mut out = Vec::new();
    diff.print(DiffFormat::Patch, |_delta, _hunk, line| {
        if matches!(line.origin(), '+' | '-' | ' ') {
            out.push(line.origin() as u8);
        }
        out.extend_from_slice(line.content());
        true
    })?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The files of the diff from tree `a` to tree `b` (limited to `paths`) with their line
/// counts, in the diff's order.
pub(crate) fn stats(repo: &Repository, a: Oid, b: Oid, paths: &[String]) -> Result<Vec<FileStat>> {
    let diff = tree_diff(repo, a, b, paths)?;
    let mut out = Vec::with_capacity(diff.deltas().len());
    for (i, delta) in diff.deltas().enumerate() {
        let file = delta.new_file().path().or_else(|| delta.old_file().path());
        let path = file
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let status = match delta.status() {
            Delta::Added | Delta::Untracked | Delta::Copied => FileStatus::Added,
            Delta::Deleted => FileStatus::Deleted,
            Delta::Renamed => FileStatus::Renamed,
            Delta::Modified | Delta::Typechange => FileStatus::Modified,
            _ => FileStatus::Unknown,
        };
        let (added, removed) = match Patch::from_diff(&diff, i)? {
            Some(p) => {
                let (_, add, del) = p.line_stats()?;
                (count(add), count(del))
            }
            None => (0, 0),
        };
        out.push(FileStat {
            path,
            status,
            added,
            removed,
        });
    }
    Ok(out)
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
