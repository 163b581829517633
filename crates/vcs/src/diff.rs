//! Unified diffs between snapshot trees (git's patch format, with rename detection).

use git2::{DiffFindOptions, DiffFormat, DiffOptions, Oid, Repository};

use crate::error::Result;

/// The unified diff from tree `a` to tree `b`, optionally limited to `paths`.
pub(crate) fn unified(repo: &Repository, a: Oid, b: Oid, paths: &[String]) -> Result<String> {
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
