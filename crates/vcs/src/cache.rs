//! The stat cache: a git index file in Cairn's store (never the user's) mapping each covered
//! path to its last seen `stat` data and blob id, so unchanged files are never re-hashed.

use std::fs::Metadata;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use git2::{Index, IndexEntry, IndexTime, Oid};

use crate::error::Result;

/// Git file modes.
pub(crate) const MODE_FILE: u32 = 0o100644;
/// Executable file.
pub(crate) const MODE_EXEC: u32 = 0o100755;
/// Symbolic link.
pub(crate) const MODE_LINK: u32 = 0o120000;
/// Tree (folder).
pub(crate) const MODE_TREE: u32 = 0o040000;

/// The git mode of a file from its metadata (`None` for folders and special files).
pub(crate) fn git_mode(meta: &Metadata) -> Option<u32> {
    let ft = meta.file_type();
    if ft.is_symlink() {
        Some(MODE_LINK)
    } else if ft.is_file() {
        Some(if meta.mode() & 0o111 != 0 {
            MODE_EXEC
        } else {
            MODE_FILE
        })
    } else {
        None
    }
}

/// The stat data compared to decide whether a file may have changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stat {
    mtime: (i32, u32),
    ctime: (i32, u32),
    dev: u32,
    ino: u32,
    size: u32,
    mode: u32,
}

impl Stat {
    /// From file metadata.
    pub fn of(meta: &Metadata, mode: u32) -> Stat {
        Stat {
            mtime: (meta.mtime() as i32, meta.mtime_nsec() as u32),
            ctime: (meta.ctime() as i32, meta.ctime_nsec() as u32),
            dev: meta.dev() as u32,
            ino: meta.ino() as u32,
            size: meta.size() as u32,
            mode,
        }
    }

    /// Whether the file was modified so recently that a later same-second change could keep
    /// the same stat data ("racily clean"): such entries are stored smudged, so they are
    /// hashed again next time.
    fn is_racy(&self, now_secs: i64) -> bool {
        i64::from(self.mtime.0) >= now_secs - 1 || i64::from(self.ctime.0) >= now_secs - 1
    }

    fn from_entry(e: &IndexEntry) -> Stat {
        Stat {
            mtime: (e.mtime.seconds(), e.mtime.nanoseconds()),
            ctime: (e.ctime.seconds(), e.ctime.nanoseconds()),
            dev: e.dev,
            ino: e.ino,
            size: e.file_size,
            mode: e.mode,
        }
    }
}

/// The stat cache of one workspace.
pub(crate) struct StatCache {
    index: Index,
    changed: bool,
}

fn as_path(rel: &[u8]) -> &Path {
    Path::new(std::ffi::OsStr::from_bytes(rel))
}

impl StatCache {
    /// Opens the cache file (a corrupt one is discarded: it is only a cache).
    pub fn open(path: &Path) -> Result<StatCache> {
        let index = match Index::open(path) {
            Ok(i) => i,
            Err(e) => {
                tracing::warn!(error = %e, path = %path.display(), "discarding unreadable stat cache");
                let _ = std::fs::remove_file(path);
                Index::open(path)?
            }
        };
        Ok(StatCache {
            index,
            changed: false,
        })
    }

    /// The cached blob id of `rel` if its stat data is unchanged.
    pub fn lookup(&self, rel: &[u8], stat: &Stat) -> Option<Oid> {
        let e = self.index.get_path(as_path(rel), 0)?;
        (Stat::from_entry(&e) == *stat).then_some(e.id)
    }

    /// Records `rel` as hashed to `id` with `stat`.
    pub fn record(&mut self, rel: &[u8], stat: &Stat, id: Oid, now_secs: i64) -> Result<()> {
        let mut entry = entry(rel, stat, id);
        if stat.is_racy(now_secs) {
            entry.mtime = IndexTime::new(0, 0);
        }
        self.index.add(&entry)?;
        self.changed = true;
        Ok(())
    }

    /// Forgets `rel` and everything under it.
    pub fn remove(&mut self, rel: &[u8]) -> Result<()> {
        let p = as_path(rel);
        if self.index.get_path(p, 0).is_some() {
            self.index.remove(p, 0)?;
        }
        self.index.remove_dir(p, 0)?;
        self.changed = true;
        Ok(())
    }

    /// Number of cached paths.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Drops cached paths for which `keep` is false.
    pub fn retain(&mut self, keep: impl Fn(&[u8]) -> bool) -> Result<()> {
        let stale: Vec<Vec<u8>> = self
            .index
            .iter()
            .filter(|e| !keep(&e.path))
            .map(|e| e.path)
            .collect();
        for p in stale {
            self.index.remove(as_path(&p), 0)?;
            self.changed = true;
        }
        Ok(())
    }

    /// Replaces the whole cache with `entries` (sorted by path).
    pub fn replace_all<'a>(
        &mut self,
        entries: impl Iterator<Item = (&'a [u8], Stat, Oid)>,
        now_secs: i64,
    ) -> Result<()> {
        self.index.clear()?;
        for (rel, stat, id) in entries {
            self.record(rel, &stat, id, now_secs)?;
        }
        self.changed = true;
        Ok(())
    }

    /// Writes the cache if it changed.
    /// The caller holds the store lock, so a leftover `index.lock` is from a process that died
    /// while writing: it is removed and the write retried once.
    pub fn save(&mut self) -> Result<()> {
        if !self.changed {
            return Ok(());
        }
        if let Err(e) = self.index.write() {
            if e.code() != git2::ErrorCode::Locked {
                return Err(e.into());
            }
            if let Some(path) = self.index.path() {
                let mut lock = path.as_os_str().to_owned();
                lock.push(".lock");
                tracing::debug!("removing a stale stat-cache lock");
                let _ = std::fs::remove_file(Path::new(&lock));
            }
            self.index.write()?;
        }
        self.changed = false;
        Ok(())
    }
}

fn entry(rel: &[u8], stat: &Stat, id: Oid) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(stat.ctime.0, stat.ctime.1),
        mtime: IndexTime::new(stat.mtime.0, stat.mtime.1),
        dev: stat.dev,
        ino: stat.ino,
        mode: stat.mode,
        uid: 0,
        gid: 0,
        file_size: stat.size,
        id,
        flags: 0,
        flags_extended: 0,
        path: rel.to_vec(),
    }
}
