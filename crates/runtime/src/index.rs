//! A SQLite index over the session store for listing and searching sessions by name,
//! workspace and conversation text.
//!
//! The index is derived data: checkpoints stay the source of truth. Every query first
//! reconciles the index with the files on disk (a `stat` per session; changed checkpoints are
//! re-read), and a missing, corrupt or outdated index file is deleted and rebuilt.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use cairn_protocol::Message;
use rusqlite::{params, Connection, OptionalExtension};

use crate::store::{validate_id, SavedSession, SessionStore, SessionSummary, StoreError};

/// File name of the index inside `<state_dir>/sessions/`.
pub const INDEX_FILE: &str = "index.sqlite";

/// Layout version of the index tables; a different one is rebuilt from the checkpoints.
const INDEX_VERSION: &str = "2";

/// Conversation text kept per session for search, in characters.
const MAX_BODY_CHARS: usize = 64 * 1024;

/// Errors of the index itself (callers fall back to scanning the checkpoints).
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// SQLite failed.
    #[error("session index {path}: {source}")]
    Sqlite {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    /// Reading the session store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Which sessions to list; empty fields match everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionQuery {
    /// Words that must all occur (case-insensitively) in the name, workspace or text.
    pub search: Option<String>,
    /// Only sessions of this workspace (exact path).
    pub workspace: Option<String>,
}

/// What a reconciliation changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefreshStats {
    /// Sessions (re)read from their checkpoints.
    pub indexed: usize,
    /// Rows dropped because their session is gone or unreadable.
    pub removed: usize,
    /// Whether the index file was (re)created from scratch.
    pub rebuilt: bool,
}

/// An open session index.
pub struct SessionIndex {
    conn: Connection,
    path: PathBuf,
    rebuilt: bool,
}

impl SessionIndex {
    /// Opens the index of a store, recreating it when missing, corrupt or outdated.
    pub fn open(store: &SessionStore) -> Result<Self, IndexError> {
        let root = store.root();
        fs::create_dir_all(root)
            .map_err(|e| StoreError::from_io(format!("creating {}", root.display()), e))?;
        let path = root.join(INDEX_FILE);
        let existed = path.exists();
        match Self::open_checked(&path) {
            Ok(conn) => Ok(SessionIndex {
                conn,
                rebuilt: !existed,
                path,
            }),
            Err(e) => {
                tracing::warn!(error = %e, "session index unusable; rebuilding it from the checkpoints");
                for suffix in ["", "-journal", "-wal", "-shm"] {
                    let mut p = path.clone().into_os_string();
                    p.push(suffix);
                    let _ = fs::remove_file(PathBuf::from(p));
                }
                let conn = Self::open_checked(&path)?;
                Ok(SessionIndex {
                    conn,
                    rebuilt: true,
                    path,
                })
            }
        }
    }

