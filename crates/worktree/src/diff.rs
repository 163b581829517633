//! `cairn worktrees diff`: the worktree's working tree against its base commit, as a unified
//! diff (`.worktreeinclude` copies left out).

use git2::{DiffFormat, Oid};

use crate::error::{git, Result};
use crate::record::Record;
use crate::store::StateStore;

/// The unified diff of the worktree of `record` against its base.
pub fn unified(store: &StateStore, record: &Record) -> Result<String> {
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
    let diff = store
        .repo
        .diff_tree_to_tree(Some(&base), Some(&now), None)
        .map_err(git("comparing with the base"))?;
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
