//! Session persistence on disk: an append-only JSONL event log plus an atomically replaced
//! checkpoint per session, under `<state_dir>/sessions/<id>/`.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The engine's permission state and event hook, as a saved session and its log use them.
pub use cairn_engine::{EngineHook, PermissionState};
use cairn_protocol::{Event, Message, TodoItem};

pub(crate) mod event_log;
pub(crate) mod held;
pub mod lock;
pub mod permission_seal;
pub(crate) mod persister;
pub mod rewind;
pub mod rewind_read;
pub(crate) mod writer;

use crate::store::lock::SessionLock;
use serde::{Deserialize, Serialize};

pub use crate::store::event_log::EventLog;
pub use crate::store::persister::SessionPersister;

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

    /// The same error again (for each caller waiting on one background write).
    pub(crate) fn duplicate(&self) -> StoreError {
        match self {
            StoreError::InvalidId(id) => StoreError::InvalidId(id.clone()),
            StoreError::NotFound { id, dir } => StoreError::NotFound {
                id: id.clone(),
                dir: dir.clone(),
            },
            StoreError::Corrupt { id, path, reason } => StoreError::Corrupt {
                id: id.clone(),
                path: path.clone(),
                reason: reason.clone(),
            },
            StoreError::Newer { id, reason } => StoreError::Newer {
                id: id.clone(),
                reason: reason.clone(),
            },
            StoreError::InUse { id, holder } => StoreError::InUse {
                id: id.clone(),
                holder: *holder,
            },
            StoreError::Io { context, source } => StoreError::Io {
                context: context.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
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
    /// The NAME of the Cairn-made git worktree the session runs in (its `workspace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
}

impl SavedSession {
    /// A new, empty session record: no messages, no turns, created and saved at `at`.
    pub fn new(session_id: &str, workspace: &str, model: &str, provider: &str, at: &str) -> Self {
        SavedSession {
            session_id: session_id.to_string(),
            name: String::new(),
            name_source: String::new(),
            workspace: workspace.to_string(),
            model: model.to_string(),
            provider: provider.to_string(),
            messages: Vec::new(),
            permissions: PermissionState::default(),
            turns: 0,
            todos: Vec::new(),
            usage: Default::default(),
            cost_usd: 0.0,
            created_at: at.to_string(),
            updated_at: at.to_string(),
            protocol_version: cairn_protocol::PROTOCOL_VERSION,
            turn_marks: Vec::new(),
            worktree: None,
        }
    }
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
    /// The worktree's NAME for a worktree session, else null.
    pub worktree: Option<String>,
    /// The first prompt (up to 300 characters), for the boards' search; not in `--json`.
    #[serde(skip)]
    pub first_prompt: String,
    /// The usage of each of its recorded model requests, for the boards to price (closed
    /// sessions' cost, a batch's estimate); not in `--json` (the index leaves it empty).
    #[serde(skip)]
    pub usage: Vec<cairn_protocol::TokenUsage>,
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
        if crate::schema::changes_content(found) {
            keep_original(path, found, &text);
        }
        Ok(saved)
    }

    /// Writes a checkpoint atomically (temp file, fsync, rename).
    pub fn save(&self, s: &SavedSession) -> Result<(), StoreError> {
        self.write(s, Messages::Own(&s.messages))
    }

    /// Writes a held state's checkpoint like [`SessionStore::save`].
    pub(crate) fn save_held(&self, h: &crate::store::held::HeldState) -> Result<(), StoreError> {
        self.write(&h.meta, Messages::Shared(&h.messages))
    }

    fn write(&self, meta: &SavedSession, messages: Messages<'_>) -> Result<(), StoreError> {
        let dir = self.session_dir(&meta.session_id)?;
        let bytes = checkpoint_bytes(meta, messages).map_err(|e| StoreError::Io {
            context: "serialising session".into(),
            source: std::io::Error::other(e),
        })?;
        write_checkpoint(&dir, &bytes)
    }

    /// Rewrites session `id`'s checkpoint in the current schema when it has an older one
    /// (as loaded: migrated, its original kept as `state.json.v<N>` when the migration changes
    /// its content, its seal untouched, so
    /// permissions that did not verify still do not); whether it did. A checkpoint that does
    /// not load is left alone (loading falls back to its previous copy).
    pub fn upgrade(&self, id: &str) -> Result<bool, StoreError> {
        let path = self.session_dir(id)?.join("state.json");
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
        };
        let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&text) else {
            return Ok(false);
        };
        let found = crate::schema::version_of(&value);
        if found >= u64::from(crate::schema::SCHEMA_VERSION)
            || crate::schema::migrate(&mut value).is_err()
            || serde_json::from_value::<SavedSession>(value.clone()).is_err()
        {
            return Ok(false);
        }
        if crate::schema::changes_content(found) {
            keep_original(&path, found, &text);
        }
        let bytes = serde_json::to_vec(&value).map_err(|e| StoreError::Io {
            context: "serialising session".into(),
            source: std::io::Error::other(e),
        })?;
        let dir = self.session_dir(id)?;
        write_checkpoint(&dir, &bytes)?;
        tracing::info!(
            session = id,
            from = found,
            "checkpoint rewritten in the current format"
        );
        Ok(true)
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
                    usage: usage_of(&s.messages),
                    id: s.session_id,
                    name: s.name,
                    workspace: s.workspace,
                    model: s.model,
                    created_at: s.created_at,
                    updated_at: s.updated_at,
                    turns: s.turns,
                    worktree: s.worktree,
                    first_prompt: first_prompt(&s.messages),
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
        Ok(self.read_events_counted(id)?.0)
    }

    /// [`Self::read_events`] and how many lines it skipped (to name them to the user).
    pub fn read_events_counted(&self, id: &str) -> Result<(Vec<Event>, usize), StoreError> {
        let path = self.session_dir(id)?.join("events.jsonl");
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
            Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
        };
        let mut out = Vec::new();
        let mut skipped = 0;
        for (n, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Event>(line) {
                Ok(e) => out.push(e),
                Err(e) => {
                    skipped += 1;
                    tracing::warn!(line = n + 1, error = %e, "skipping an unreadable event log line")
                }
            }
        }
        Ok((out, skipped))
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
}

