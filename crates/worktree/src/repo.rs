//! The repository a workspace belongs to, and where Cairn keeps its worktrees of it.

use std::path::{Path, PathBuf};

use git2::Repository;
use sha2::{Digest, Sha256};

use crate::error::{git, Result, WorktreeError};
use crate::record::Records;

/// A workspace's repository and Cairn's folders for it.
pub struct Repo {
    /// The repository, opened at its main working tree.
    pub repo: Repository,
    /// The main working tree (the user's folder).
    pub folder: PathBuf,
    /// The common git dir.
    pub common_dir: PathBuf,
    /// The workspace relative to the folder (`-w repo/sub` → `sub`; empty at the root).
    pub sub: PathBuf,
    /// `<repo name>-<hash>`: names Cairn's folders for this repository.
    pub id: String,
    /// Where this repository's worktrees go: `<root>/<id>`.
    pub worktrees_dir: PathBuf,
    /// Cairn's records of them.
    pub records: Records,
    /// Cairn's object store for their states.
    pub store_dir: PathBuf,
}

/// Where Cairn puts things.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Cairn's state dir (records, stores).
    pub state_dir: PathBuf,
    /// The worktree root (`CAIRN_WORKTREES_DIR`, or its default).
    pub root: PathBuf,
}

impl Repo {
    /// The repository of `workspace`; a folder outside any repository, a bare repository or
    /// one that is itself a linked worktree of another is a usage error.
    pub fn discover(workspace: &Path, layout: &Layout) -> Result<Repo> {
        let workspace = workspace.canonicalize().map_err(|e| {
            WorktreeError::Usage(format!(
                "workspace {} is not usable: {e}",
                workspace.display()
            ))
        })?;
        let found = Repository::discover(&workspace).map_err(|_| {
            WorktreeError::Usage(format!(
                "{} is not inside a git repository: worktree sessions need one (run `git init` \
                 and commit, or run without --worktree)",
                workspace.display()
            ))
        })?;
        if found.is_bare() {
            return Err(WorktreeError::Usage(format!(
                "{} is a bare repository: worktree sessions need a working tree",
                workspace.display()
            )));
        }
        let common_dir = canon(found.commondir());
        // A workspace inside a linked worktree: work from the main one.
        let repo = if found.is_worktree() {
            Repository::open(&common_dir).map_err(git("opening the main repository"))?
        } else {
            found
        };
        let folder = match repo.workdir() {
            Some(w) => canon(w),
            None => {
                return Err(WorktreeError::Usage(format!(
                    "the repository of {} has no main working tree",
                    workspace.display()
                )))
            }
        };
        let sub = workspace
            .strip_prefix(&folder)
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let id = repo_id(&common_dir, &folder);
        let root = canon_lenient(&layout.root);
        if root.starts_with(&folder) {
            return Err(WorktreeError::Usage(format!(
                "the worktree root {} is inside the repository {}: set CAIRN_WORKTREES_DIR to a \
                 folder outside it",
                root.display(),
                folder.display()
            )));
        }
        let state = canon_lenient(&layout.state_dir);
        if root.starts_with(&state) {
            return Err(WorktreeError::Usage(format!(
                "the worktree root {} is inside Cairn's state dir {}, where commands may not \
                 write: set CAIRN_WORKTREES_DIR elsewhere",
                root.display(),
                state.display()
            )));
        }
        let mine = state.join("worktrees").join(&id);
        Ok(Repo {
            repo,
            folder,
            common_dir,
            sub,
            worktrees_dir: root.join(&id),
            records: Records::new(mine.join("records")),
            store_dir: mine.join("store.git"),
            id,
        })
    }

    /// The folder worktree `name` gets.
    pub fn worktree_path(&self, name: &str) -> PathBuf {
        self.worktrees_dir.join(name)
    }

    /// The worktree's own git dir in the repository.
    pub fn admin_dir(&self, name: &str) -> PathBuf {
        self.common_dir
            .join("worktrees")
            .join(crate::name::admin_id(name))
    }
}

/// `<folder name>-<8 hex of the common dir's path>`.
fn repo_id(common: &Path, folder: &Path) -> String {
    let digest = Sha256::digest(common.display().to_string().as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let name: String = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(32)
        .collect();
    if name.is_empty() {
        hex
    } else {
        format!("{name}-{hex}")
    }
}

/// `p` canonical, or as given when it cannot be resolved.
pub(crate) fn canon(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// `p` with its existing ancestors resolved (it may not exist yet).
pub(crate) fn canon_lenient(p: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut cur = p.to_path_buf();
    loop {
        if let Ok(c) = cur.canonicalize() {
            let mut out = c;
            for part in missing.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cur.file_name().map(|f| f.to_os_string()), cur.parent()) {
            (Some(f), Some(parent)) => {
                missing.push(f);
                cur = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}
