//! The dirty-path tracker: a `notify` watcher on every covered folder records which paths
//! changed since the last snapshot, so the next snapshot looks only at those. An ordering
//! barrier (a file written in a watched folder of the store, delivered through the same event
//! queue) guarantees every change made before a snapshot has been seen. Overflow, watcher
//! errors or a missing barrier make the next snapshot walk the whole tree instead.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// How long a snapshot waits for its barrier before falling back to a full walk.
const BARRIER_TIMEOUT: Duration = Duration::from_secs(2);
/// More changed paths than this are cheaper to find with a full walk.
pub(crate) const MAX_DIRTY: usize = 20_000;

/// What changed since the tracker was last drained.
#[derive(Debug)]
pub(crate) enum Dirty {
    /// Exactly these absolute paths may have changed.
    Paths(Vec<PathBuf>),
    /// Unknown: walk everything.
    Unknown,
}

#[derive(Default)]
struct State {
    dirty: HashSet<PathBuf>,
    overflow: bool,
    synced: u64,
}

struct Shared {
    state: Mutex<State>,
    cond: Condvar,
}

fn lock(s: &Shared) -> MutexGuard<'_, State> {
    s.state.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running watcher over a workspace.
pub(crate) struct Tracker {
    watcher: RecommendedWatcher,
    shared: Arc<Shared>,
    sync_dir: PathBuf,
    seq: u64,
    broken: bool,
    watched: HashSet<PathBuf>,
}

impl Tracker {
    /// Starts a watcher; `sync_dir` (created) is a folder of the store used for barriers.
    pub fn start(sync_dir: &Path) -> Option<Tracker> {
        if let Err(e) = fs::create_dir_all(sync_dir) {
            tracing::warn!(error = %e, "cannot create the watcher's sync folder");
            return None;
        }
        let sync_dir = sync_dir.canonicalize().ok()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            cond: Condvar::new(),
        });
        let handler_shared = shared.clone();
        let handler_sync = sync_dir.clone();
        let handler = move |res: notify::Result<Event>| {
            on_event(&handler_shared, &handler_sync, res);
        };
        let mut watcher = match notify::recommended_watcher(handler) {
            Ok(w) => w,
            Err(e) => {
                tracing::info!(error = %e, "no file watcher: snapshots walk the whole tree");
                return None;
            }
        };
        if let Err(e) = watcher.watch(&sync_dir, RecursiveMode::NonRecursive) {
            tracing::info!(error = %e, "no file watcher: snapshots walk the whole tree");
            return None;
        }
        // Leftover barrier files from an earlier process.
        if let Ok(entries) = fs::read_dir(&sync_dir) {
            for e in entries.flatten() {
                let _ = fs::remove_file(e.path());
            }
        }
        Some(Tracker {
            watcher,
            shared,
            sync_dir,
            seq: 0,
            broken: false,
            watched: HashSet::new(),
        })
    }

    /// Watches one folder (not recursively). A failure (e.g. the inotify watch limit) makes
    /// every later snapshot a full walk.
    pub fn watch_dir(&mut self, dir: &Path) {
        if self.broken || self.watched.contains(dir) {
            return;
        }
        match self.watcher.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => {
                self.watched.insert(dir.to_path_buf());
            }
            Err(e) => {
                if dir.exists() {
                    tracing::warn!(path = %dir.display(), error = %e,
                        "cannot watch folder; snapshots fall back to full walks");
                    self.broken = true;
                }
            }
        }
    }

    /// Forgets what was recorded (a full walk is about to start).
    pub fn reset(&mut self) {
        let mut st = lock(&self.shared);
        st.dirty.clear();
        st.overflow = false;
    }

    /// Waits until every event before now was delivered, then drains the dirty set.
    pub fn take(&mut self) -> Dirty {
        if self.broken {
            return Dirty::Unknown;
        }
        self.seq += 1;
        let marker = self.sync_dir.join(format!("b{}", self.seq));
        if let Err(e) = fs::write(&marker, b"") {
            tracing::debug!(error = %e, "cannot write the watcher barrier");
            return Dirty::Unknown;
        }
        let seq = self.seq;
        let st = lock(&self.shared);
        let (mut st, timeout) =
            match self
                .shared
                .cond
                .wait_timeout_while(st, BARRIER_TIMEOUT, |s| s.synced < seq)
            {
                Ok(r) => r,
                Err(p) => p.into_inner(),
            };
        let out = if timeout.timed_out() || st.overflow {
            st.dirty.clear();
            Dirty::Unknown
        } else {
            Dirty::Paths(st.dirty.drain().collect())
        };
        st.overflow = false;
        drop(st);
        let _ = fs::remove_file(&marker);
        out
    }
}

fn on_event(shared: &Shared, sync_dir: &Path, res: notify::Result<Event>) {
    let ev = match res {
        Ok(ev) => ev,
        Err(e) => {
            tracing::debug!(error = %e, "watcher error; next snapshot walks the whole tree");
            lock(shared).overflow = true;
            return;
        }
    };
    if ev.need_rescan() {
        lock(shared).overflow = true;
        return;
    }
    if matches!(
        ev.kind,
        EventKind::Access(AccessKind::Open(_))
            | EventKind::Access(AccessKind::Read)
            | EventKind::Access(AccessKind::Close(AccessMode::Read))
    ) {
        return;
    }
    let mut st = lock(shared);
    let mut barrier = false;
    for p in ev.paths {
        if p.parent() == Some(sync_dir) {
            let n = p
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix('b'))
                .and_then(|n| n.parse::<u64>().ok());
            if let Some(n) = n {
                st.synced = st.synced.max(n);
                barrier = true;
            }
        } else if !st.overflow {
            st.dirty.insert(p);
            if st.dirty.len() > MAX_DIRTY {
                st.dirty.clear();
                st.overflow = true;
            }
        }
    }
    drop(st);
    if barrier {
        shared.cond.notify_all();
    }
}
