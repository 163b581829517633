//! Cairn's object store for a repository's worktrees: a bare git repository in Cairn's state
//! dir that borrows the user's objects (read-only, through `objects/info/alternates`) and
//! holds the worktrees' states (the last apply, a removed worktree's last state). Nothing
//! here is written into the user's repository.

use std::collections::HashSet;
use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{FileMode, Oid, Repository, Signature, Status, StatusOptions, Time};

use crate::error::{git, io, Result};

/// The store.
pub struct StateStore {
    /// The bare repository.
    pub repo: Repository,
}

impl StateStore {
    /// Opens (creating) the store at `dir`, borrowing objects from `common_dir`.
    pub fn open(dir: &Path, common_dir: &Path) -> Result<StateStore> {
        // Two processes opening it for the first time at once: one creates it.
        let parent = dir.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(io(format!("creating {}", parent.display())))?;
        let lock_path = dir.with_extension("lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(format!("opening {}", lock_path.display())))?;
        lock.lock()
            .map_err(io(format!("locking {}", lock_path.display())))?;
        let repo = if dir.join("HEAD").is_file() {
            Repository::open_bare(dir).map_err(git(format!("opening {}", dir.display())))?
        } else {
            std::fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
            Repository::init_bare(dir).map_err(git(format!("creating {}", dir.display())))?
        };
        let alternates = dir.join("objects/info/alternates");
        let want = format!("{}\n", common_dir.join("objects").display());
        if std::fs::read_to_string(&alternates).ok().as_deref() != Some(want.as_str()) {
            if let Some(parent) = alternates.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(io(format!("creating {}", parent.display())))?;
            }
            std::fs::write(&alternates, want)
                .map_err(io(format!("writing {}", alternates.display())))?;
            // Reopen: the object database reads alternates when it opens.
            let repo =
                Repository::open_bare(dir).map_err(git(format!("opening {}", dir.display())))?;
            return Ok(StateStore { repo });
        }
        Ok(StateStore { repo })
    }

    /// The state of the worktree at `worktree` as a tree in this store: its HEAD with what
    /// differs in its working tree (tracked and untracked, not ignored), `skip` left out
    /// (the files `.worktreeinclude` copied).
    pub fn capture(&self, worktree: &Path, skip: &HashSet<String>) -> Result<Oid> {
        self.capture_named(worktree, skip).map(|(tree, _)| tree)
    }

    /// [`StateStore::capture`], and the entries left out of the state, each with why (a
    /// nested repository, a file that cannot be read): one odd entry never fails the whole.
    pub fn capture_named(
        &self,
        worktree: &Path,
        skip: &HashSet<String>,
    ) -> Result<(Oid, Vec<String>)> {
        let wt = Repository::open(worktree)
            .map_err(git(format!("opening the worktree {}", worktree.display())))?;
        let head = wt
            .head()
            .and_then(|h| h.peel_to_tree())
            .map_err(git("reading the worktree's HEAD"))?;
        let mut opts = StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(false)
            .exclude_submodules(true)
            .renames_head_to_index(false)
            .renames_index_to_workdir(false);
        let statuses = wt
            .statuses(Some(&mut opts))
            .map_err(git("reading the worktree's changes"))?;
        let mut update = TreeUpdateBuilder::new();
        let mut any = false;
        let mut odd = Vec::new();
        for entry in statuses.iter() {
            let Ok(path) = entry.path() else {
                odd.push(format!(
                    "{} (a name that is not UTF-8)",
                    String::from_utf8_lossy(entry.path_bytes())
                ));
                continue;
            };
            if skip.contains(path) || entry.status() == Status::CURRENT {
                continue;
            }
            let full = worktree.join(path);
            if std::fs::symlink_metadata(&full).is_ok_and(|m| m.is_dir()) {
                // Git shows a nested repository as one untracked folder.
                odd.push(format!("{path} (a nested git repository)"));
                continue;
            }
            match blob_of(&self.repo, &full) {
                Ok(Some((oid, mode))) => {
                    update.upsert(path, oid, mode);
                    any = true;
                }
                Ok(None) => {
                    if head.get_path(Path::new(path)).is_ok() {
                        update.remove(path);
                        any = true;
                    }
                }
                Err(e) => {
                    tracing::warn!(path, error = %e, "leaving an unreadable file out of a worktree state");
                    odd.push(format!("{path} (cannot be read: {e})"));
                }
            }
        }
        let base = self
            .repo
            .find_tree(head.id())
            .map_err(git("reading the worktree's HEAD from Cairn's store"))?;
        if !any {
            return Ok((base.id(), odd));
        }
        let tree = update
            .create_updated(&self.repo, &base)
            .map_err(git("recording the worktree's state"))?;
        Ok((tree, odd))
    }