    fn open_checked(path: &Path) -> Result<Connection, IndexError> {
        let err = |source| IndexError::Sqlite {
            path: path.display().to_string(),
            source,
        };
        let conn = Connection::open(path).map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        let check: String = conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(err)?;
        if check != "ok" {
            return Err(err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CORRUPT),
                Some(check),
            )));
        }
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);",
        )
        .map_err(err)?;
        let version: Option<String> = conn
            .query_row("SELECT value FROM meta WHERE key = 'version'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(err)?;
        // An index of another version is rebuilt from the checkpoints (its columns differ).
        if version.as_deref() != Some(INDEX_VERSION) {
            conn.execute_batch("DROP TABLE IF EXISTS sessions;")
                .map_err(err)?;
        }
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS sessions (
                 id TEXT PRIMARY KEY,
                 name TEXT NOT NULL,
                 workspace TEXT NOT NULL,
                 model TEXT NOT NULL,
                 created_at TEXT NOT NULL,
                 updated_at TEXT NOT NULL,
                 turns INTEGER NOT NULL,
                 worktree TEXT,
                 haystack TEXT NOT NULL,
                 fingerprint TEXT NOT NULL
             );
             CREATE INDEX IF NOT EXISTS sessions_updated ON sessions (updated_at DESC);
             CREATE INDEX IF NOT EXISTS sessions_workspace ON sessions (workspace);",
        )
        .map_err(err)?;
        if version.as_deref() != Some(INDEX_VERSION) {
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?1)",
                [INDEX_VERSION],
            )
            .map_err(err)?;
        }
        Ok(conn)
    }

    fn sql(&self) -> impl Fn(rusqlite::Error) -> IndexError + '_ {
        move |source| IndexError::Sqlite {
            path: self.path.display().to_string(),
            source,
        }
    }

    /// Brings the index in line with the checkpoints on disk.
    pub fn refresh(&mut self, store: &SessionStore) -> Result<RefreshStats, IndexError> {
        let mut stats = RefreshStats {
            rebuilt: std::mem::take(&mut self.rebuilt),
            ..Default::default()
        };
        let on_disk = scan(store.root())?;
        let known: HashMap<String, String> = {
            let mut stmt = self
                .conn
                .prepare("SELECT id, fingerprint FROM sessions")
                .map_err(self.sql())?;
            let rows = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(self.sql())?;
            rows.collect::<Result<_, _>>().map_err(self.sql())?
        };
        let path = self.path.display().to_string();
        let tx = self
            .conn
            .transaction()
            .map_err(|source| IndexError::Sqlite {
                path: path.clone(),
                source,
            })?;
        let sql = |source| IndexError::Sqlite {
            path: path.clone(),
            source,
        };
        for id in known.keys().filter(|id| !on_disk.contains_key(*id)) {
            tx.execute("DELETE FROM sessions WHERE id = ?1", [id])
                .map_err(sql)?;
            stats.removed += 1;
        }
        for (id, fingerprint) in &on_disk {
            if known.get(id) == Some(fingerprint) {
                continue;
            }
            match store.load_or_rebuild(id).map(|(s, _)| s) {
                Ok(s) => {
                    upsert(&tx, &s, fingerprint).map_err(sql)?;
                    stats.indexed += 1;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "skipping unreadable session");
                    if known.contains_key(id) {
                        tx.execute("DELETE FROM sessions WHERE id = ?1", [id])
                            .map_err(sql)?;
                        stats.removed += 1;
                    }
                }
            }
        }
        tx.commit().map_err(sql)?;
        Ok(stats)
    }

    /// Sessions matching `query`, newest first (call [`SessionIndex::refresh`] first).
    pub fn query(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>, IndexError> {
        let mut sql = String::from(
            "SELECT id, name, workspace, model, created_at, updated_at, turns, worktree FROM sessions WHERE 1=1",
        );
        let mut args: Vec<String> = Vec::new();
        if let Some(w) = query.workspace.as_deref().filter(|w| !w.is_empty()) {
            args.push(w.to_string());
            sql.push_str(&format!(" AND workspace = ?{}", args.len()));
        }
        for word in query.search.as_deref().unwrap_or("").split_whitespace() {
            args.push(word.to_lowercase());
            sql.push_str(&format!(" AND instr(haystack, ?{}) > 0", args.len()));
        }
        sql.push_str(" ORDER BY updated_at DESC, id ASC");
        let mut stmt = self.conn.prepare(&sql).map_err(self.sql())?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |r| {
                Ok(SessionSummary {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    workspace: r.get(2)?,
                    model: r.get(3)?,
                    created_at: r.get(4)?,
                    updated_at: r.get(5)?,
                    turns: r.get(6)?,
                    worktree: r.get(7)?,
                    // The index keeps the text for its own search, not the first prompt
                    // nor the usage (the boards read the full listing).
                    first_prompt: String::new(),
                    usage: Vec::new(),
                })
            })
            .map_err(self.sql())?;
        rows.collect::<Result<_, _>>().map_err(self.sql())
    }
}

