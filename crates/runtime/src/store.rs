//! Session persistence on disk: an append-only JSONL event log plus an atomically replaced
//! checkpoint per session, under `<state_dir>/sessions/<id>/`.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cairn_engine::{EngineHook, PermissionState, StateSnapshot};
use cairn_protocol::{Event, Message, TodoItem};

use crate::lock::SessionLock;
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
    /// The checkpoint was written by a newer Cairn and is left untouched.
    #[error("session `{id}`: {reason}")]
    Newer { id: String, reason: String },
    /// Another process has the session open (a running `cairn run`, a desktop window).
    #[error("session `{id}` is in use by another Cairn process{}: wait until its turn ends or close it there", holder.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    InUse { id: String, holder: Option<u32> },
    /// Any I/O failure.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    /// An I/O error with what was being done.
    pub fn from_io(context: impl Into<String>, source: std::io::Error) -> Self {
        StoreError::Io {
            context: context.into(),
            source,
        }
    }
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
    /// Who named it: `auto`, `user` or empty (derived from the first message).
    #[serde(default)]
    pub name_source: String,
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
    /// The agent's todo list.
    #[serde(default)]
    pub todos: Vec<TodoItem>,
    /// Token usage summed over the session's turns.
    #[serde(default)]
    pub usage: cairn_protocol::TokenUsage,
    /// Cost in USD summed over the turns whose price was known.
    #[serde(default)]
    pub cost_usd: f64,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// RFC 3339 time of the last save.
    pub updated_at: String,
    /// Protocol version that wrote the file.
    #[serde(default)]
    pub protocol_version: u32,
    /// Where the history stood at the end of each turn (for rewinding the conversation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub turn_marks: Vec<cairn_engine::TurnMark>,
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

    /// The `sessions` directory holding one folder per session.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Directory of one session (validated id).
    pub fn session_dir(&self, id: &str) -> Result<PathBuf, StoreError> {
        validate_id(id)?;
        Ok(self.root.join(id))
    }

    /// Loads a checkpoint; falls back to the previous one when the latest is unreadable.
    pub fn load(&self, id: &str) -> Result<SavedSession, StoreError> {
        let dir = self.session_dir(id)?;
        match self.load_file(id, &dir.join("state.json")) {
            Ok(s) => Ok(s),
            // Never fall back past a newer checkpoint: the next save would overwrite it.
            Err(e @ StoreError::Newer { .. }) => Err(e),
            Err(first) => match self.load_file(id, &dir.join("state.json.bak")) {
                Ok(s) => {
                    tracing::warn!(error = %first, "latest checkpoint unreadable; using the previous one");
                    Ok(s)
                }
                Err(_) => Err(first),
            },
        }
    }

    fn load_file(&self, id: &str, path: &Path) -> Result<SavedSession, StoreError> {
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound {
                    id: id.to_string(),
                    dir: self.root.display().to_string(),
                })
            }
            Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
        };
        let corrupt = |reason: String| StoreError::Corrupt {
            id: id.to_string(),
            path: path.display().to_string(),
            reason,
        };
        // Fast path: a current checkpoint is read straight into its type.
        #[derive(Deserialize)]
        struct Version {
            #[serde(rename = "schemaVersion")]
            schema_version: Option<u64>,
        }
        let declared = serde_json::from_str::<Version>(&text)
            .map_err(|e| corrupt(e.to_string()))?
            .schema_version;
        if declared == Some(u64::from(crate::schema::SCHEMA_VERSION)) {
            return serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()));
        }
        let mut value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
        let found = crate::schema::migrate(&mut value).map_err(|e| match e {
            crate::schema::MigrateError::Newer { .. } => StoreError::Newer {
                id: id.to_string(),
                reason: e.to_string(),
            },
            other => corrupt(other.to_string()),
        })?;
        let saved: SavedSession =
            serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
        if found < u64::from(crate::schema::SCHEMA_VERSION) {
            keep_original(path, found, &text);
        }
        Ok(saved)
    }

    /// Writes a checkpoint atomically (temp file, fsync, rename).
    pub fn save(&self, s: &SavedSession) -> Result<(), StoreError> {
        let dir = self.session_dir(&s.session_id)?;
        fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
        let path = dir.join("state.json");
        let tmp = dir.join(format!(".state.json.{}.tmp", std::process::id()));
        let bytes = checkpoint_bytes(s).map_err(|e| StoreError::Io {
            context: "serialising session".into(),
            source: std::io::Error::other(e),
        })?;
        let written = File::create(&tmp)
            .map_err(io(format!("creating {}", tmp.display())))
            .and_then(|mut f| {
                f.write_all(&bytes)
                    .and_then(|_| f.sync_all())
                    .map_err(io(format!("writing {}", tmp.display())))
            });
        if let Err(e) = written {
            // A half-written copy would only hold on to the space that ran out.
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        // Keep the previous checkpoint as a fallback, without ever leaving `state.json` absent:
        // hard-link it aside, then atomically replace it.
        if path.exists() {
            let bak_tmp = dir.join(".state.json.bak.tmp");
            let _ = fs::remove_file(&bak_tmp);
            if fs::hard_link(&path, &bak_tmp).is_ok() {
                let _ = fs::rename(&bak_tmp, dir.join("state.json.bak"));
            }
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
            match self.load_or_rebuild(&id).map(|(s, _)| s) {
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
        out.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(out)
    }

    /// Reads a session's event log; a truncated or garbled line (a crash mid-write) is
    /// skipped with a warning, never fatal.
    pub fn read_events(&self, id: &str) -> Result<Vec<Event>, StoreError> {
        let path = self.session_dir(id)?.join("events.jsonl");
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
        };
        let mut out = Vec::new();
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Event>(line) {
                Ok(e) => out.push(e),
                Err(e) => {
                    tracing::warn!(line = n + 1, error = %e, "skipping an unreadable event log line")
                }
            }
        }
        Ok(out)
    }

    /// Ids of the tool calls the event log shows as started or finished.
    pub fn started_calls(
        &self,
        id: &str,
    ) -> Result<std::collections::BTreeSet<String>, StoreError> {
        Ok(self
            .read_events(id)?
            .into_iter()
            .filter_map(|e| match e {
                Event::ToolStarted(s) => Some(s.req_id),
                Event::ToolFinished(f) => Some(f.req_id),
                _ => None,
            })
            .collect())
    }

    /// Takes session `id`'s lock (see [`SessionLock`]); refused while another process holds
    /// it. Commands a killed last holder left running are stopped first: they would still
    /// write to the workspace while this process works in it (or restores it).
    pub fn lock(&self, id: &str) -> Result<SessionLock, StoreError> {
        let lock = SessionLock::acquire(id, &self.session_dir(id)?)?;
        if let Some(pid) = lock.previous_holder() {
            let reaped = cairn_tools::marker::reap_orphans_of(pid);
            if reaped > 0 {
                tracing::warn!(
                    pid,
                    reaped,
                    "stopped commands a killed Cairn process left running"
                );
            }
        }
        Ok(lock)
    }

    /// A hook that appends events to `events.jsonl` and checkpoints the state at safe points;
    /// it keeps the session's `lock` for as long as it lives.
    pub fn persister(
        &self,
        saved: SavedSession,
        lock: SessionLock,
    ) -> Result<SessionPersister, StoreError> {
        let dir = self.session_dir(&saved.session_id)?;
        let persister = SessionPersister {
            log: self.event_log(&saved.session_id)?,
            store: self.clone(),
            reserve: crate::reserve::Reserve::new(self.root.parent().unwrap_or(&self.root)),
            state_file: dir.join("state.json"),
            saved: Mutex::new(saved),
            failure: Mutex::new(None),
            _lock: lock,
        };
        persister.keep_reserve();
        Ok(persister)
    }

    /// A hook appending every event (except text deltas) to the session's `events.jsonl`.
    pub fn event_log(&self, id: &str) -> Result<EventLog, StoreError> {
        let dir = self.session_dir(id)?;
        fs::create_dir_all(&dir).map_err(io(format!("creating {}", dir.display())))?;
        let path = dir.join("events.jsonl");
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&path)
            .map_err(io(format!("opening {}", path.display())))?;
        // A process killed mid-line left a torn last line: end it, so the next event starts
        // a line of its own (the torn one is skipped when read).
        if !ends_with_newline(&mut file) {
            file.write_all(b"\n")
                .map_err(io(format!("appending to {}", path.display())))?;
        }
        Ok(EventLog {
            out: Mutex::new(file),
            path,
            failure: Mutex::new(None),
            torn: std::sync::atomic::AtomicBool::new(false),
        })
    }
}

