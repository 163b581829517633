//! Cairn's ownership records: one JSON file per worktree it created, under
//! `<state dir>/worktrees/<repo id>/<NAME>.json`. Only a worktree with a record is ever
//! reused, applied, removed or restored.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{io, Result, WorktreeError};

/// What Cairn knows of a worktree it created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The NAME.
    pub name: String,
    /// The worktree's folder.
    pub path: PathBuf,
    /// Its branch (`cairn/NAME`).
    pub branch: String,
    /// The commit it was created from.
    pub base: String,
    /// The repository's common git dir (the folder's `.git`).
    pub common_dir: PathBuf,
    /// The folder (the repository's main working tree).
    pub folder: PathBuf,
    /// The worktree's own git dir (`<common>/worktrees/cairn-NAME`): the only one its `.git`
    /// file may point to.
    pub gitdir: PathBuf,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// Files copied by `.worktreeinclude` (relative paths; left out of diffs and applies).
    #[serde(default)]
    pub included: Vec<String>,
    /// Files carried from the folder's uncommitted changes at creation.
    #[serde(default)]
    pub carried: Vec<String>,
    /// Commit in Cairn's store holding the worktree's state at its last apply (at creation:
    /// its first state); what the next apply merges from.
    pub applied: String,
    /// The folder session its applies are change-turns of when the user applies it from
    /// outside a folder chat (made on the first such apply, then reused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply_session: Option<String>,
    /// When it was removed with unapplied changes (RFC 3339), and the commit in Cairn's
    /// store of its last state: restorable until the retention ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<Removed>,
}

/// A removed worktree's last state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Removed {
    /// RFC 3339 time of the removal.
    pub at: String,
    /// Commit in Cairn's store of its state then.
    pub state: String,
    /// Whether its branch was kept (it held commits beyond the base).
    pub branch_kept: bool,
    /// Its ignored files, edited `.worktreeinclude` copies and nested repositories, kept in
    /// Cairn's store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<crate::keep::KeptFiles>,
    /// The removal has not finished deleting yet (an interrupted removal): the next command
    /// that reads the record finishes it (see [`crate::recover_removals`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pending: bool,
    /// Whether something was kept (else the record goes once the removal finished).
    #[serde(default = "yes")]
    pub restorable: bool,
}

fn yes() -> bool {
    true
}

/// The records of one repository.
#[derive(Debug, Clone)]
pub struct Records {
    dir: PathBuf,
}

impl Records {
    /// The records in `dir` (created on first write).
    pub fn new(dir: PathBuf) -> Records {
        Records { dir }
    }

    /// Their folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.json"))
    }

    /// The record of `name`, if Cairn created it.
    pub fn get(&self, name: &str) -> Result<Option<Record>> {
        let path = self.path(name);
        match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|source| WorktreeError::Record {
                        context: format!("reading {}", path.display()),
                        source,
                    })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(io(format!("reading {}", path.display()))(e)),
        }
    }

    /// Every record, by name; unreadable ones are skipped with a warning.
    pub fn all(&self) -> Result<Vec<Record>> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(format!("listing {}", self.dir.display()))(e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let file = entry.file_name();
            let Some(name) = file.to_str().and_then(|f| f.strip_suffix(".json")) else {
                continue;
            };
            match self.get(name) {
                Ok(Some(r)) => out.push(r),
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "skipping an unreadable worktree record"),
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    /// Saves `record` atomically (temp file, fsync, rename).
    pub fn put(&self, record: &Record) -> Result<()> {
        std::fs::create_dir_all(&self.dir)
            .map_err(io(format!("creating {}", self.dir.display())))?;
        let path = self.path(&record.name);
        let tmp = self.dir.join(format!(".{}.json.tmp", record.name));
        let bytes = serde_json::to_vec_pretty(record).map_err(|source| WorktreeError::Record {
            context: format!("writing {}", path.display()),
            source,
        })?;
        write_synced(&tmp, &bytes)?;
        std::fs::rename(&tmp, &path).map_err(io(format!("writing {}", path.display())))
    }

    /// Forgets `name` (after its retention ended).
    pub fn delete(&self, name: &str) -> Result<()> {
        let path = self.path(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(io(format!("removing {}", path.display()))(e))
            }
            _ => Ok(()),
        }
    }

    /// Takes the creation lock of `name`, waiting for another process holding it.
    pub fn lock(&self, name: &str) -> Result<std::fs::File> {
        std::fs::create_dir_all(&self.dir)
            .map_err(io(format!("creating {}", self.dir.display())))?;
        let path = self.dir.join(format!("{name}.lock"));
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(format!("opening {}", path.display())))?;
        file.lock()
            .map_err(io(format!("locking {}", path.display())))?;
        Ok(file)
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path).map_err(io(format!("writing {}", path.display())))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(io(format!("writing {}", path.display())))
}
