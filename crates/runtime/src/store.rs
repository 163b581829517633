//! Session persistence on disk: an append-only JSONL event log plus an atomically replaced
//! checkpoint per session, under `<state_dir>/sessions/<id>/`.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cairn_engine::{EngineHook, PermissionState};
use cairn_protocol::{Event, Message};
use serde::{Deserialize, Serialize};

/// Errors reading or writing session files.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The id has characters that cannot be a directory name.
    #[error("invalid session id `{0}`: use letters, digits, `-` and `_` only")]
    InvalidId(String),
    /// No such session.
    #[error("no session `{id}` in {dir}")]
    NotFound { id: String, dir: String },
    /// The checkpoint exists but cannot be parsed.
    #[error("session `{id}` has a corrupt checkpoint ({path}): {reason}")]
    Corrupt {
        id: String,
        path: String,
        reason: String,
    },
    /// Any I/O failure.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> StoreError {
    let context = context.into();
    move |source| StoreError::Io { context, source }
}

/// The checkpoint of one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedSession {
    /// Session id.
    pub session_id: String,
    /// Display name (may be empty).
    #[serde(default)]
    pub name: String,
    /// Workspace root.
    pub workspace: String,
    /// Model id.
    pub model: String,
    /// Provider name.
    #[serde(default)]
    pub provider: String,
    /// Conversation history.
    pub messages: Vec<Message>,
    /// Permission mode and session allowlists.
    #[serde(default)]
    pub permissions: PermissionState,
    /// Turns run.
    #[serde(default)]
    pub turns: u32,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last save.
    pub updated_at: String,
    /// Protocol version that wrote the file.
    #[serde(default)]
    pub protocol_version: u32,
}

/// One line of `cairn sessions --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionSummary {
    pub id: String,
    pub name: String,
    pub workspace: String,
    pub model: String,
    pub created_at: String,
    pub updated_at: String,
    pub turns: u32,
}

/// Session files under one state dir.
#[derive(Debug, Clone)]
pub struct SessionStore {
    root: PathBuf,
}

impl SessionStore {
    /// A store rooted at `<state_dir>/sessions`.
    pub fn new(state_dir: &Path) -> Self {
        SessionStore {
            root: state_dir.join("sessions"),
        }
    }

    /// Directory of one session (validated id).
    pub fn session_dir(&self, id: &str) -> Result<PathBuf, StoreError> {
        validate_id(id)?;
        Ok(self.root.join(id))
    }

    /// Loads a checkpoint.
    pub fn load(&self, id: &str) -> Result<SavedSession, StoreError> {
        let path = self.session_dir(id)?.join("state.json");
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound {
                    id: id.to_string(),
                    dir: self.root.display().to_string(),
                })
            }
            Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
        };
        serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
            id: id.to_string(),
            path: path.display().to_string(),
            reason: e.to_string(),
        })
    }

    /// Writes a checkpoint atomically (temp file, fsync, rename).
    pub fn save(&self, s: &SavedSession) -> Result<(), StoreError> {
        let dir = self.session_dir(&s.session_id)?;
        fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
        let path = dir.join("state.json");
        let tmp = dir.join(format!(".state.json.{}.tmp", std::process::id()));
        let bytes = serde_json::to_vec_pretty(s).map_err(|e| StoreError::Io {
            context: "serialising session".into(),
            source: std::io::Error::other(e),
        })?;
        {
            let mut f = File::create(&tmp).map_err(io(format!("creating {}", tmp.display())))?;
            f.write_all(&bytes)
                .and_then(|_| f.sync_all())
                .map_err(io(format!("writing {}", tmp.display())))?;
        }
        fs::rename(&tmp, &path).map_err(io(format!("replacing {}", path.display())))
    }

    /// Every readable session, newest first; unreadable ones are skipped with a warning.
    pub fn list(&self) -> Result<Vec<SessionSummary>, StoreError> {
        let entries = match fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(format!("listing {}", self.root.display()))(e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let id = entry.file_name().to_string_lossy().to_string();
            if validate_id(&id).is_err() {
                continue;
            }
            match self.load(&id) {
                Ok(s) => out.push(SessionSummary {
                    id: s.session_id,
                    name: s.name,
                    workspace: s.workspace,
                    model: s.model,
                    created_at: s.created_at,
                    updated_at: s.updated_at,
                    turns: s.turns,
                }),
                Err(StoreError::NotFound { .. }) => {}
                Err(e) => tracing::warn!(error = %e, "skipping unreadable session"),
            }
        }
        out.sort_by(|a, b| b.updated_at.cmp(&a.updated_at));
        Ok(out)
    }

    /// A hook appending every event (except text deltas) to the session's `events.jsonl`.
    pub fn event_log(&self, id: &str) -> Result<EventLog, StoreError> {
        let dir = self.session_dir(id)?;
        fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
        let path = dir.join("events.jsonl");
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(format!("opening {}", path.display())))?;
        Ok(EventLog {
            out: Mutex::new(BufWriter::new(file)),
        })
    }
}

/// Appends events to a JSONL file; flushed at the end of every iteration and turn.
pub struct EventLog {
    out: Mutex<BufWriter<File>>,
}

impl EngineHook for EventLog {
    fn on_event(&self, event: &Event) {
        if matches!(event, Event::AssistantDelta(_) | Event::ReasoningDelta(_)) {
            return;
        }
        let Ok(line) = serde_json::to_string(event) else {
            return;
        };
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let written = writeln!(out, "{line}");
        let flush = matches!(
            event,
            Event::IterationEnd(_) | Event::TurnEnd(_) | Event::Error(_)
        );
        if let Err(e) = written.and_then(|_| if flush { out.flush() } else { Ok(()) }) {
            tracing::warn!(error = %e, "could not append to the session event log");
        }
    }
}

/// Checks that an id is usable as one path component.
pub fn validate_id(id: &str) -> Result<(), StoreError> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidId(id.to_string()))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn saved(id: &str, updated: &str) -> SavedSession {
        SavedSession {
            session_id: id.into(),
            name: String::new(),
            workspace: "/w".into(),
            model: "m".into(),
            provider: "openai".into(),
            messages: vec![Message::user("hi")],
            permissions: PermissionState::default(),
            turns: 1,
            created_at: updated.into(),
            updated_at: updated.into(),
            protocol_version: 1,
        }
    }

    #[test]
    fn save_load_list_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::new(tmp.path());
        store.save(&saved("a", "2026-01-01T00:00:00Z")).unwrap();
        store.save(&saved("b", "2026-02-01T00:00:00Z")).unwrap();
        assert_eq!(store.load("a").unwrap(), saved("a", "2026-01-01T00:00:00Z"));
        let ids: Vec<_> = store.list().unwrap().into_iter().map(|s| s.id).collect();
        assert_eq!(ids, vec!["b", "a"]);
    }

    #[test]
    fn bad_ids_and_corrupt_files_are_clear_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::new(tmp.path());
        assert!(matches!(
            store.load("../etc"),
            Err(StoreError::InvalidId(_))
        ));
        assert!(matches!(
            store.load("nope"),
            Err(StoreError::NotFound { .. })
        ));
        let dir = store.session_dir("c").unwrap();
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("state.json"), "{not json").unwrap();
        let err = store.load("c").unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }));
        assert!(err.to_string().contains("corrupt"));
        // A corrupt session does not hide the others.
        store.save(&saved("d", "2026-01-01T00:00:00Z")).unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
    }
}
