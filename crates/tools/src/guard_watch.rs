//! The conflict guard's file watcher (`notify`): the folders of files the agent read are
//! watched, so a change made by the user or another process is noticed when it happens, not
//! only when the agent next writes. [`StaleNotice`] tells the model right away, in the result
//! of its next tool call, which files it read have changed on disk since.
//!
//! Events only mark a file as possibly changed; the content hash decides (the agent's own
//! writes, touch-only events and changes undone are not reported).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolHandle, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};
use notify::{EventKind, RecursiveMode, Watcher};

use crate::guard::ConflictGuard;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The watcher's state: not started yet, running, or refused by the platform.
enum WatcherState {
    Idle,
    Running(notify::RecommendedWatcher),
    Unavailable,
}

/// Watches the folders of guarded files; collects the paths that saw events. The OS watcher
/// starts with the first tracked file (sessions that read nothing hold no watch handle).
pub struct FileWatch {
    watcher: Mutex<WatcherState>,
    dirs: Mutex<HashSet<PathBuf>>,
    dirty: Arc<Mutex<HashSet<PathBuf>>>,
}

impl std::fmt::Debug for FileWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileWatch")
            .field("dirs", &lock(&self.dirs).len())
            .field("dirty", &lock(&self.dirty).len())
            .finish()
    }
}

impl Default for FileWatch {
    fn default() -> Self {
        FileWatch::new()
    }
}

impl FileWatch {
    /// A watch with nothing tracked yet.
    pub fn new() -> FileWatch {
        FileWatch {
            watcher: Mutex::new(WatcherState::Idle),
            dirs: Mutex::new(HashSet::new()),
            dirty: Arc::new(Mutex::new(HashSet::new())),
        }
    }

    fn start(&self) -> notify::Result<notify::RecommendedWatcher> {
        let sink = self.dirty.clone();
        notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
            let Ok(ev) = res else { return };
            if matches!(ev.kind, EventKind::Access(_)) {
                return;
            }
            lock(&sink).extend(ev.paths);
        })
    }

    /// Watches the folder of `path` (once per folder).
    pub fn track(&self, path: &Path) {
        let Some(dir) = path.parent() else { return };
        if !lock(&self.dirs).insert(dir.to_path_buf()) {
            return;
        }
        let mut state = lock(&self.watcher);
        if matches!(*state, WatcherState::Idle) {
            *state = match self.start() {
                Ok(w) => WatcherState::Running(w),
                Err(e) => {
                    tracing::debug!(error = %e, "no file watcher; the conflict guard uses hashes only");
                    WatcherState::Unavailable
                }
            };
        }
        if let WatcherState::Running(w) = &mut *state {
            if let Err(e) = w.watch(dir, RecursiveMode::NonRecursive) {
                tracing::debug!(dir = %dir.display(), error = %e, "cannot watch folder");
                lock(&self.dirs).remove(dir);
            }
        }
    }

    /// The paths that saw events since the last call.
    pub fn take_dirty(&self) -> Vec<PathBuf> {
        lock(&self.dirty).drain().collect()
    }
}

/// Wraps a tool so its successful results name the files the agent read that changed on disk
/// since (by the user, another process or a command it ran), as `ToolOutput::stale_files`.
pub struct StaleNotice {
    inner: ToolHandle,
    guard: Arc<ConflictGuard>,
}

impl StaleNotice {
    /// `inner`, reporting the changes `guard` sees.
    pub fn wrap(inner: ToolHandle, guard: Arc<ConflictGuard>) -> ToolHandle {
        Arc::new(StaleNotice { inner, guard })
    }
}

/// `changed` (absolute paths) named relative to `workspace`, sorted.
pub fn relative_names(changed: &[PathBuf], workspace: &Path) -> Vec<String> {
    let mut names: Vec<String> = changed
        .iter()
        .map(|p| p.strip_prefix(workspace).unwrap_or(p).display().to_string())
        .collect();
    names.sort();
    names
}

#[async_trait]
impl Tool for StaleNotice {
    fn kind(&self) -> cairn_protocol::ToolKind {
        self.inner.kind()
    }
    fn subject(&self, args: &serde_json::Value) -> Option<String> {
        self.inner.subject(args)
    }

    fn schema(&self) -> ToolSchema {
        self.inner.schema()
    }

    fn meta(&self) -> ToolMeta {
        self.inner.meta()
    }

    fn write_targets(&self, args: &serde_json::Value) -> Option<Vec<String>> {
        // A wrapper must forward this: the permission engine checks these paths.
        self.inner.write_targets(args)
    }

    // A wrapper must forward this too: it is what the permission engine checks.
    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        self.inner.permission_subject(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let workspace = ctx.workspace.clone();
        let mut out = self.inner.execute(args, ctx).await?;
        let guard = self.guard.clone();
        let changed = tokio::task::spawn_blocking(move || guard.changed_on_disk())
            .await
            .unwrap_or_default();
        // The engine tells the model (a notice after the result) and the face (a typed list).
        out.stale_files = relative_names(&changed, &workspace);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_relative_and_sorted() {
        let ws = Path::new("/w");
        let files = vec![ws.join("b.rs"), ws.join("src/a.rs")];
        assert_eq!(relative_names(&files, ws), ["b.rs", "src/a.rs"]);
    }
}
