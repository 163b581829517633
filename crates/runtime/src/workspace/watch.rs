//! The files panel's watcher (`notify`): a window watches the folders its tree shows (the
//! root, then each folder as it is expanded; not recursively, so ignored trees such as
//! `target/` cost no watch handles) and tells the page, at most once per debounce window,
//! which folders changed. If the platform refuses to watch, the panel still works (the
//! reason is reported and the tree refreshes on demand). The watch lives in the window's
//! slot: it stops when the workspace or the window closes.

use std::collections::{BTreeSet, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};
use tokio::sync::mpsc;

use super::types::FilesEvent;

/// Events closer together than this are sent as one.
pub const DEBOUNCE: Duration = Duration::from_millis(200);
/// Most folders named in one event (beyond that the page refreshes everything it shows).
const MAX_DIRS: usize = 500;

enum Msg {
    Path(PathBuf),
    Error(String),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A window's watch over its workspace's shown folders.
pub struct WorkspaceWatch {
    root: PathBuf,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    watched: Mutex<HashSet<PathBuf>>,
    error: Mutex<Option<String>>,
    tx: mpsc::UnboundedSender<Msg>,
}

impl std::fmt::Debug for WorkspaceWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceWatch")
            .field("root", &self.root)
            .field("watched", &lock(&self.watched).len())
            .field("error", &*lock(&self.error))
            .finish()
    }
}

impl WorkspaceWatch {
    /// Starts watching `root` (a canonical folder); the returned future, which the caller
    /// runs on its async runtime, sends debounced events to `send` until it fails (the page
    /// is gone) or the watch is dropped. Never fails: a watcher the platform refuses is
    /// reported by [`WorkspaceWatch::error`].
    pub fn start<F, E>(
        root: PathBuf,
        send: F,
    ) -> (
        Arc<WorkspaceWatch>,
        impl std::future::Future<Output = ()> + Send + 'static,
    )
    where
        F: FnMut(FilesEvent) -> Result<(), E> + Send + 'static,
        E: Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let sink = tx.clone();
        let watcher =
            notify::recommended_watcher(move |res: notify::Result<notify::Event>| match res {
                Ok(ev) if matches!(ev.kind, EventKind::Access(_)) => {}
                Ok(ev) => {
                    for p in ev.paths {
                        let _ = sink.send(Msg::Path(p));
                    }
                }
                Err(e) => {
                    let _ = sink.send(Msg::Error(e.to_string()));
                }
            });
        let (watcher, error) = match watcher {
            Ok(w) => (Some(w), None),
            Err(e) => (None, Some(format!("the file watcher could not start: {e}"))),
        };
        let watch = Arc::new(WorkspaceWatch {
            root: root.clone(),
            watcher: Mutex::new(watcher),
            watched: Mutex::new(HashSet::new()),
            error: Mutex::new(error),
            tx,
        });
        if watch.error().is_none() {
            if let Err(e) = watch.watch_dir(&root) {
                *lock(&watch.error) = Some(e);
            }
        }
        if let Some(e) = watch.error() {
            tracing::warn!(root = %root.display(), error = %e, "files panel: no live refresh");
        }
        (watch, pump(root, rx, send))
    }

    /// The workspace root watched.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Why live refresh is off, if it is.
    pub fn error(&self) -> Option<String> {
        lock(&self.error).clone()
    }

    /// Whether the OS watcher runs.
    pub fn is_watching(&self) -> bool {
        lock(&self.watcher).is_some() && self.error().is_none()
    }

    /// Also watches folder `abs` (inside the root; once per folder). A refusal is returned
    /// and sent to the page as a `failed` event.
    pub fn watch_dir(&self, abs: &Path) -> Result<(), String> {
        if !abs.starts_with(&self.root) || lock(&self.watched).contains(abs) {
            return Ok(());
        }
        let mut watcher = lock(&self.watcher);
        let Some(w) = watcher.as_mut() else {
            return Ok(());
        };
        match w.watch(abs, RecursiveMode::NonRecursive) {
            Ok(()) => {
                lock(&self.watched).insert(abs.to_path_buf());
                Ok(())
            }
            Err(e) => {
                let message = format!("cannot watch {}: {e}", abs.display());
                let _ = self.tx.send(Msg::Error(message.clone()));
                Err(message)
            }
        }
    }
}

/// The folder (relative, `/`-separated, "" = root) whose listing a change of `path` affects;
/// `None` for paths outside the root or inside `.git`.
fn changed_dir(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if parts.is_empty() || parts.iter().any(|p| p == ".git") {
        return None;
    }
    Some(parts[..parts.len() - 1].join("/"))
}

