//! The persistence hook of one open session: appends its events to `events.jsonl` and hands
//! its state at safe points to a background [`Writer`], so the turn loop never waits on a
//! full-history write. It waits only where durability is promised:
//!
//! * a turn's input (the first state of a turn), before `turn_start` is announced;
//! * before the loop waits on the user (an approval, a question, a plan, a folder request),
//!   so a process killed then leaves the open calls in the saved history;
//! * the state after a rewind, and everything pending before it;
//! * the turn's end ([`EngineHook::end_turn`]), [`SessionPersister::update`] (renames, the
//!   final checkpoint on shutdown), [`SessionPersister::flush`] and dropping the persister.
//!
//! A failed background write is sticky: the next [`EngineHook::failure`] reports it, and
//! `end_turn` at the latest, which then records the turn into the space kept in reserve.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cairn_engine::{EngineHook, StateSnapshot};
use cairn_protocol::{Event, Message};

use crate::reserve::Reserve;
use crate::store::event_log::EventLog;
use crate::store::held::HeldState;
use crate::store::lock::SessionLock;
use crate::store::writer::Writer;
use crate::store::{derive_name, now, SavedSession, SessionStore, StoreError};

impl SessionStore {
    /// A hook that appends events to `events.jsonl` and checkpoints the state at safe points
    /// (in the background; see [`SessionPersister`]); it keeps the session's `lock` for as
    /// long as it lives. A checkpoint of an older schema is rewritten in the current one.
    pub fn persister(
        &self,
        saved: SavedSession,
        lock: SessionLock,
    ) -> Result<SessionPersister, StoreError> {
        let id = saved.session_id.clone();
        let state_file = self.session_dir(&id)?.join("state.json");
        if let Err(e) = self.upgrade(&id) {
            tracing::warn!(error = %e, "could not rewrite the checkpoint in the current format");
        }
        let log = Arc::new(self.event_log(&id)?);
        let reserve = Arc::new(Reserve::new(self.root().parent().unwrap_or(self.root())));
        let writer = {
            let (store, log, reserve) = (self.clone(), log.clone(), reserve.clone());
            Writer::spawn(
                &id,
                Box::new(move |s, upkeep| {
                    store.save_held(s)?;
                    // A turn's successful save regrows the reserve, unless a write of the turn
                    // failed (then its end claims the reserve instead).
                    if upkeep && log.failure().is_none() {
                        keep_reserve(&reserve, &state_file);
                    }
                    Ok(())
                }),
            )?
        };
        keep_reserve(&reserve, &self.session_dir(&id)?.join("state.json"));
        Ok(SessionPersister {
            writer,
            log,
            saved: Mutex::new(Arc::new(HeldState::new(saved))),
            reserve,
            store: self.clone(),
            durable_next: AtomicBool::new(false),
            _lock: lock,
        })
    }
}

/// Keeps the space reserve as big as the checkpoint needs (a warning when the disk has no
/// room for it: the next failed save then has less to fall back on).
fn keep_reserve(reserve: &Reserve, state_file: &std::path::Path) {
    let len = std::fs::metadata(state_file).map(|m| m.len()).unwrap_or(0);
    if let Err(e) = reserve.ensure(len) {
        tracing::warn!(error = %e, "could not keep space in reserve for the session's saves");
    }
}

/// Persists one session: event log plus checkpoint after input, each iteration and turn end
/// (see the module docs for what is written in the background and what is awaited).
pub struct SessionPersister {
    /// Declared first: dropped (its last state written) before the lock is released.
    writer: Writer,
    log: Arc<EventLog>,
    /// The newest state (what the writer was last handed).
    saved: Mutex<Arc<HeldState>>,
    /// Room for the turn's final save when the disk is full (shared by the state dir).
    reserve: Arc<Reserve>,
    store: SessionStore,
    /// The next state must be on disk before `on_state` returns (set by a rewind).
    durable_next: AtomicBool,
    _lock: SessionLock,
}

impl SessionPersister {
    /// Appends an event a face announces outside a turn's stream (`session_named`) to the
    /// session's event log, so what was printed is also logged.
    pub fn log_event(&self, event: &cairn_protocol::Event) {
        cairn_engine::EngineHook::on_event(self.log.as_ref(), event);
    }