impl SessionStore {
    /// Sessions matching `query`, newest first, through the SQLite index; when the index
    /// cannot be used at all the checkpoints are scanned directly (same answer, slower).
    pub fn search(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>, StoreError> {
        // Nothing saved yet: nothing to list, and a listing creates no folders.
        if !self.root().is_dir() {
            return Ok(Vec::new());
        }
        let indexed = SessionIndex::open(self).and_then(|mut index| {
            index.refresh(self)?;
            index.query(query)
        });
        match indexed {
            Ok(list) => Ok(list),
            Err(IndexError::Store(e)) => Err(e),
            Err(e) => {
                tracing::warn!(error = %e, "session index unavailable; scanning the checkpoints");
                self.scan_query(query)
            }
        }
    }

    fn scan_query(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>, StoreError> {
        let words: Vec<String> = query
            .search
            .as_deref()
            .unwrap_or("")
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        let mut out = Vec::new();
        for summary in self.list()? {
            if let Some(w) = query.workspace.as_deref().filter(|w| !w.is_empty()) {
                if summary.workspace != w {
                    continue;
                }
            }
            if !words.is_empty() {
                let Ok((saved, _)) = self.load_or_rebuild(&summary.id) else {
                    continue;
                };
                let hay = haystack(&saved);
                if !words.iter().all(|w| hay.contains(w.as_str())) {
                    continue;
                }
            }
            out.push(summary);
        }
        Ok(out)
    }
}

fn upsert(
    tx: &rusqlite::Transaction<'_>,
    s: &SavedSession,
    fingerprint: &str,
) -> rusqlite::Result<usize> {
    tx.execute(
        "INSERT OR REPLACE INTO sessions
             (id, name, workspace, model, created_at, updated_at, turns, haystack, fingerprint,
              worktree)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            s.session_id,
            s.name,
            s.workspace,
            s.model,
            s.created_at,
            s.updated_at,
            s.turns,
            haystack(s),
            fingerprint,
            s.worktree
        ],
    )
}

/// The lower-cased text searched: name, workspace, then user and assistant text.
fn haystack(s: &SavedSession) -> String {
    let mut out = format!("{}\n{}\n", s.name, s.workspace);
    let mut budget = MAX_BODY_CHARS;
    for m in &s.messages {
        if budget == 0 {
            break;
        }
        if let Message::User { .. } | Message::Assistant { .. } = m {
            let text = m.text();
            let part: String = text.chars().take(budget).collect();
            budget -= part.chars().count();
            out.push_str(&part);
            out.push('\n');
        }
    }
    out.to_lowercase()
}

/// A fingerprint of the store's checkpoints (each session's id, size and mtime) but those
/// `skip` names (sessions open in this process, whose changes it knows): it changes when
/// another process (another app, the CLI) created, saved or deleted a session of the store.
/// A `stat` per session, no file read.
pub fn store_fingerprint(store: &SessionStore, skip: impl Fn(&str) -> bool) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut all: Vec<(String, String)> = scan(store.root())
        .unwrap_or_default()
        .into_iter()
        .filter(|(id, _)| !skip(id))
        .collect();
    all.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    all.hash(&mut h);
    h.finish()
}

/// Session ids on disk with a fingerprint (size and mtime) of their checkpoint.
fn scan(root: &Path) -> Result<HashMap<String, String>, IndexError> {
    let entries = match fs::read_dir(root) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HashMap::new()),
        Err(e) => return Err(StoreError::from_io(format!("listing {}", root.display()), e).into()),
    };
    let mut out = HashMap::new();
    for entry in entries.flatten() {
        let id = entry.file_name().to_string_lossy().to_string();
        if validate_id(&id).is_err() {
            continue;
        }
        let dir = entry.path();
        let meta = fs::metadata(dir.join("state.json"))
            .or_else(|_| fs::metadata(dir.join("state.json.bak")));
        if let Ok(meta) = meta {
            let mtime = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            out.insert(id, format!("{}:{mtime}", meta.len()));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_haystack_is_capped_and_lower_case() {
        let mut s: SavedSession = serde_json::from_value(serde_json::json!({
            "sessionId": "a", "name": "Fix The Parser", "workspace": "/W", "model": "m",
            "messages": [], "createdAt": "t", "updatedAt": "t"
        }))
        .unwrap();
        s.messages = vec![
            Message::user("x".repeat(MAX_BODY_CHARS + 10)),
            Message::user("TAIL"),
        ];
        let h = haystack(&s);
        assert!(h.starts_with("fix the parser\n/w\n"));
        assert!(!h.contains("tail"));
    }

    #[test]
    fn the_store_fingerprint_moves_with_a_save_by_another_process_only() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path());
        let session = |id: &str, turns: u32| -> SavedSession {
            let mut s: SavedSession = serde_json::from_value(serde_json::json!({
                "sessionId": id, "name": "n", "workspace": "/W", "model": "m",
                "messages": [], "createdAt": "t", "updatedAt": "t"
            }))
            .unwrap();
            s.turns = turns;
            s
        };
        let none = |_: &str| false;
        let empty = store_fingerprint(&store, none);
        store.save(&session("a", 1)).unwrap();
        let one = store_fingerprint(&store, none);
        assert_ne!(empty, one, "a new session");
        assert_eq!(one, store_fingerprint(&store, none), "nothing changed");
        // A session open here (`skip`) is left out: its saves change nothing.
        let open_here = |id: &str| id == "b";
        let before = store_fingerprint(&store, open_here);
        store.save(&session("b", 1)).unwrap();
        store.save(&session("b", 2)).unwrap();
        assert_eq!(before, store_fingerprint(&store, open_here));
        // Another process saves "a" again (its size changes with its turn count).
        store.save(&session("a", 12)).unwrap();
        assert_ne!(before, store_fingerprint(&store, open_here));
    }
}
