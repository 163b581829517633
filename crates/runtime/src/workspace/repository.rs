//! The repository a workspace belongs to, for what is keyed by project (permission rules kept
//! for a project, trust in a project's MCP servers and hooks): every linked worktree of a
//! repository shares its main folder.

use std::path::{Path, PathBuf};

/// `p` canonical where it resolves, else as given.
pub(crate) fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The main folder (canonical; the repository folder itself when it is bare) of the
/// repository whose linked worktree `repo` is, when that repository lists it among its
/// worktrees. `None` for a repository's own folder, and for a folder whose `.git` only claims
/// to be a worktree of another repository: it cannot borrow that repository's key.
pub fn main_folder_of_linked(repo: &git2::Repository) -> Option<PathBuf> {
    if !repo.is_worktree() {
        return None;
    }
    let here = canonical(repo.workdir()?);
    let main = git2::Repository::open(repo.commondir()).ok()?;
    let names = main.worktrees().ok()?;
    let listed = names.iter().flatten().flatten().any(|name| {
        main.find_worktree(name)
            .is_ok_and(|w| canonical(w.path()) == here)
    });
    listed.then(|| canonical(main.workdir().unwrap_or_else(|| main.path())))
}
