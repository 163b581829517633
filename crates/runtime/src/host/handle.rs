//! One open session as both faces drive it: turns from typed inputs, their event streams,
//! interrupts, steering, the answers the turn waits for, and closing.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cairn_engine::{EventStream, Session};
use cairn_protocol::{ApprovalDecision, DirectoryGrant, Event, PlanReview, TurnStatus, UserAnswer};

use super::batch::{forward, ForwardEnd};
use super::pending::{Pending, RequestAnswer};
use super::submit::{ModeBack, Turn};
use super::{HostError, RunOutcome, TurnInput};
use crate::assemble::Assembled;
use crate::llm_setup::LlmSetup;
use crate::store::SavedSession;
use crate::store::SessionStore;
use crate::store::StoreError;
use crate::turn_slots::{SlotWait, TurnSlot, TurnSlots};

/// Longest wait for a running turn to stop when the session closes.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a handle shares with its host: the change signal and the machine's turn slots.
pub(super) struct Live {
    pub(super) changes: Arc<tokio::sync::watch::Sender<u64>>,
    pub(super) slots: Arc<TurnSlots>,
}

/// A turn's event stream and the turn slot it holds until it is dropped (see
/// [`SessionHandle::start_queued`]); reads like the [`EventStream`] itself.
pub struct SlottedStream {
    stream: EventStream,
    _slot: Option<TurnSlot>,
    _mode_back: Option<ModeBack>,
}

/// What a running turn holds until it ended: its turn slot, and the mode a command changed
/// for it (put back when this is dropped).
pub struct TurnHold {
    _slot: Option<TurnSlot>,
    _mode_back: Option<ModeBack>,
}

impl SlottedStream {
    /// The stream, for [`EventStream::end`], and what the turn holds: drop it once the turn
    /// ended (the slot is freed, a `/review`'s mode comes back).
    pub fn into_inner(self) -> (EventStream, TurnHold) {
        (
            self.stream,
            TurnHold {
                _slot: self._slot,
                _mode_back: self._mode_back,
            },
        )
    }
}

impl std::ops::Deref for SlottedStream {
    type Target = EventStream;
    fn deref(&self) -> &EventStream {
        &self.stream
    }
}

impl std::ops::DerefMut for SlottedStream {
    fn deref_mut(&mut self) -> &mut EventStream {
        &mut self.stream
    }
}

/// An open session of a [`super::Host`].
pub struct SessionHandle {
    assembled: Assembled,
    pending: Arc<Pending>,
    commands: Option<Arc<cairn_tools::CommandSessions>>,
    workspace: PathBuf,
    provider: Mutex<String>,
    blocked: Mutex<Option<String>>,
    closed: AtomicBool,
    live: Live,
    /// Set while a turn waits for a turn slot.
    queued: Mutex<Option<SlotWait>>,
    /// Wakes a turn waiting for a slot when the session is interrupted.
    unqueue: tokio::sync::Notify,
    /// How the last turn that ran through [`SessionHandle::run`] ended.
    last_status: Mutex<Option<TurnStatus>>,
    /// Calls of [`SessionHandle::run`] not returned yet (waiting for a slot or running).
    runs: std::sync::atomic::AtomicUsize,
    /// Models a face offers for this session (its endpoint's list), when it asked.
    pub(super) offered: Mutex<Vec<String>>,
}