    /// The checkpoint as last saved (or about to be).
    pub fn saved(&self) -> SavedSession {
        self.current().to_saved()
    }

    fn current(&self) -> Arc<HeldState> {
        self.lock_saved().clone()
    }

    fn lock_saved(&self) -> MutexGuard<'_, Arc<HeldState>> {
        self.saved.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces the held state with `next` and hands it to the writer (the old one is freed
    /// there); its generation.
    fn hand_over(&self, held: &mut Arc<HeldState>, next: HeldState, turn: bool) -> u64 {
        let old = std::mem::replace(held, Arc::new(next));
        self.writer.discard(old);
        self.writer.submit(held.clone(), turn)
    }

    /// Applies a change (e.g. a rename) and saves; on disk when it returns.
    pub fn update(&self, f: impl FnOnce(&mut SavedSession)) -> Result<(), StoreError> {
        self.update_with(f, true)
    }

    /// Like [`SessionPersister::update`], but the save time (what orders the sessions
    /// boards) moves only when the history or the turn count changed: saving a session that
    /// was merely opened and looked at leaves it where it was.
    pub fn save_quietly(&self, f: impl FnOnce(&mut SavedSession)) -> Result<(), StoreError> {
        self.update_with(f, false)
    }

    fn update_with(
        &self,
        f: impl FnOnce(&mut SavedSession),
        touch: bool,
    ) -> Result<(), StoreError> {
        let generation = {
            let mut held = self.lock_saved();
            let mut s = held.to_saved();
            let turns = s.turns;
            f(&mut s);
            let messages = held.share(&s.messages);
            // The system prompt is rebuilt when a session is opened (date, environment):
            // that is not activity.
            let said = |m: &&Arc<Message>| !matches!(***m, Message::System { .. });
            let same_history = messages.iter().filter(said).count()
                == held.messages.iter().filter(said).count()
                && messages
                    .iter()
                    .filter(said)
                    .zip(held.messages.iter().filter(said))
                    .all(|(a, b)| Arc::ptr_eq(a, b) || a == b);
            if touch || s.turns != turns || !same_history {
                s.updated_at = now();
            }
            s.messages = Vec::new();
            let next = HeldState { meta: s, messages };
            self.hand_over(&mut held, next, false)
        };
        self.writer.wait(generation)
    }

    /// Waits until every state handed over so far is on disk; the last write's error.
    pub fn flush(&self) -> Result<(), StoreError> {
        self.writer.flush()
    }
}

/// The events after which the turn waits on the user: what is saved must be on disk first.
fn waits_on_user(event: &Event) -> bool {
    matches!(
        event,
        Event::PermissionRequired(_)
            | Event::AskUserQuestion(_)
            | Event::PlanProposed(_)
            | Event::DirectoryRequested(_)
    )
}

/// `prev` with the engine's state at a safe point: its unchanged messages shared, not copied.
fn with_state(prev: &HeldState, state: &StateSnapshot<'_>) -> HeldState {
    let meta = &prev.meta;
    let name = if meta.name.is_empty() {
        derive_name(state.messages)
    } else {
        meta.name.clone()
    };
    HeldState {
        meta: SavedSession {
            session_id: meta.session_id.clone(),
            name,
            name_source: meta.name_source.clone(),
            workspace: meta.workspace.clone(),
            model: state.model.to_string(),
            provider: meta.provider.clone(),
            messages: Vec::new(),
            permissions: state.permissions.clone(),
            turns: state.turns,
            todos: state.todos.to_vec(),
            usage: meta.usage,
            cost_usd: meta.cost_usd,
            created_at: meta.created_at.clone(),
            updated_at: now(),
            protocol_version: meta.protocol_version,
            turn_marks: state.turn_marks.to_vec(),
            worktree: meta.worktree.clone(),
        },
        messages: prev.share(state.messages),
    }
}

impl EngineHook for SessionPersister {
    fn on_rewind(&self, rewind: &cairn_engine::rewind::RewindSnapshot<'_>) -> Result<(), String> {
        // What was pending lands before the log is cut; the state after the cut is awaited.
        let _ = self.writer.flush();
        self.durable_next.store(true, Ordering::SeqCst);
        self.log.on_rewind(rewind)
    }