/// Appends events to a JSONL file, one `write` per line, so a killed process loses at most
/// the line being written.
pub struct EventLog {
    out: Mutex<File>,
    path: PathBuf,
    /// The first append that failed since the last turn's end (sticky).
    failure: Mutex<Option<String>>,
    /// A failed append may have left part of a line: the next one starts a new line.
    torn: std::sync::atomic::AtomicBool,
}

impl EventLog {
    /// The first append that failed since [`EventLog::take_failure`].
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Reports and clears the sticky append failure.
    pub fn take_failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

impl EngineHook for EventLog {
    fn on_rewind(&self, rewind: &cairn_engine::rewind::RewindSnapshot<'_>) -> Result<(), String> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        crate::rewind::rewind_log(&self.path, &mut out, rewind).map_err(|e| e.to_string())
    }

    fn on_event(&self, event: &Event) {
        if matches!(event, Event::AssistantDelta(_) | Event::ReasoningDelta(_)) {
            return;
        }
        let Ok(mut line) = serde_json::to_string(event) else {
            return;
        };
        line.push('\n');
        use std::sync::atomic::Ordering;
        if self.torn.load(Ordering::SeqCst) {
            line.insert(0, '\n');
        }
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        match out.write_all(line.as_bytes()) {
            Ok(()) => self.torn.store(false, Ordering::SeqCst),
            Err(e) => {
                tracing::warn!(error = %e, "could not append to the session event log");
                self.torn.store(true, Ordering::SeqCst);
                let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
                failure.get_or_insert_with(|| {
                    format!(
                        "could not append to the session event log {}: {e}",
                        self.path.display()
                    )
                });
            }
        }
    }
}

/// Persists one session: event log plus checkpoint after input, each iteration and turn end,
/// so a killed process loses at most the event being written.
pub struct SessionPersister {
    log: EventLog,
    store: SessionStore,
    saved: Mutex<SavedSession>,
    /// Room for the turn's final save when the disk is full (shared by the state dir).
    reserve: crate::reserve::Reserve,
    state_file: PathBuf,
    /// The first checkpoint of the current turn that could not be written (sticky until
    /// the turn's end reports it).
    failure: Mutex<Option<String>>,
    _lock: SessionLock,
}

impl SessionPersister {
    /// The checkpoint as last saved (or about to be).
    pub fn saved(&self) -> SavedSession {
        self.saved.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Keeps the space reserve as big as the checkpoint needs (a warning when the disk has
    /// no room for it: the next failed save then has less to fall back on).
    fn keep_reserve(&self) {
        let len = fs::metadata(&self.state_file).map(|m| m.len()).unwrap_or(0);
        if let Err(e) = self.reserve.ensure(len) {
            tracing::warn!(error = %e, "could not keep space in reserve for the session's saves");
        }
    }

    /// Applies a change (e.g. a rename) and saves.
    pub fn update(&self, f: impl FnOnce(&mut SavedSession)) -> Result<(), StoreError> {
        let mut s = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut s);
        s.updated_at = now();
        self.store.save(&s)
    }
}

impl EngineHook for SessionPersister {
    fn on_rewind(&self, rewind: &cairn_engine::rewind::RewindSnapshot<'_>) -> Result<(), String> {
        self.log.on_rewind(rewind)
    }