/// Counts a [`SessionHandle::run`] for as long as it lasts.
struct RunGuard<'a>(&'a std::sync::atomic::AtomicUsize);

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl SessionHandle {
    pub(super) fn new(
        assembled: Assembled,
        pending: Arc<Pending>,
        commands: Option<Arc<cairn_tools::CommandSessions>>,
        workspace: PathBuf,
        provider: String,
        blocked: Option<String>,
        live: Live,
    ) -> SessionHandle {
        SessionHandle {
            assembled,
            pending,
            commands,
            workspace,
            provider: Mutex::new(provider),
            blocked: Mutex::new(blocked),
            closed: AtomicBool::new(false),
            live,
            queued: Mutex::new(None),
            unqueue: tokio::sync::Notify::new(),
            last_status: Mutex::new(None),
            runs: std::sync::atomic::AtomicUsize::new(0),
            offered: Mutex::new(Vec::new()),
        }
    }

    /// Whether a turn runs, waits for a slot, or a [`SessionHandle::run`] is under way:
    /// closing the session now would stop something.
    pub fn is_active(&self) -> bool {
        self.is_busy() || self.queued().is_some() || self.runs.load(Ordering::SeqCst) > 0
    }

    /// The configuration the session reads.
    pub fn config(&self) -> crate::config_scope::ConfigScope {
        self.assembled.config
    }

    fn touch(&self) {
        self.live.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// While a turn of this session waits for a turn slot: how many run and may run.
    pub fn queued(&self) -> Option<SlotWait> {
        *lock(&self.queued)
    }

    /// How the last turn run through [`SessionHandle::run`] or
    /// [`SessionHandle::start_queued`] ended (as far as its events were seen).
    pub fn last_status(&self) -> Option<TurnStatus> {
        *lock(&self.last_status)
    }

    /// Records what a face saw of a turn (its start and end) for the live state.
    pub fn observe(&self, event: &Event) {
        match event {
            Event::TurnEnd(end) => {
                *lock(&self.last_status) = Some(end.status);
                self.touch();
            }
            Event::TurnStart(_) => self.touch(),
            _ => {}
        }
    }

    /// The machine's turn slots this session's turns take.
    pub fn turn_slots(&self) -> &Arc<TurnSlots> {
        &self.live.slots
    }

    /// Waits for a turn slot (telling `on_wait` while every one is taken); `None` when the
    /// wait was interrupted. A slot folder that cannot be used lets the turn run unslotted
    /// (logged): the limit spares the machine, it protects nothing.
    async fn take_slot(
        &self,
        mut on_wait: impl FnMut(SlotWait),
    ) -> Result<Option<Option<TurnSlot>>, HostError> {
        if self.is_closed() {
            return Err(HostError::Closed(self.id()));
        }
        let unqueue = self.unqueue.notified();
        tokio::pin!(unqueue);
        unqueue.as_mut().enable();
        let slots = self.live.slots.clone();
        let acquire = slots.acquire(|w| {
            *lock(&self.queued) = Some(w);
            self.touch();
            on_wait(w);
        });
        let got = tokio::select! {
            got = acquire => Some(got),
            _ = unqueue => None,
        };
        let was_queued = lock(&self.queued).take().is_some();
        if was_queued {
            self.touch();
        }
        Ok(match got {
            None => None,
            Some(Ok(slot)) => Some(Some(slot)),
            Some(Err(e)) => {
                tracing::warn!(session = %self.id(), error = %e, "no turn slot; the turn runs anyway");
                Some(None)
            }
        })
    }

    /// [`SessionHandle::start`] once a turn slot is free: waits while the machine runs as
    /// many turns as its limit allows (`on_wait` hears [`SlotWait`], e.g. to print "waiting
    /// for a turn slot (4 running)"); the slot is held until the returned stream is
    /// dropped. `None` when [`SessionHandle::interrupt`] ended the wait.
    pub async fn start_queued(
        &self,
        turn: Turn,
        on_wait: impl FnMut(SlotWait),
    ) -> Result<Option<SlottedStream>, HostError> {
        let mut turn = turn;
        let mode_back = turn.mode_back.take();
        let Some(slot) = self.take_slot(on_wait).await? else {
            return Ok(None);
        };
        let stream = self.start(turn.input, turn.options)?;
        self.touch();
        Ok(Some(SlottedStream {
            stream,
            _slot: slot,
            _mode_back: mode_back,
        }))
    }

    /// The session id.
    pub fn id(&self) -> String {
        self.assembled.session.id()
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// The engine session (for reads the host has no call for: mode, todos, rules…).
    pub(crate) fn session(&self) -> &Session {
        &self.assembled.session
    }

    /// The assembled session: store, persister, sandbox, MCP servers, roles.
    pub(crate) fn assembled(&self) -> &Assembled {
        &self.assembled
    }

    /// The session store.
    pub fn store(&self) -> &SessionStore {
        &self.assembled.store
    }

    /// The state dir the session lives in.
    pub fn state_dir(&self) -> &Path {
        &self.assembled.state_dir
    }

    /// Where the session's checkpoints live (for its timeline).
    pub fn timeline_source(&self) -> crate::timeline::TimelineSource {
        crate::timeline::TimelineSource {
            state_dir: self.state_dir().to_path_buf(),
            workspace: self.workspace.clone(),
            session_id: self.id(),
        }
    }

    /// The last saved state (never waits for a running turn).
    pub fn saved(&self) -> SavedSession {
        self.assembled.persister.saved()
    }

    /// What the user must be told about how the session was opened.
    pub fn notice(&self) -> Option<&str> {
        self.assembled.notice.as_deref()
    }

    /// The agent's command sessions (`exec_command`) a face can take over, when the host
    /// gave the session its own.
    pub fn commands(&self) -> Option<&Arc<cairn_tools::CommandSessions>> {
        self.commands.as_ref()
    }

    /// The provider name.
    pub fn provider(&self) -> String {
        lock(&self.provider).clone()
    }

    /// Why turns cannot run now, if they cannot.
    pub fn blocked(&self) -> Option<String> {
        lock(&self.blocked).clone()
    }

    /// Switches the LLM (after a settings change); the next turn uses it.
    pub fn set_llm(&self, llm: LlmSetup) {
        let session = &self.assembled.session;
        session.set_llm(crate::mcp::gated(llm.client, self.assembled.mcp.manager()));
        if !llm.model.is_empty() {
            self.assembled.switch_model(&llm.model);
        }
        *lock(&self.provider) = llm.provider;
        *lock(&self.blocked) = llm.blocked.map(|b| b.to_string());
    }

    /// Starts a turn from `input`; its events come on the stream. Behind a running turn it
    /// waits its turn (turns of one session never overlap). It takes no turn slot: faces
    /// use [`SessionHandle::start_queued`] or [`SessionHandle::run`], which do.
    pub(crate) fn start(
        &self,
        input: TurnInput,
        options: cairn_engine::TurnOptions,
    ) -> Result<EventStream, HostError> {
        if self.is_closed() {
            return Err(HostError::Closed(self.id()));
        }
        if let Some(reason) = self.blocked() {
            return Err(HostError::Blocked(reason));
        }
        let session = &self.assembled.session;
        Ok(match input {
            TurnInput::Text(text) if options.is_empty() => session.run(text),
            TurnInput::Text(text) => session.run_with_options(text, None, options),
            TurnInput::Attached(text, a) => session.run_with_options(text, Some(*a), options),
            TurnInput::Retry => session.retry(),
            TurnInput::Resume => session.resume(),
            TurnInput::Compact => session.compact(),
        })
    }

    /// Runs one turn (and the turns the engine starts from steering left over) once a turn
    /// slot is free, sending every event to `send` with text deltas batched over `window`.
    /// A `send` failure (the face is gone) cancels the turn. Interrupted while it waits for
    /// a slot, it ends `interrupted` with no turn run.
    pub async fn run<F, E>(
        &self,
        turn: Turn,
        window: Duration,
        send: F,
    ) -> Result<RunOutcome, HostError>
    where
        F: FnMut(Event) -> Result<(), E>,
    {
        self.run_waiting(turn, window, |_| {}, send).await
    }

    /// [`SessionHandle::run`], telling `on_wait` while the turn waits for a turn slot (e.g.
    /// to print "waiting for a turn slot (4 running)").
    pub async fn run_waiting<F, E>(
        &self,
        turn: Turn,
        window: Duration,
        on_wait: impl FnMut(SlotWait),
        mut send: F,
    ) -> Result<RunOutcome, HostError>
    where
        F: FnMut(Event) -> Result<(), E>,
    {
        if let Some(reason) = self.blocked() {
            return Err(HostError::Blocked(reason));
        }
        self.runs.fetch_add(1, Ordering::SeqCst);
        let _counted = RunGuard(&self.runs);
        let mut turn = turn;
        let mode_back = turn.mode_back.take();
        let Some(slotted) = self.start_queued(turn, on_wait).await? else {
            return Ok(RunOutcome::Ended {
                status: TurnStatus::Interrupted,
                turns: 0,
                steering_turns: 0,
            });
        };
        let (mut stream, slot) = slotted.into_inner();
        let outcome = match forward(&mut stream, window, &mut send, |e| self.observe(e)).await {
            // Dropping the stream cancels the run.
            ForwardEnd::ChannelClosed => {
                drop(stream);
                RunOutcome::ChannelClosed
            }
            ForwardEnd::StreamEnded => stream.end().await.into(),
        };
        drop(slot);
        drop(mode_back);
        // After a turn ran to its end, an unnamed session names itself (`session_named`).
        if let RunOutcome::Ended { status, turns, .. } = &outcome {
            if *turns > 0 && *status != TurnStatus::Interrupted {
                if let Some(name) = self.name_automatically().await {
                    let _ = send(Event::SessionNamed(cairn_protocol::SessionNamed {
                        name,
                        source: "auto".into(),
                    }));
                }
            }
        }
        self.touch();
        Ok(outcome)
    }

    /// Interrupts the running turn: the LLM stream stops, tools and their processes are
    /// killed, its pending approvals are dropped (denied).
    pub fn interrupt(&self) {
        self.assembled.session.interrupt();
        // A turn still waiting for a slot gives up.
        self.unqueue.notify_waiters();
    }

    /// Whether a turn runs.
    pub fn is_busy(&self) -> bool {
        self.assembled.session.is_busy()
    }

    /// Queues an instruction for the running turn; returns those still waiting.
    pub fn queue_steering(&self, text: impl Into<String>) -> Vec<String> {
        let session = &self.assembled.session;
        session.queue_steering(text);
        session.pending_steering()
    }

    /// Withdraws a queued instruction; false when it was already injected.
    pub fn remove_steering(&self, text: &str) -> bool {
        self.assembled.session.remove_steering(text)
    }

    /// Instructions queued and not yet injected.
    pub fn pending_steering(&self) -> Vec<String> {
        self.assembled.session.pending_steering()
    }

    /// The requests waiting for the user.
    pub fn pending(&self) -> &Arc<Pending> {
        &self.pending
    }

    /// Answers the approval of tool call `req_id`; false when it no longer waits.
    pub fn answer_approval(&self, req_id: &str, decision: ApprovalDecision) -> bool {
        self.pending.answer_approval(req_id, decision)
    }

    /// "Always allow in this project": keeps the allowance the pending approval `req_id`
    /// offers as a user-level rule limited to this session's project (never in the
    /// repository), reloads this session's rules and answers the request with that allowance
    /// (the session stops asking too). False when the request was answered elsewhere
    /// meanwhile (the rule is kept). Other open sessions see the rule once
    /// [`super::Host::reload_rules`] runs; sessions opened later load it.
    pub fn allow_in_project(&self, req_id: &str) -> Result<bool, HostError> {
        let request = self
            .pending
            .approval_request(req_id)
            .ok_or_else(|| HostError::NotPending(req_id.to_string()))?;
        let allow = request
            .always_allow
            .ok_or_else(|| HostError::NoAllowance(req_id.to_string()))?;
        let rule = crate::permissions::add_project_rule(&self.workspace, &request.name, &allow)?;
        tracing::info!(session = %self.id(), rule = %rule.rule, project = ?rule.project, "rule kept for the project");
        self.reload_rules()?;
        Ok(self.pending.answer_approval(req_id, allow.decision()))
    }

    /// Reloads the persistent rules (user-level and project files) of this session.
    pub fn reload_rules(&self) -> Result<(), HostError> {
        let rules = crate::permissions::load_rules_in(&self.workspace, &self.assembled.config)?;
        self.assembled.session.set_rules(rules);
        Ok(())
    }

    /// Answers the waiting question `request_id` (the oldest when `None`); false when no
    /// such question waits.
    pub fn answer_question(&self, request_id: Option<&str>, answer: UserAnswer) -> bool {
        self.pending.answer_question(request_id, answer)
    }

    /// Answers the waiting plan review `request_id` (the oldest when `None`).
    pub fn answer_plan(&self, request_id: Option<&str>, review: PlanReview) -> bool {
        self.pending.answer_plan(request_id, review)
    }

    /// Answers the waiting directory request `request_id` (the oldest when `None`).
    pub fn answer_directory(&self, request_id: Option<&str>, grant: DirectoryGrant) -> bool {
        self.pending.answer_directory(request_id, grant)
    }

    /// The page of this session's history that ends before turn group `before` (`None`: the
    /// newest), at most `limit` turns ([`crate::history`]).
    pub fn history(
        &self,
        before: Option<usize>,
        limit: usize,
    ) -> Result<crate::history::HistoryPage, crate::store::StoreError> {
        self.store().history(&self.id(), before, limit)
    }

    /// The page of this session's history starting at turn group `from`, at most `limit`
    /// turns ([`crate::history::page_from`]).
    pub fn history_from(
        &self,
        from: usize,
        limit: usize,
    ) -> Result<crate::history::HistoryPage, crate::store::StoreError> {
        self.store().history_from(&self.id(), from, limit)
    }

    /// The page of this session's history around chat turn `turn`; `None` when the log
    /// has no such turn ([`crate::history::page_around`]).
    pub fn history_at_turn(
        &self,
        turn: u32,
        limit: usize,
    ) -> Result<Option<crate::history::HistoryPage>, crate::store::StoreError> {
        self.store().history_at_turn(&self.id(), turn, limit)
    }

    /// Searches this session's whole log ([`crate::history_search`]).
    pub fn search(
        &self,
        query: &str,
    ) -> Result<crate::history_search::SessionSearch, crate::store::StoreError> {
        self.store().search_log(&self.id(), query)
    }

    /// Answers the waiting request `request_id` of any kind; false when none waits so.
    pub fn answer(&self, request_id: &str, answer: RequestAnswer) -> bool {
        self.pending.answer(request_id, answer)
    }

    /// How many tool calls a killed process left open (0 while a turn runs: the running turn
    /// owns them).
    pub async fn pending_calls(&self) -> usize {
        let session = &self.assembled.session;
        if session.is_busy() {
            return 0;
        }
        session.pending_calls().await.len()
    }

    /// Waits until no turn runs and none is queued.
    pub async fn idle(&self) {
        self.assembled.session.idle().await;
    }

    /// Renames the session on the user's behalf.
    pub fn rename(&self, name: &str) -> Result<(), StoreError> {
        self.assembled.rename(name)
    }

    /// Names the session once, after a turn, unless its name already has a source (the
    /// user's, or an earlier automatic one): a title from one cheap request to the session's
    /// own provider and model (seed `genSessionNamePrompt`; never another provider, so a
    /// local model's words stay local), else, when that fails or naming is off
    /// (`CAIRN_SESSION_NAMING=off`), its first message ([`crate::store::derive_name`]).
    /// Marked `auto`; a rename by the user meanwhile wins. Returns the name to announce as
    /// `session_named` with source `auto`.
    pub async fn name_automatically(&self) -> Option<String> {
        if !self.saved().name_source.is_empty() {
            return None;
        }
        let session = &self.assembled.session;
        let messages = session.messages().await;
        let derived = crate::store::derive_name(&messages);
        let titled = if crate::naming::enabled(&crate::tooling::process_env) {
            let first = messages.iter().find_map(|m| match m {
                cairn_protocol::Message::User { .. } => Some(m.text()),
                _ => None,
            });
            match first {
                Some(first) => {
                    let model = session.model();
                    let (name, usage) = crate::naming::generate_name(
                        session.llm(),
                        &model,
                        &first,
                        crate::assemble::lang_from_env(),
                    )
                    .await;
                    // The naming request counts against the session's spending cap.
                    if let Some(u) = usage {
                        session.add_spent(&u, &model);
                    }
                    name
                }
                None => None,
            }
        } else {
            None
        };
        let mut named = None;
        self.assembled
            .persister
            .update(|s| {
                if !s.name_source.is_empty() {
                    return;
                }
                if let Some(t) = &titled {
                    s.name = t.clone();
                } else if s.name.trim().is_empty() {
                    s.name = derived.clone();
                }
                if !s.name.trim().is_empty() {
                    s.name_source = "auto".into();
                    named = Some(s.name.clone());
                }
            })
            .ok()?;
        if let Some(name) = &named {
            self.assembled.persister.log_event(&Event::SessionNamed(
                cairn_protocol::SessionNamed {
                    name: name.clone(),
                    source: "auto".into(),
                },
            ));
        }
        named
    }

    /// Saves the session now (history, permissions, todos, turn count).
    pub async fn save(&self) -> Result<(), StoreError> {
        self.assembled.checkpoint().await
    }

    /// Closes the session: denies what is pending, interrupts the running turn (killing its
    /// processes), waits for it to stop, runs its `SessionEnd` hooks, stops its MCP servers
    /// and saves it. A session that
    /// never ran a turn leaves nothing behind.
    pub async fn close(&self) -> Result<(), StoreError> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.pending.close();
        self.interrupt();
        let stop = async {
            self.idle().await;
            self.assembled.session.end().await;
            self.assembled.close_mcp().await;
            if self.saved().turns == 0 {
                return Ok(());
            }
            self.save().await
        };
        let saved = match tokio::time::timeout(CLOSE_WAIT, stop).await {
            Ok(r) => r,
            Err(_) => {
                tracing::warn!(session = %self.id(), "the turn did not stop in time; the last checkpoint is kept");
                Ok(())
            }
        };
        tracing::info!(session = %self.id(), "session closed");
        saved
    }

    /// Whether [`SessionHandle::close`] ran.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}
