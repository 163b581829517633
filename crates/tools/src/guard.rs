//! The conflict guard: remembers what the agent last saw of each file, so that a write to a
//! file that changed on disk since (the user typed in an editor, another process ran) fails
//! with a clear message instead of silently overwriting it.
//!
//! One guard is shared by the file tools of a session (`crate::core_tools` builds it).
//! Files the agent never read are not guarded: creating them or overwriting them is the
//! normal, approved effect of the write.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use cairn_engine::ToolError;
use sha2::{Digest, Sha256};

use crate::guard_watch::FileWatch;

/// Largest file whose text is kept, so a conflict can show what changed.
pub(crate) const KEEP_TEXT_BYTES: usize = 256 * 1024;
/// Total text kept across files; beyond it only hashes are kept.
const KEEP_TEXT_TOTAL: usize = 32 * 1024 * 1024;
/// Lines of the "what changed" diff shown in a conflict message.
const CONFLICT_DIFF_LINES: usize = 40;

/// A content hash.
pub type ContentHash = [u8; 32];

/// Hashes file content.
pub fn hash(bytes: &[u8]) -> ContentHash {
    Sha256::digest(bytes).into()
}

#[derive(Debug, Clone)]
struct Seen {
    hash: ContentHash,
    text: Option<Arc<str>>,
}

#[derive(Debug, Default)]
struct State {
    files: HashMap<PathBuf, Seen>,
    kept_bytes: usize,
}

/// What the agent last saw of each file it read or wrote in this session.
#[derive(Debug, Default)]
pub struct ConflictGuard {
    state: Mutex<State>,
    /// Set by [`ConflictGuard::watching`]: folders of seen files are watched.
    watch: Option<FileWatch>,
    /// Set by [`ConflictGuard::persisted`]: where the hashes are kept across processes.
    store: Option<PathBuf>,
    /// Files restored from `store` that changed while no process watched them (reported by
    /// the next [`ConflictGuard::changed_on_disk`]).
    changed_meanwhile: Mutex<Vec<PathBuf>>,
}

impl ConflictGuard {
    /// An empty guard (changes are found by content hashes when the agent writes).
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty guard that also watches the folders of the files it remembers (`notify`), so
    /// [`ConflictGuard::changed_on_disk`] reports changes as they happen; falls back to
    /// hashes only where no watcher can be created.
    pub fn watching() -> Self {
        ConflictGuard {
            watch: Some(FileWatch::new()),
            ..Self::default()
        }
    }

    /// Keeps what the agent saw in `file`, so a later process of the same session (the next
    /// `cairn run --session`) still refuses to overwrite a file the user changed since;
    /// loads what an earlier process saved there.
    pub fn persisted(mut self, file: PathBuf) -> Self {
        let restored = crate::guard_store::load(&file);
        let mut meanwhile = Vec::new();
        {
            let mut state = self.lock();
            for (path, seen) in restored {
                let now = std::fs::read(&path).ok().map(|b| hash(&b));
                if now != Some(seen) {
                    meanwhile.push(path.clone());
                }
                state.files.insert(
                    path,
                    Seen {
                        hash: seen,
                        text: None,
                    },
                );
            }
        }
        if let Some(w) = &self.watch {
            for path in self.lock().files.keys() {
                w.track(path);
            }
        }
        *self
            .changed_meanwhile
            .get_mut()
            .unwrap_or_else(|p| p.into_inner()) = meanwhile;
        self.store = Some(file);
        self
    }

    /// Saves what the agent now knows of `path` (`None`: forgotten) for later processes.
    fn persist(&self, path: &Path, hash: Option<&ContentHash>) {
        if let Some(file) = &self.store {
            crate::guard_store::append(file, path, hash);
        }
    }