/// Replaces `<dir>/state.json` with `bytes` atomically (temp file, fsync, rename), the
/// previous copy kept as `state.json.bak`.
fn write_checkpoint(dir: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    let path = dir.join("state.json");
    let tmp = dir.join(format!(".state.json.{}.tmp", std::process::id()));
    let written = File::create(&tmp)
        .map_err(io(format!("creating {}", tmp.display())))
        .and_then(|mut f| {
            f.write_all(bytes)
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

/// The messages of a checkpoint to write: a session's own, or a held state's shared ones.
#[derive(Clone, Copy)]
enum Messages<'a> {
    Own(&'a [Message]),
    Shared(&'a [std::sync::Arc<Message>]),
}

impl Serialize for Messages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Messages::Own(m) => serializer.collect_seq(m.iter()),
            Messages::Shared(m) => serializer.collect_seq(m.iter().map(|m| &**m)),
        }
    }
}

/// The checkpoint file's bytes, as compact JSON: the fields of `meta` (its own messages
/// replaced by `messages`), the schema version this build writes and the permissions' seal.
fn checkpoint_bytes(
    meta: &SavedSession,
    messages: Messages<'_>,
) -> Result<Vec<u8>, serde_json::Error> {
    /// [`SavedSession`] as written, by reference (the same names and skips).
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct OnDisk<'a> {
        session_id: &'a str,
        name: &'a str,
        name_source: &'a str,
        workspace: &'a str,
        model: &'a str,
        provider: &'a str,
        messages: Messages<'a>,
        permissions: &'a PermissionState,
        turns: u32,
        todos: &'a [TodoItem],
        usage: &'a cairn_protocol::TokenUsage,
        cost_usd: f64,
        created_at: &'a str,
        updated_at: &'a str,
        protocol_version: u32,
        #[serde(skip_serializing_if = "<[_]>::is_empty")]
        turn_marks: &'a [cairn_engine::TurnMark],
        #[serde(skip_serializing_if = "Option::is_none")]
        worktree: &'a Option<String>,
        schema_version: u32,
        /// [`crate::store::permission_seal::SEAL_FIELD`].
        #[serde(skip_serializing_if = "Option::is_none")]
        permissions_seal: Option<String>,
    }
    // Every field named: one added to `SavedSession` must be added here too.
    let SavedSession {
        session_id,
        name,
        name_source,
        workspace,
        model,
        provider,
        messages: _,
        permissions,
        turns,
        todos,
        usage,
        cost_usd,
        created_at,
        updated_at,
        protocol_version,
        turn_marks,
        worktree,
    } = meta;
    serde_json::to_vec(&OnDisk {
        session_id,
        name,
        name_source,
        workspace,
        model,
        provider,
        messages,
        permissions,
        turns: *turns,
        todos,
        usage,
        cost_usd: *cost_usd,
        created_at,
        updated_at,
        protocol_version: *protocol_version,
        turn_marks,
        worktree,
        schema_version: crate::schema::SCHEMA_VERSION,
        permissions_seal: crate::store::permission_seal::seal(meta),
    })
}

