//! A repository, Cairn's state dir and worktree root in one temporary folder.

use std::path::{Path, PathBuf};

use cairn_worktree::{Layout, Repo};

pub use cairn_testkit::git::{digest, git, repo_with};

pub struct Env {
    _dir: tempfile::TempDir,
    pub folder: PathBuf,
    pub layout: Layout,
}

impl Env {
    pub fn new(files: &[(&str, &str)]) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("repo");
        repo_with(&folder, files);
        let layout = Layout {
            state_dir: dir.path().join("state"),
            root: dir.path().join("worktrees"),
        };
        Env {
            folder: folder.canonicalize().unwrap(),
            layout,
            _dir: dir,
        }
    }

    pub fn repo(&self) -> Repo {
        Repo::discover(&self.folder, &self.layout).unwrap()
    }

    pub fn git(&self, args: &[&str]) -> String {
        git(&self.folder, args)
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.folder.join(rel)).unwrap()
    }

    pub fn write(&self, rel: &str, text: &str) {
        write(&self.folder, rel, text);
    }

    /// The user's `.git` apart from what a worktree may add.
    pub fn dot_git(&self) -> String {
        digest(
            &self.folder.join(".git"),
            &["worktrees", "refs/heads/cairn", "logs/refs/heads/cairn"],
        )
    }
}

pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

pub fn lines(n: usize, tag: &str) -> String {
    (1..=n).map(|i| format!("line {i} {tag}\n")).collect()
}