    /// Files the agent saw that changed on disk (or were deleted) since, as seen by the
    /// watcher; each change is reported once. Empty without a watcher.
    pub fn changed_on_disk(&self) -> Vec<PathBuf> {
        let meanwhile: Vec<PathBuf> = std::mem::take(
            &mut *self
                .changed_meanwhile
                .lock()
                .unwrap_or_else(|p| p.into_inner()),
        );
        let Some(watch) = &self.watch else {
            return meanwhile;
        };
        let mut dirty = watch.take_dirty();
        dirty.extend(meanwhile);
        dirty.sort();
        dirty.dedup();
        let mut changed = Vec::new();
        for path in dirty {
            let Some(seen) = self.lock().files.get(&path).map(|s| s.hash) else {
                continue;
            };
            let now = match std::fs::read(&path) {
                Ok(bytes) => Some(hash(&bytes)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(_) => continue,
            };
            if now != Some(seen) {
                changed.push(path);
            }
        }
        changed
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records that the agent saw (read or wrote) exactly `content` at `path`.
    pub fn record(&self, path: &Path, content: &[u8]) {
        let mut state = self.lock();
        let text = (content.len() <= KEEP_TEXT_BYTES
            && state.kept_bytes + content.len() <= KEEP_TEXT_TOTAL)
            .then(|| std::str::from_utf8(content).ok().map(Arc::<str>::from))
            .flatten();
        let added = text.as_ref().map_or(0, |t| t.len());
        let seen = hash(content);
        let old = state
            .files
            .insert(path.to_path_buf(), Seen { hash: seen, text });
        if old.as_ref().map(|s| s.hash) != Some(seen) {
            self.persist(path, Some(&seen));
        }
        let removed = old.and_then(|s| s.text).map_or(0, |t| t.len());
        state.kept_bytes = (state.kept_bytes + added).saturating_sub(removed);
        drop(state);
        if let Some(w) = &self.watch {
            w.track(path);
        }
    }

    /// Records a content hash only (the agent saw the file through a streamed read).
    pub fn record_hash(&self, path: &Path, content_hash: ContentHash) {
        let mut state = self.lock();
        let old = state.files.insert(
            path.to_path_buf(),
            Seen {
                hash: content_hash,
                text: None,
            },
        );
        if old.as_ref().map(|s| s.hash) != Some(content_hash) {
            self.persist(path, Some(&content_hash));
        }
        let removed = old.and_then(|s| s.text).map_or(0, |t| t.len());
        state.kept_bytes = state.kept_bytes.saturating_sub(removed);
        drop(state);
        if let Some(w) = &self.watch {
            w.track(path);
        }
    }

    /// Forgets a file (the agent deleted it).
    pub fn forget(&self, path: &Path) {
        let mut state = self.lock();
        if let Some(old) = state.files.remove(path) {
            let removed = old.text.map_or(0, |t| t.len());
            state.kept_bytes = state.kept_bytes.saturating_sub(removed);
            self.persist(path, None);
        }
    }

    /// Whether the agent has seen this file in this session.
    pub fn has_seen(&self, path: &Path) -> bool {
        self.lock().files.contains_key(path)
    }

    /// Fails when `path` was seen by the agent and its `current` content (`None`: the file is
    /// gone) differs from what was seen. `shown` names the file in the message.
    pub fn check(&self, path: &Path, shown: &str, current: Option<&[u8]>) -> Result<(), ToolError> {
        let Some(seen) = self.lock().files.get(path).cloned() else {
            return Ok(());
        };
        let Some(current) = current else {
            return Err(ToolError::Failed(format!(
                "write refused: `{shown}` was deleted on disk after you last read it (by the \
                 user, another process or a command you ran). Check whether it should still \
                 exist before writing it again."
            )));
        };
        if hash(current) == seen.hash {
            return Ok(());
        }
        Err(ToolError::Failed(conflict_message(
            shown,
            seen.text.as_deref(),
            current,
        )))
    }
}

fn conflict_message(shown: &str, seen: Option<&str>, current: &[u8]) -> String {
    let now = String::from_utf8_lossy(current);
    let lines = now.lines().count();
    let mut msg = format!(
        "write refused: `{shown}` changed on disk after you last read it (by the user, another \
         process or a command you ran). It now has {lines} lines ({} bytes).",
        current.len()
    );
    if let Some(seen) = seen {
        let diff = similar::TextDiff::from_lines(seen, now.as_ref());
        let text = diff
            .unified_diff()
            .context_radius(1)
            .header("what you read", "what is on disk now")
            .to_string();
        let total = text.lines().count();
        msg.push_str(" What changed since your read:\n");
        for line in text.lines().take(CONFLICT_DIFF_LINES) {
            msg.push_str(line);
            msg.push('\n');
        }
        if total > CONFLICT_DIFF_LINES {
            msg.push_str(&format!(
                "… ({} more diff lines)\n",
                total - CONFLICT_DIFF_LINES
            ));
        }
    } else {
        msg.push('\n');
    }
    msg.push_str(
        "Nothing was written. Read the file again with read_file and redo your edit on its \
         current content, keeping the other changes.",
    );
    msg
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn unseen_files_are_not_guarded() {
        let g = ConflictGuard::new();
        assert!(g.check(Path::new("/x"), "x", Some(b"anything")).is_ok());
        assert!(g.check(Path::new("/x"), "x", None).is_ok());
    }

    #[test]
    fn a_changed_file_fails_with_what_changed() {
        let g = ConflictGuard::new();
        let p = Path::new("/w/a.txt");
        g.record(p, b"one\ntwo\n");
        assert!(g.check(p, "a.txt", Some(b"one\ntwo\n")).is_ok());
        let e = g
            .check(p, "a.txt", Some(b"one\nTWO typed by user\n"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("changed on disk"), "{e}");
        assert!(e.contains("+TWO typed by user"), "{e}");
        assert!(e.contains("-two"), "{e}");
        let e = g.check(p, "a.txt", None).unwrap_err().to_string();
        assert!(e.contains("deleted"), "{e}");
    }

    #[test]
    fn a_persisted_guard_remembers_across_processes_and_reports_changes_made_meanwhile() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("seen.json");
        let a = tmp.path().join("a.txt");
        let b = tmp.path().join("b.txt");
        std::fs::write(&a, "v1").unwrap();
        std::fs::write(&b, "same").unwrap();
        {
            let g = ConflictGuard::new().persisted(file.clone());
            g.record(&a, b"v1");
            g.record(&b, b"same");
        }
        std::fs::write(&a, "v2 by the user").unwrap();
        let g = ConflictGuard::new().persisted(file);
        assert_eq!(g.changed_on_disk(), vec![a.clone()]);
        assert!(g.changed_on_disk().is_empty(), "reported once");
        let e = g.check(&a, "a.txt", Some(b"v2 by the user")).unwrap_err();
        assert!(e.to_string().contains("changed on disk"), "{e}");
        assert!(g.check(&b, "b.txt", Some(b"same")).is_ok());
    }

    #[test]
    fn hash_only_records_still_detect_changes() {
        let g = ConflictGuard::new();
        let p = Path::new("/w/b");
        g.record_hash(p, hash(b"v1"));
        assert!(g.check(p, "b", Some(b"v1")).is_ok());
        let e = g.check(p, "b", Some(b"v2")).unwrap_err().to_string();
        assert!(
            e.contains("changed on disk") && e.contains("read_file"),
            "{e}"
        );
        g.forget(p);
        assert!(!g.has_seen(p));
        assert!(g.check(p, "b", Some(b"v2")).is_ok());
    }
}