    fn on_event(&self, event: &Event) {
        self.log.on_event(event);
        if let Event::TurnEnd(t) = event {
            if let Some(u) = &t.usage {
                let mut s = self.saved.lock().unwrap_or_else(|e| e.into_inner());
                s.usage.add(u);
                s.cost_usd += t.cost_usd.unwrap_or(0.0);
            }
        }
    }

    fn on_state(&self, state: &StateSnapshot<'_>) {
        let r = self.update(|s| {
            s.messages = state.messages.to_vec();
            s.turns = state.turns;
            s.permissions = state.permissions.clone();
            s.todos = state.todos.to_vec();
            s.model = state.model.to_string();
            s.turn_marks = state.turn_marks.to_vec();
            if s.name.is_empty() {
                s.name = derive_name(&s.messages);
            }
        });
        match r {
            Err(e) => {
                tracing::warn!(error = %e, "could not checkpoint the session");
                let mut failure = self.failure.lock().unwrap_or_else(|e| e.into_inner());
                failure.get_or_insert_with(|| format!("could not save the session: {e}"));
            }
            Ok(()) if self.failure().is_none() => self.keep_reserve(),
            Ok(()) => {}
        }
    }

    fn failure(&self) -> Option<String> {
        let own = self
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        own.or_else(|| self.log.failure())
    }