/// Collects events for [`DEBOUNCE`] after the first one, then sends one `changed` event
/// (and any error); stops when `send` fails or the watch is gone.
async fn pump<F, E>(root: PathBuf, mut rx: mpsc::UnboundedReceiver<Msg>, mut send: F)
where
    F: FnMut(FilesEvent) -> Result<(), E>,
{
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        let deadline = tokio::time::Instant::now() + DEBOUNCE;
        loop {
            tokio::select! {
                m = rx.recv() => match m {
                    Some(m) => batch.push(m),
                    None => break,
                },
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        let mut dirs = BTreeSet::new();
        let mut all = false;
        for m in batch {
            match m {
                Msg::Path(p) => {
                    if let Some(d) = changed_dir(&root, &p) {
                        dirs.insert(d);
                    }
                }
                Msg::Error(message) => {
                    all = true;
                    if send(FilesEvent::Failed { message }).is_err() {
                        return;
                    }
                }
            }
        }
        if dirs.len() > MAX_DIRS {
            all = true;
        }
        if dirs.is_empty() && !all {
            continue;
        }
        let dirs = if all {
            Vec::new()
        } else {
            dirs.into_iter().collect()
        };
        if send(FilesEvent::Changed { dirs, all }).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn changes_name_the_folder_to_refresh() {
        let root = Path::new("/ws");
        assert_eq!(
            changed_dir(root, Path::new("/ws/a.txt")).as_deref(),
            Some("")
        );
        assert_eq!(
            changed_dir(root, Path::new("/ws/src/deep/x.rs")).as_deref(),
            Some("src/deep")
        );
        assert_eq!(changed_dir(root, Path::new("/ws/.git/index")), None);
        assert_eq!(changed_dir(root, Path::new("/elsewhere/x")), None);
        assert_eq!(changed_dir(root, Path::new("/ws")), None);
    }

    type Seen = Arc<Mutex<Vec<FilesEvent>>>;

    fn collect() -> (
        Seen,
        impl FnMut(FilesEvent) -> Result<(), String> + Send + 'static,
    ) {
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        (got, move |e| {
            sink.lock().unwrap().push(e);
            Ok(())
        })
    }

    async fn wait_for(got: &Mutex<Vec<FilesEvent>>, n: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while got.lock().unwrap().len() < n {
            assert!(std::time::Instant::now() < deadline, "no event");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    #[tokio::test]
    async fn a_burst_of_changes_becomes_one_event_for_watched_folders() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let (got, send) = collect();
        let (watch, pump) = WorkspaceWatch::start(root.clone(), send);
        tokio::spawn(pump);
        assert!(watch.is_watching(), "{:?}", watch.error());
        watch.watch_dir(&root.join("sub")).unwrap();
        for i in 0..5 {
            std::fs::write(root.join(format!("f{i}.txt")), "x").unwrap();
        }
        std::fs::write(root.join("sub/inner.txt"), "x").unwrap();
        wait_for(&got, 1).await;
        tokio::time::sleep(DEBOUNCE * 2).await;
        let events = got.lock().unwrap().clone();
        let dirs: BTreeSet<String> = events
            .iter()
            .flat_map(|e| match e {
                FilesEvent::Changed { dirs, .. } => dirs.clone(),
                FilesEvent::Failed { .. } => Vec::new(),
            })
            .collect();
        assert!(events.len() <= 2, "debounced: {events:?}");
        assert_eq!(dirs, BTreeSet::from(["".to_string(), "sub".to_string()]));
        // Dropping the watch stops it: later changes send nothing.
        drop(watch);
        tokio::time::sleep(DEBOUNCE).await;
        let before = got.lock().unwrap().len();
        std::fs::write(root.join("late.txt"), "x").unwrap();
        tokio::time::sleep(DEBOUNCE * 3).await;
        assert_eq!(got.lock().unwrap().len(), before);
    }

    #[tokio::test]
    async fn a_folder_that_cannot_be_watched_is_reported_and_nothing_breaks() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path().canonicalize().unwrap();
        let (got, send) = collect();
        let missing = root.join("gone");
        let (watch, pump) = WorkspaceWatch::start(missing.clone(), send);
        tokio::spawn(pump);
        assert!(!watch.is_watching());
        let error = watch.error().unwrap();
        assert!(error.contains("gone"), "{error}");
        // The error also reaches the page.
        wait_for(&got, 1).await;
        assert!(matches!(&got.lock().unwrap()[0], FilesEvent::Failed { .. }));
    }
}
