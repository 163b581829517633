//! Which paths the user's git tracks, read from their index without writing anything, so size
//! caps only ever apply to untracked files.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::Index;

use crate::rules::git_dir;

/// The user's tracked paths, relative to the workspace, loaded on first use.
pub(crate) struct Tracked {
    repo_root: Option<PathBuf>,
    ws_prefix: Vec<u8>,
    paths: Option<Option<Vec<Vec<u8>>>>,
}

impl Tracked {
    /// For a workspace inside `repo_root` (if any).
    pub fn new(workspace: &Path, repo_root: Option<&Path>) -> Tracked {
        let ws_prefix = repo_root
            .and_then(|r| workspace.strip_prefix(r).ok())
            .map(|p| {
                let mut v = p.as_os_str().as_bytes().to_vec();
                if !v.is_empty() {
                    v.push(b'/');
                }
                v
            })
            .unwrap_or_default();
        Tracked {
            repo_root: repo_root.map(Path::to_path_buf),
            ws_prefix,
            paths: None,
        }
    }

    /// Whether the workspace is inside a git repository.
    pub fn in_repo(&self) -> bool {
        self.repo_root.is_some()
    }

    /// Forgets the loaded list (the user's index may have changed).
    pub fn reset(&mut self) {
        self.paths = None;
    }

    /// Whether `rel` is tracked (always `false` outside a repository); `true` when the index
    /// cannot be read (never under-cover).
    pub fn contains(&mut self, rel: &[u8]) -> bool {
        match self.load() {
            Some(paths) => paths.binary_search_by(|p| p.as_slice().cmp(rel)).is_ok(),
            None => true,
        }
    }

    /// Whether any tracked path lies under the folder `rel`; `true` when unknown.
    pub fn has_under(&mut self, rel: &[u8]) -> bool {
        let mut prefix = rel.to_vec();
        prefix.push(b'/');
        match self.load() {
            Some(paths) => {
                let i = paths.partition_point(|p| p.as_slice() < prefix.as_slice());
                paths.get(i).is_some_and(|p| p.starts_with(&prefix))
            }
            None => true,
        }
    }

    /// Whether the user's git certainly tracks something under the folder `rel` (`false` when
    /// unknown): such folders are covered even when their name is excluded by default.
    pub fn surely_has_under(&mut self, rel: &[u8]) -> bool {
        if !self.in_repo() {
            return false;
        }
        let mut prefix = rel.to_vec();
        prefix.push(b'/');
        match self.load() {
            Some(paths) => {
                let i = paths.partition_point(|p| p.as_slice() < prefix.as_slice());
                paths.get(i).is_some_and(|p| p.starts_with(&prefix))
            }
            None => false,
        }
    }

    fn load(&mut self) -> Option<&Vec<Vec<u8>>> {
        if self.paths.is_none() {
            let loaded = self.read();
            self.paths = Some(loaded);
        }
        self.paths.as_ref().and_then(|p| p.as_ref())
    }

    fn read(&self) -> Option<Vec<Vec<u8>>> {
        let Some(root) = self.repo_root.as_ref() else {
            // Not a git repository: nothing is tracked.
            return Some(Vec::new());
        };
        let file = git_dir(root)?.join("index");
        if !file.is_file() {
            return Some(Vec::new());
        }
        // Index::open only reads the file; nothing is ever written back.
        let index = match Index::open(&file) {
            Ok(i) => i,
            Err(e) => {
                tracing::debug!(error = %e, "cannot read the user's index; treating all as tracked");
                return None;
            }
        };
        let mut out: Vec<Vec<u8>> = index
            .iter()
            .filter_map(|e| {
                e.path
                    .strip_prefix(self.ws_prefix.as_slice())
                    .map(<[u8]>::to_vec)
            })
            .collect();
        out.sort();
        out.dedup();
        Some(out)
    }
}
