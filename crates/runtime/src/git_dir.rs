//! A repository's git directory is never a workspace. Git runs the hooks and obeys the config
//! it finds there, outside every sandbox, so a workspace inside `repo/.git` (which the GTK
//! folder chooser offers by completing `repo/` to `repo/.git/`) would let the agent plant a
//! `hooks/pre-commit` that runs on the user's next commit; the "writes under `.git/` always
//! ask" rule has no `.git/` prefix to match there. Git's own rules decide what a git
//! directory is (libgit2 opening a folder as one, with no search and no `.git` appended), so
//! `.git` folders, what a `.git` file points to (`.git/worktrees/NAME`, `.git/modules/NAME`),
//! bare repositories and `GIT_DIR` are all caught, after links are resolved.

use std::path::{Path, PathBuf};

use git2::{ErrorCode, Repository, RepositoryOpenFlags};

/// Why a folder may not be a workspace: it is, or is inside, a git directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.sentence())]
pub struct GitDirRefusal {
    /// The folder that was asked for (links resolved).
    pub folder: PathBuf,
    /// The git directory it is, or is inside.
    pub git_dir: PathBuf,
    /// The repository's work tree, the folder to open instead; `None` for a bare repository
    /// (or one whose work tree could not be learned).
    pub work_tree: Option<PathBuf>,
}

impl GitDirRefusal {
    /// The one sentence every face shows (the CLI on stderr with exit 2, the app above its
    /// "Open … instead" button).
    fn sentence(&self) -> String {
        let inside = if self.folder == self.git_dir {
            "it is".to_string()
        } else {
            format!("it is inside {}, which is", self.git_dir.display())
        };
        match &self.work_tree {
            Some(w) => format!(
                "refusing {} as the workspace: {inside} the git directory of the repository {} \
                 (git runs hooks and reads settings from there, outside every sandbox); open {} \
                 instead",
                self.folder.display(),
                w.display(),
                w.display()
            ),
            None => format!(
                "refusing {} as the workspace: {inside} a bare git repository with no work tree \
                 (git runs hooks and reads settings from there, outside every sandbox); open a \
                 clone of it instead",
                self.folder.display()
            ),
        }
    }
}

/// Refuses `folder` (canonical: links resolved) when it is, or is inside, a git directory:
/// any of its ancestors that git opens as a repository directory, or `GIT_DIR` when set.
pub fn refuse_git_dir(folder: &Path) -> Result<(), GitDirRefusal> {
    if let Some(git_dir) = std::env::var_os("GIT_DIR").filter(|d| !d.is_empty()) {
        let given = Path::new(&git_dir);
        let given = if given.is_absolute() {
            given.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(given)
        };
        if let Ok(dir) = given.canonicalize() {
            if folder.starts_with(&dir) {
                let work_tree = std::env::var_os("GIT_WORK_TREE")
                    .filter(|w| !w.is_empty())
                    .and_then(|w| PathBuf::from(w).canonicalize().ok())
                    .or_else(|| opened_git_dir(&dir).and_then(|(_, w)| w));
                return Err(GitDirRefusal {
                    folder: folder.to_path_buf(),
                    git_dir: dir,
                    work_tree,
                });
            }
        }
    }
    // The nearest git directory wins: `repo/.git/modules/sub` is inside `repo/.git` too, but
    // the submodule's names the repository whose files the user meant.
    for dir in folder.ancestors() {
        if let Some((git_dir, work_tree)) = opened_git_dir(dir) {
            return Err(GitDirRefusal {
                folder: folder.to_path_buf(),
                git_dir,
                work_tree,
            });
        }
    }
    Ok(())
}

/// `dir` opened as a git directory itself (no upward search, no `.git` appended): the
/// canonical git directory and the work tree git gives it. `None` when git does not take
/// `dir` for one. A repository that libgit2 refuses to open because another user owns it is
/// still a git directory; its work tree is then the parent of a `.git` folder, else unknown.
fn opened_git_dir(dir: &Path) -> Option<(PathBuf, Option<PathBuf>)> {
    let flags = RepositoryOpenFlags::NO_SEARCH | RepositoryOpenFlags::NO_DOTGIT;
    match Repository::open_ext(dir, flags, std::iter::empty::<&std::ffi::OsStr>()) {
        Ok(repo) => {
            let git_dir = canonical(repo.path());
            let work_tree = if repo.is_bare() {
                None
            } else {
                repo.workdir().map(canonical)
            };
            Some((git_dir, work_tree))
        }
        Err(e) if e.code() == ErrorCode::Owner => {
            let work_tree = (dir.file_name() == Some(std::ffi::OsStr::new(".git")))
                .then(|| dir.parent().map(Path::to_path_buf))
                .flatten();
            Some((dir.to_path_buf(), work_tree))
        }
        Err(_) => None,
    }
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}
