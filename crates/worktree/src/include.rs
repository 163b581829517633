//! `.worktreeinclude` (gitignore syntax, at the repository's root): ignored files the project
//! needs in every worktree (`.env`, local config) are copied into a new one. Ignored folders
//! are only entered when a pattern names something inside them, so dependency folders
//! (`node_modules`, `target`) are never copied unless listed themselves.

use std::path::Path;

use git2::{Repository, StatusOptions};
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::error::{git, io, Result, WorktreeError};

/// The file's name.
pub const FILE: &str = ".worktreeinclude";

/// What an include copy did: the paths copied, and the ones skipped with why.
#[derive(Debug, Default)]
pub(crate) struct Copied {
    /// Relative paths copied.
    pub copied: Vec<String>,
    /// Paths not copied, each with why (a link on the way in the folder or the worktree).
    pub skipped: Vec<String>,
}

/// Copies the folder's ignored files that `.worktreeinclude` lists into `worktree`, never
/// following a link on the way (in the folder or the worktree).
pub(crate) fn copy_included(repo: &Repository, folder: &Path, worktree: &Path) -> Result<Copied> {
    let Some((matcher, patterns)) = load(folder)? else {
        return Ok(Copied::default());
    };
    let mut opts = StatusOptions::new();
    // Untracked folders are looked into: ignored files sit in them too.
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(true)
        .recurse_ignored_dirs(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(git("reading the folder's ignored files"))?;
    let mut copied = Copied::default();
    for entry in statuses.iter() {
        if !entry.status().contains(git2::Status::IGNORED) {
            continue;
        }
        let Ok(rel) = entry.path() else { continue };
        let rel = rel.trim_end_matches('/');
        let full = folder.join(rel);
        let is_dir = std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir());
        if matcher.matched(rel, is_dir).is_ignore() {
            copy_tree(folder, rel, worktree, &mut copied)?;
        } else if is_dir && names_inside(&patterns, rel) {
            walk(folder, rel, worktree, &matcher, &mut copied)?;
        }
    }
    copied.copied.sort();
    Ok(copied)
}

/// The matcher and its anchored patterns, or `None` without a `.worktreeinclude`.
fn load(folder: &Path) -> Result<Option<(Gitignore, Vec<String>)>> {
    let path = folder.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
    };
    let mut b = GitignoreBuilder::new(folder);
    let mut patterns = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        b.add_line(None, l).map_err(|e| {
            WorktreeError::Usage(format!("{}: bad pattern `{l}`: {e}", path.display()))
        })?;
        patterns.push(l.trim_start_matches('/').to_string());
    }
    let m = b
        .build()
        .map_err(|e| WorktreeError::Usage(format!("{}: {e}", path.display())))?;
    Ok(Some((m, patterns)))
}

/// Whether some pattern names a path below folder `dir`.
fn names_inside(patterns: &[String], dir: &str) -> bool {
    let prefix = format!("{dir}/");
    patterns
        .iter()
        .any(|p| p.starts_with(&prefix) || p.starts_with("**/"))
}

/// Copies the files below `dir` that the matcher selects.
fn walk(folder: &Path, dir: &str, worktree: &Path, m: &Gitignore, out: &mut Copied) -> Result<()> {
    let full = folder.join(dir);
    let entries = std::fs::read_dir(&full).map_err(io(format!("listing {}", full.display())))?;
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let rel = format!("{dir}/{name}");
        // `DirEntry::file_type` does not follow links.
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if m.matched(&rel, is_dir).is_ignore() {
            copy_tree(folder, &rel, worktree, out)?;
        } else if is_dir {
            walk(folder, &rel, worktree, m, out)?;
        }
    }
    Ok(())
}

/// Copies file, link or folder `rel` from `folder` into `worktree`.
fn copy_tree(folder: &Path, rel: &str, worktree: &Path, out: &mut Copied) -> Result<()> {
    let from = folder.join(rel);
    let meta =
        std::fs::symlink_metadata(&from).map_err(io(format!("reading {}", from.display())))?;
    if meta.is_dir() {
        let entries =
            std::fs::read_dir(&from).map_err(io(format!("listing {}", from.display())))?;
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            copy_tree(folder, &format!("{rel}/{name}"), worktree, out)?;
        }
        return Ok(());
    }
    match crate::create::copy_or_remove(folder, worktree, rel)? {
        None => out.copied.push(rel.to_string()),
        Some(why) => out.skipped.push(why),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_patterns_match_relative_paths() {
        let dir = std::env::temp_dir();
        let mut b = GitignoreBuilder::new(&dir);
        b.add_line(None, "config/local/*.json")
            .unwrap_or_else(|e| panic!("{e}"));
        let m = b.build().unwrap_or_else(|e| panic!("{e}"));
        assert!(m.matched("config/local/dev.json", false).is_ignore());
    }
}