    /// `tree` with the files at `paths` (relative to `root`) written as they are now there.
    pub fn overlay(&self, tree: Oid, root: &Path, paths: &[String]) -> Result<Oid> {
        let base = self.repo.find_tree(tree).map_err(git("reading a state"))?;
        let mut update = TreeUpdateBuilder::new();
        for p in paths {
            match blob_of(&self.repo, &root.join(p))? {
                Some((oid, mode)) => update.upsert(p.as_str(), oid, mode),
                None => update.remove(p.as_str()),
            };
        }
        update
            .create_updated(&self.repo, &base)
            .map_err(git("recording a state"))
    }

    /// A commit of `tree` (parent: `parent`) under `refname`, so the state outlives gc.
    pub fn keep(&self, refname: &str, tree: Oid, message: &str) -> Result<Oid> {
        let sig = Signature::new(
            "Cairn",
            "cairn@localhost",
            &Time::new(chrono::Utc::now().timestamp(), 0),
        )
        .map_err(git("making a signature"))?;
        let t = self.repo.find_tree(tree).map_err(git("reading a state"))?;
        let parent = self
            .repo
            .refname_to_id(refname)
            .ok()
            .and_then(|id| self.repo.find_commit(id).ok());
        let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
        let id = self
            .repo
            .commit(None, &sig, &sig, message, &t, &parents)
            .map_err(git("recording a state"))?;
        match self.repo.reference(refname, id, true, message) {
            // Left by a process killed while updating it: callers hold the worktree's lock,
            // so no live process holds this one.
            Err(e) if e.code() == git2::ErrorCode::Locked => {
                let lock = self.repo.path().join(format!("{refname}.lock"));
                tracing::debug!(lock = %lock.display(), "removing a stale ref lock");
                let _ = std::fs::remove_file(&lock);
                self.repo
                    .reference(refname, id, true, message)
                    .map_err(git("recording a state"))?;
            }
            other => {
                other.map_err(git("recording a state"))?;
            }
        }
        Ok(id)
    }

    /// The tree of commit `id`.
    pub fn tree_of(&self, id: &str) -> Result<Oid> {
        let oid = Oid::from_str(id).map_err(git(format!("reading state {id}")))?;
        let c = self
            .repo
            .find_commit(oid)
            .map_err(git(format!("reading state {id}")))?;
        Ok(c.tree_id())
    }

    /// The blob and mode at `path` in `tree`, if any.
    pub fn entry(&self, tree: Oid, path: &str) -> Result<Option<(Oid, FileMode)>> {
        let t = self.repo.find_tree(tree).map_err(git("reading a state"))?;
        match t.get_path(Path::new(path)) {
            Ok(e) => Ok(Some((e.id(), mode_of(e.filemode())))),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git(format!("reading {path}"))(e)),
        }
    }

    /// The content of blob `oid`.
    pub fn blob(&self, oid: Oid) -> Result<Vec<u8>> {
        Ok(self
            .repo
            .find_blob(oid)
            .map_err(git("reading a file's content"))?
            .content()
            .to_vec())
    }

    /// Ref name of worktree `name`'s last-apply state.
    pub fn applied_ref(name: &str) -> String {
        format!("refs/cairn/applied/{name}")
    }

    /// Ref name of worktree `name`'s state before an update (what an interrupted one rolls
    /// back to).
    pub fn update_ref(name: &str) -> String {
        format!("refs/cairn/update/{name}")
    }

    /// Ref name of removed worktree `name`'s kept ignored and included files.
    pub fn kept_ref(name: &str) -> String {
        format!("refs/cairn/kept/{name}")
    }

    /// Ref name of removed worktree `name`'s last state.
    pub fn removed_ref(name: &str) -> String {
        format!("refs/cairn/removed/{name}")
    }
}

/// A git mode from a raw tree-entry mode.
pub(crate) fn mode_of(raw: i32) -> FileMode {
    match raw {
        0o100755 => FileMode::BlobExecutable,
        0o120000 => FileMode::Link,
        0o040000 => FileMode::Tree,
        0o160000 => FileMode::Commit,
        _ => FileMode::Blob,
    }
}

/// The blob (written into `repo`) and mode of the file at `path`; `None` when it does not
/// exist (or is a folder).
pub(crate) fn blob_of(repo: &Repository, path: &Path) -> Result<Option<(Oid, FileMode)>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path).map_err(io(format!("reading {}", path.display())))?;
        let bytes = target.as_os_str().as_encoded_bytes().to_vec();
        let oid = repo.blob(&bytes).map_err(git("storing a link"))?;
        return Ok(Some((oid, FileMode::Link)));
    }
    if !meta.is_file() {
        return Ok(None);
    }
    let bytes = std::fs::read(path).map_err(io(format!("reading {}", path.display())))?;
    let oid = repo.blob(&bytes).map_err(git("storing a file"))?;
    Ok(Some((oid, file_mode(&meta))))
}

/// Executable or plain.
pub(crate) fn file_mode(meta: &std::fs::Metadata) -> FileMode {
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o111 != 0 {
        FileMode::BlobExecutable
    } else {
        FileMode::Blob
    }
}
