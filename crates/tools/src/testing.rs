//! Test hooks (feature `test-support`): code run at the moment a file tool touches a path it
//! already resolved and checked, so tests can swap a folder for a link in exactly that window.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// What a file tool is about to do with a resolved path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsOp {
    /// Look at it or read it.
    Look,
    /// Write it (create parent folders, write a temp file, rename it into place).
    Write,
    /// Delete it.
    Remove,
}

type Hook = Arc<dyn Fn(FsOp, &Path) + Send + Sync>;

static HOOKS: Mutex<Vec<(u64, PathBuf, Hook)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Removes its hook when dropped.
#[derive(Debug)]
pub struct HookGuard(u64);

impl Drop for HookGuard {
    fn drop(&mut self) {
        hooks().retain(|(id, _, _)| *id != self.0);
    }
}

/// Runs `hook` each time a file tool is about to touch a resolved path under `root` (after
/// every check, before the disk), until the returned guard is dropped. Hooks for other roots
/// (tests running in parallel) are not called.
pub fn before_fs_op(root: &Path, hook: impl Fn(FsOp, &Path) + Send + Sync + 'static) -> HookGuard {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    hooks().push((id, root.to_path_buf(), Arc::new(hook)));
    HookGuard(id)
}

/// Calls the hooks registered for `path`.
pub(crate) fn run(op: FsOp, path: &Path) {
    let matching: Vec<Hook> = hooks()
        .iter()
        .filter(|(_, root, _)| path.starts_with(root))
        .map(|(_, _, h)| h.clone())
        .collect();
    for hook in matching {
        hook(op, path);
    }
}

fn hooks() -> std::sync::MutexGuard<'static, Vec<(u64, PathBuf, Hook)>> {
    HOOKS.lock().unwrap_or_else(|e| e.into_inner())
}