    fn end_turn(&self) -> Result<(), String> {
        let own = self
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let Some(reason) = own.or_else(|| self.log.take_failure()) else {
            return Ok(());
        };
        // Make room for the turn's record (and the `error` / `turn_end` lines after it).
        let freed = self.reserve.release();
        let saved = self.saved();
        let dir = self.store.root().parent().unwrap_or(self.store.root());
        let again = self.store.save(&saved);
        // The log's last failure, if any, is now in the past: the next lines start afresh.
        let _ = self.log.take_failure();
        Err(match again {
            Ok(()) => format!(
                "{reason}. The turn was stopped; its history was saved into the space Cairn \
                 keeps in reserve ({} KiB). Free space in {}, then continue with `cairn run \
                 --session {}`",
                freed / 1024,
                dir.display(),
                saved.session_id
            ),
            Err(e) => format!(
                "{reason}. Saving it into the reserved space failed too ({e}): this turn's \
                 history may be lost. Free space in {}",
                dir.display()
            ),
        })
    }
}

/// Whether `file` is empty or ends with a newline (unreadable counts as yes).
fn ends_with_newline(file: &mut File) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let mut last = [0u8; 1];
    match file.seek(SeekFrom::End(-1)) {
        Ok(_) => file
            .read_exact(&mut last)
            .map(|_| last[0] == b'\n')
            .unwrap_or(true),
        // Empty (cannot seek before the start).
        Err(_) => true,
    }
}

/// The checkpoint file's bytes: the session plus the schema version this build writes.
fn checkpoint_bytes(s: &SavedSession) -> Result<Vec<u8>, serde_json::Error> {
    let mut value = serde_json::to_value(s)?;
    if let Some(obj) = value.as_object_mut() {
        obj.insert(
            "schemaVersion".into(),
            serde_json::Value::from(crate::schema::SCHEMA_VERSION),
        );
        if let Some(seal) = crate::permission_seal::seal(s) {
            obj.insert(crate::permission_seal::SEAL_FIELD.into(), seal.into());
        }
    }
    serde_json::to_vec_pretty(&value)
}

/// Keeps a migrated checkpoint's original text as `<file>.v<N>` (once), so a migration never
/// loses what an older build wrote.
fn keep_original(path: &Path, version: u64, text: &str) {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".v{version}"));
    let copy = path.with_file_name(name);
    if copy.exists() {
        return;
    }
    if let Err(e) = fs::write(&copy, text) {
        tracing::warn!(error = %e, path = %copy.display(), "could not keep the pre-migration checkpoint");
    }
}

/// A short name from the first user message.
pub fn derive_name(messages: &[Message]) -> String {
    let first = messages.iter().find_map(|m| match m {
        Message::User { .. } => Some(m.text()),
        _ => None,
    });
    let text = first.unwrap_or_default();
    let line = text.lines().next().unwrap_or("").trim();
    let mut name: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        name.push('…');
    }
    name
}

/// The current time, RFC 3339.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
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
            name_source: String::new(),
            workspace: "/w".into(),
            model: "m".into(),
            provider: "openai".into(),
            messages: vec![Message::user("hi")],
            permissions: PermissionState::default(),
            turns: 1,
            todos: Vec::new(),
            usage: Default::default(),
            cost_usd: 0.0,
            created_at: updated.into(),
            updated_at: updated.into(),
            protocol_version: 1,
            turn_marks: Vec::new(),
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
    fn a_truncated_event_log_line_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::new(tmp.path());
        let dir = store.session_dir("e").unwrap();
        fs::create_dir_all(&dir).unwrap();
        let good = r#"{"type":"iteration_end","data":{"iteration":1,"taskId":"t"}}"#;
        fs::write(
            dir.join("events.jsonl"),
            format!("{good}\n{good}\n{{\"type\":\"turn_e"),
        )
        .unwrap();
        assert_eq!(store.read_events("e").unwrap().len(), 2);
        // The next process's events start on a line of their own: none is glued to the torn one.
        let log = store.event_log("e").unwrap();
        let turn_end: Event = serde_json::from_str(good).unwrap();
        log.on_event(&turn_end);
        log.on_event(&turn_end);
        assert_eq!(store.read_events("e").unwrap().len(), 4);
        // An intact log gets no blank line.
        drop(log);
        let before = fs::read(dir.join("events.jsonl")).unwrap();
        drop(store.event_log("e").unwrap());
        assert_eq!(fs::read(dir.join("events.jsonl")).unwrap(), before);
    }

    #[test]
    fn a_damaged_checkpoint_falls_back_to_the_previous_one() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::new(tmp.path());
        store.save(&saved("f", "2026-01-01T00:00:00Z")).unwrap();
        store.save(&saved("f", "2026-01-02T00:00:00Z")).unwrap();
        let dir = store.session_dir("f").unwrap();
        fs::write(dir.join("state.json"), "{\"sessionId\": \"f\", trunc").unwrap();
        assert_eq!(store.load("f").unwrap().updated_at, "2026-01-01T00:00:00Z");
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
        let _ = fs::remove_file(dir.join("state.json.bak"));
        let err = store.load("c").unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }));
        assert!(err.to_string().contains("corrupt"));
        // A corrupt session does not hide the others.
        store.save(&saved("d", "2026-01-01T00:00:00Z")).unwrap();
        assert_eq!(store.list().unwrap().len(), 1);
    }
}
