//! Where a workspace's checkpoints live: `<state_dir>/vcs/<key>/`, a bare shadow repository
//! plus Cairn's own files. Nothing here ever opens the workspace's `.git` for writing.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};
use serde::{Deserialize, Serialize};

use crate::error::{io, Result, VcsError};

/// The files of one workspace's store.
pub(crate) struct Store {
    root: PathBuf,
    workspace: PathBuf,
    /// The shadow repository (bare).
    pub repo: Repository,
}

#[derive(Serialize, Deserialize)]
struct WorkspaceFile {
    workspace: String,
}

/// An exclusive lock on a workspace's store, released on drop.
pub(crate) struct StoreLock {
    file: File,
}

impl Drop for StoreLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

/// The workspace whose store under `state_dir` holds change-turns of `session` (found from
/// the stores' own files, for when the session's checkpoint cannot be read).
pub fn workspace_of_session(state_dir: &Path, session: &str) -> Option<PathBuf> {
    if validate_session(session).is_err() {
        return None;
    }
    fs::read_dir(state_dir.join("vcs"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|root| {
            root.join("sessions")
                .join(format!("{session}.json"))
                .is_file()
        })
        .find_map(|root| {
            let text = fs::read(root.join("workspace.json")).ok()?;
            let file: WorkspaceFile = serde_json::from_slice(&text).ok()?;
            Some(PathBuf::from(file.workspace))
        })
}

/// The store directory of a workspace under a state dir.
pub fn store_dir(state_dir: &Path, workspace: &Path) -> PathBuf {
    let key = Oid::hash_object(ObjectType::Blob, workspace.as_os_str().as_bytes())
        .map(|o| o.to_string())
        .unwrap_or_else(|_| "workspace".into());
    state_dir.join("vcs").join(&key[..16.min(key.len())])
}

impl Store {
    /// Opens (creating if needed) the store of `workspace` (a canonical path).
    pub fn open(state_dir: &Path, workspace: &Path) -> Result<Store> {
        let root = store_dir(state_dir, workspace);
        fs::create_dir_all(root.join("sessions"))
            .map_err(io(format!("creating {}", root.display())))?;
        // Sessions starting at once in one workspace would race to create the shadow
        // repository (git's `config.lock`): the store's lock makes its creation one step.
        let _creating = lock_file(&root.join("lock"))?;
        let repo_dir = root.join("repo");
        let repo = if repo_dir.join("HEAD").exists() {
            Repository::open_bare(&repo_dir)?
        } else {
            Repository::init_bare(&repo_dir)?
        };
        let ws_file = root.join("workspace.json");
        if !ws_file.exists() {
            let body = serde_json::to_vec_pretty(&WorkspaceFile {
                workspace: workspace.display().to_string(),
            })
            .map_err(|e| VcsError::Corrupt {
                path: ws_file.clone(),
                reason: e.to_string(),
            })?;
            write_atomic(&ws_file, &body)?;
        }
        Ok(Store {
            root,
            workspace: workspace.to_path_buf(),
            repo,
        })
    }

    /// The store's root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The workspace this store belongs to.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The shadow repository's folder.
    pub fn repo_dir(&self) -> PathBuf {
        self.root.join("repo")
    }

    /// The stat cache (a git index file, never the user's).
    pub fn index_path(&self) -> PathBuf {
        self.root.join("index")
    }

    /// The restore journal.
    pub fn journal_path(&self) -> PathBuf {
        self.root.join("restore-journal.json")
    }

    /// The folder the watcher uses for its ordering barrier.
    pub fn sync_dir(&self) -> PathBuf {
        self.root.join("sync")
    }

    /// A session's turn log.
    pub fn session_path(&self, id: &str) -> Result<PathBuf> {
        validate_session(id)?;
        Ok(self.root.join("sessions").join(format!("{id}.json")))
    }

    /// A session's in-progress turn (written on every snapshot without fsync; losing it on
    /// power loss only loses the unfinished turn's marker).
    pub fn pending_path(&self, id: &str) -> Result<PathBuf> {
        validate_session(id)?;
        Ok(self.root.join("sessions").join(format!("{id}.pending")))
    }

    /// Takes the store's exclusive lock (blocks while another process holds it).
    pub fn lock(&self) -> Result<StoreLock> {
        lock_file(&self.root.join("lock"))
    }
}

/// Opens (creating) and exclusively locks `path`, waiting for other holders.
fn lock_file(path: &Path) -> Result<StoreLock> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io(format!("opening {}", path.display())))?;
    file.lock()
        .map_err(io(format!("locking {}", path.display())))?;
    Ok(StoreLock { file })
}

/// Session ids name files: letters, digits, `-` and `_` only.
pub(crate) fn validate_session(id: &str) -> Result<()> {
    if id.is_empty()
        || id.len() > 128
        || !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(VcsError::InvalidSession(id.to_string()));
    }
    Ok(())
}

/// Writes a file atomically: temp file in the same folder, fsync, rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replace(path, bytes, true)
}

/// Writes a file by temp file and rename, fsyncing the data first when `sync`.
pub(crate) fn write_replace(path: &Path, bytes: &[u8], sync: bool) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    // Unique per write: two threads of one process (a turn's checkpoint and the desktop's
    // timeline) may replace the same file at once.
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{seq}.tmp", std::process::id()));
    {
        let mut f = File::create(&tmp).map_err(io(format!("creating {}", tmp.display())))?;
        f.write_all(bytes)
            .and_then(|_| if sync { f.sync_all() } else { Ok(()) })
            .map_err(io(format!("writing {}", tmp.display())))?;
    }
    fs::rename(&tmp, path).map_err(io(format!("replacing {}", path.display())))
}

/// Reads and parses a JSON file; `None` when it does not exist.
pub(crate) fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| VcsError::Corrupt {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
}

/// Serialises and writes a JSON file atomically (fsynced).
pub(crate) fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    write_json_with(path, value, true)
}

/// Serialises and writes a JSON file by rename, fsynced when `sync`.
pub(crate) fn write_json_with<T: Serialize>(path: &Path, value: &T, sync: bool) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| VcsError::Corrupt {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    write_replace(path, &bytes, sync)
}