/// Keeps a migrated checkpoint's original text as `<file>.v<N>` (once), so a migration that
/// changes content never loses what an older build wrote.
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

/// The usage of each recorded model request of `messages`.
fn usage_of(messages: &[Message]) -> Vec<cairn_protocol::TokenUsage> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Assistant { usage, .. } => *usage,
            _ => None,
        })
        .collect()
}

/// The first user message's text, up to 300 characters (what the boards' search reads
/// besides the name).
pub fn first_prompt(messages: &[Message]) -> String {
    let first = messages.iter().find_map(|m| match m {
        Message::User { .. } => Some(m.text()),
        _ => None,
    });
    first.unwrap_or_default().chars().take(300).collect()
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
    use cairn_engine::EngineHook;

    fn saved(id: &str, updated: &str) -> SavedSession {
        SavedSession {
            messages: vec![Message::user("hi")],
            turns: 1,
            protocol_version: 1,
            ..SavedSession::new(id, "/w", "m", "openai", updated)
        }
    }

    #[test]
    fn the_first_prompt_is_the_first_user_message_capped_and_listed() {
        let long = "y".repeat(400);
        let messages = vec![
            Message::assistant_text("hello"),
            Message::user(long.as_str()),
            Message::user("later"),
        ];
        let first = first_prompt(&messages);
        assert_eq!(first.chars().count(), 300);
        assert!(first.starts_with("yyy"));
        assert_eq!(first_prompt(&[]), "");
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::new(tmp.path());
        store.save(&saved("p", "2026-01-01T00:00:00Z")).unwrap();
        let listed = store.list().unwrap();
        assert_eq!(listed[0].first_prompt, "hi");
        // Not part of `cairn sessions --json`.
        let json = serde_json::to_value(&listed[0]).unwrap();
        assert!(json.get("firstPrompt").is_none(), "{json}");
    }

    #[test]
    fn a_listed_session_carries_its_saved_requests_usage() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::new(tmp.path());
        let mut s = saved("spent", "2026-01-01T00:00:00Z");
        s.model = "gpt-4o".into();
        let usage = cairn_protocol::TokenUsage {
            input_tokens: 1_000,
            output_tokens: 200,
            ..Default::default()
        };
        s.messages.push(Message::Assistant {
            content: vec![],
            tool_calls: vec![],
            usage: Some(usage),
        });
        store.save(&s).unwrap();
        let listed = store.list().unwrap();
        assert_eq!(listed[0].usage, vec![usage]);
        // Not part of `cairn sessions --json`.
        let json = serde_json::to_value(&listed[0]).unwrap();
        assert!(json.get("usage").is_none(), "{json}");
    }

    #[test]
    fn the_checkpoint_is_the_session_as_serde_writes_it_plus_version_and_seal() {
        let mut s = saved("x", "2026-01-01T00:00:00Z");
        s.name = "n".into();
        s.turn_marks = vec![cairn_engine::TurnMark {
            turn: 1,
            messages: 1,
        }];
        s.todos = serde_json::from_str(r#"[{"content": "t", "status": "pending"}]"#).unwrap();
        s.cost_usd = 0.5;
        let mut expected = serde_json::to_value(&s).unwrap();
        let obj = expected.as_object_mut().unwrap();
        obj.insert("schemaVersion".into(), crate::schema::SCHEMA_VERSION.into());
        if let Some(seal) = crate::store::permission_seal::seal(&s) {
            obj.insert(
                crate::store::permission_seal::SEAL_FIELD.into(),
                seal.into(),
            );
        }
        let own = checkpoint_bytes(&s, Messages::Own(&s.messages)).unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&own).unwrap(),
            expected
        );
        let held = crate::store::held::HeldState::new(s.clone());
        let shared = checkpoint_bytes(&held.meta, Messages::Shared(&held.messages)).unwrap();
        assert_eq!(shared, own);
        assert!(!own.contains(&b'\n'));
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