    fn on_event(&self, event: &Event) {
        if waits_on_user(event) {
            let _ = self.writer.flush();
        }
        self.log.on_event(event);
        if let Event::TurnEnd(t) = event {
            if let Some(u) = &t.usage {
                let mut held = self.lock_saved();
                // Copies the list of shared messages at most, never the messages.
                let s = &mut Arc::make_mut(&mut held).meta;
                s.usage.add(u);
                s.cost_usd += t.cost_usd.unwrap_or(0.0);
            }
        }
    }

    fn on_state(&self, state: &StateSnapshot<'_>) {
        let (generation, durable) = {
            let mut held = self.lock_saved();
            // A turn's input is saved before the turn is announced.
            let after_rewind = self.durable_next.swap(false, Ordering::SeqCst);
            let durable = after_rewind || state.turns != held.meta.turns;
            let next = with_state(&held, state);
            (self.hand_over(&mut held, next, true), durable)
        };
        if durable {
            // A failure is sticky in the writer: `failure()` reports it next.
            let _ = self.writer.wait(generation);
        }
    }

    fn failure(&self) -> Option<String> {
        self.writer.failure().or_else(|| self.log.failure())
    }

    fn end_turn(&self) -> Result<(), String> {
        // Everything the turn handed over is written (or failed) before its end is decided.
        let _ = self.writer.flush();
        let own = self.writer.take_failure();
        let Some(reason) = own.or_else(|| self.log.take_failure()) else {
            return Ok(());
        };
        // Make room for the turn's record (and the `error` / `turn_end` lines after it).
        let freed = self.reserve.release();
        let saved = self.current();
        let dir = self.store.root().parent().unwrap_or(self.store.root());
        let again = self.writer.wait(self.writer.submit(saved.clone(), false));
        let id = &saved.meta.session_id;
        // Reported here, once: the next turn starts with a clean slate.
        let _ = self.writer.take_failure();
        let _ = self.log.take_failure();
        Err(match again {
            Ok(()) => format!(
                "{reason}. The turn was stopped; its history was saved into the space Cairn \
                 keeps in reserve ({} KiB). Free space in {}, then continue with `cairn run \
                 --session {}`",
                freed / 1024,
                dir.display(),
                id
            ),
            Err(e) => format!(
                "{reason}. Saving it into the reserved space failed too ({e}): this turn's \
                 history may be lost. Free space in {}",
                dir.display()
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_engine::PermissionState;
    use cairn_protocol::Message;

    fn fresh(id: &str) -> SavedSession {
        SavedSession {
            protocol_version: 1,
            ..SavedSession::new(id, "/w", "m", "openai", &now())
        }
    }

    fn hand_over(p: &SessionPersister, messages: &[Message], turns: u32) {
        p.on_state(&StateSnapshot {
            messages,
            turns,
            permissions: &PermissionState::default(),
            todos: &[],
            model: "m",
            turn_marks: &[],
        });
    }

    fn on_disk(store: &SessionStore, id: &str) -> usize {
        store.load(id).unwrap().messages.len()
    }

    fn open(id: &str) -> (tempfile::TempDir, SessionStore, SessionPersister) {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::new(tmp.path());
        let lock = store.lock(id).unwrap();
        let p = store.persister(fresh(id), lock).unwrap();
        (tmp, store, p)
    }

    #[test]
    fn durable_points_are_on_disk_when_the_hook_returns() {
        let (_tmp, store, p) = open("d");
        let mut history = vec![Message::user("go")];
        // A turn's input.
        hand_over(&p, &history, 1);
        assert_eq!(on_disk(&store, "d"), 1);
        // Before the turn waits on an approval.
        history.push(Message::assistant_text("calling"));
        hand_over(&p, &history, 1);
        let asked: Event =
            serde_json::from_value(serde_json::json!({"type": "permission_required",
            "data": {"taskId": "t", "reqId": "c1", "name": "write_file", "arguments": {},
                     "reason": "writes", "category": "write"}}))
            .unwrap();
        p.on_event(&asked);
        assert_eq!(on_disk(&store, "d"), 2);
        // The turn's end.
        history.push(Message::assistant_text("done"));
        hand_over(&p, &history, 1);
        p.end_turn().unwrap();
        assert_eq!(on_disk(&store, "d"), 3);
        // Dropping the persister writes what is pending, then releases the lock.
        history.push(Message::user("more"));
        hand_over(&p, &history, 1);
        drop(p);
        assert_eq!(on_disk(&store, "d"), 4);
        drop(store.lock("d").unwrap());
        // Saves are compact.
        let dir = store.session_dir("d").unwrap();
        let text = std::fs::read_to_string(dir.join("state.json")).unwrap();
        assert!(!text.contains('\n'), "{text}");
    }

    #[test]
    fn a_failed_background_save_is_reported_and_ends_the_turn_with_an_error() {
        let (_tmp, store, p) = open("f");
        let mut history = vec![Message::user("go")];
        hand_over(&p, &history, 1);
        assert_eq!(p.failure(), None);
        // From now on the temp file cannot be created (a folder is in its way).
        let dir = store.session_dir("f").unwrap();
        let blocker = dir.join(format!(".state.json.{}.tmp", std::process::id()));
        std::fs::create_dir(&blocker).unwrap();
        history.push(Message::assistant_text("step"));
        hand_over(&p, &history, 1);
        assert!(p.flush().is_err());
        let reason = p.failure().expect("sticky once written");
        assert!(reason.starts_with("could not save the session"), "{reason}");
        // Still sticky after a later hook call, until the turn's end reports it once.
        hand_over(&p, &history, 1);
        assert!(p.failure().is_some());
        let err = p.end_turn().unwrap_err();
        assert!(err.contains("could not save the session"), "{err}");
        assert!(err.contains("reserved space"), "{err}");
        assert_eq!(p.failure(), None);
        // The next turn starts clean and saves again once it can.
        std::fs::remove_dir(&blocker).unwrap();
        history.push(Message::user("again"));
        hand_over(&p, &history, 2);
        assert_eq!(on_disk(&store, "f"), 3);
        p.end_turn().unwrap();
        assert_eq!(store.load("f").unwrap().turns, 2);
    }

    #[test]
    fn a_rename_is_on_disk_when_update_returns_and_its_failure_fails_no_turn() {
        let (_tmp, store, p) = open("r");
        hand_over(&p, &[Message::user("go")], 1);
        p.update(|s| s.name = "named".into()).unwrap();
        assert_eq!(store.load("r").unwrap().name, "named");
        let dir = store.session_dir("r").unwrap();
        let blocker = dir.join(format!(".state.json.{}.tmp", std::process::id()));
        std::fs::create_dir(&blocker).unwrap();
        assert!(p.update(|s| s.name = "other".into()).is_err());
        assert_eq!(p.failure(), None);
        assert_eq!(p.saved().name, "other");
    }

    #[test]
    fn a_quiet_save_without_a_new_message_keeps_the_save_time_and_one_with_a_message_moves_it() {
        let (_tmp, store, p) = open("q");
        let history = vec![Message::user("go"), Message::assistant_text("done")];
        hand_over(&p, &history, 1);
        p.flush().unwrap();
        let old = "2000-01-01T00:00:00.000Z";
        // Closing a session that was only looked at: same history, same turns.
        p.save_quietly(|s| {
            s.updated_at = old.into();
            s.messages = history.clone();
        })
        .unwrap();
        assert_eq!(store.load("q").unwrap().updated_at, old);
        // Opening rebuilt the system prompt (today's date): still no activity.
        let mut reopened = vec![Message::system("prompt of today")];
        reopened.extend(history.iter().cloned());
        p.save_quietly(|s| s.messages = reopened.clone()).unwrap();
        assert_eq!(store.load("q").unwrap().updated_at, old);
        // A new message is activity: the time moves.
        let mut more = history.clone();
        more.push(Message::user("again"));
        p.save_quietly(|s| s.messages = more.clone()).unwrap();
        assert_ne!(store.load("q").unwrap().updated_at, old);
    }
}
