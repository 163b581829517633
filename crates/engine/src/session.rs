//! A session: one conversation with its history, tools, permissions and approver.
//! Turns of one session never overlap; `run` queues behind a running turn.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, RwLock};

use cairn_protocol::{Event, Message, Mode};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::approval::{Approver, FixedApprover};
use crate::config::EngineConfig;
use crate::hook::EngineHook;
use crate::llm::LlmClient;
use crate::locks::{lock, read, write};
use crate::permission::{PermissionEngine, PermissionState};
use crate::registry::ToolRegistry;
use crate::state::{save_state, Inner, TurnState};
use crate::turn::TurnKind;

/// Capacity of a turn's event channel; a slow consumer applies back-pressure to the loop.
const EVENT_CHANNEL_CAPACITY: usize = 1024;

pub use crate::stream::EventStream;

/// Builds a [`Session`].
pub struct SessionBuilder {
    config: EngineConfig,
    llm: Arc<dyn LlmClient>,
    registry: ToolRegistry,
    approver: Arc<dyn Approver>,
    approver_set: bool,
    hooks: Vec<Arc<dyn EngineHook>>,
    gate: Option<Arc<dyn crate::gate::Gate>>,
    messages: Vec<Message>,
    permission_state: Option<PermissionState>,
    turns: u32,
    todos: Vec<cairn_protocol::TodoItem>,
    checkpointer: Option<Arc<dyn crate::checkpoint::Checkpointer>>,
    rules: Option<(cairn_policy::RuleSet, crate::permission::ShellPolicy, bool)>,
    exec: crate::execenv::ExecEnvironment,
    pricing: Option<Arc<dyn crate::llm::Pricing>>,
    resume_pending: Option<std::collections::BTreeSet<String>>,
    turn_marks: Vec<crate::rewind::TurnMark>,
}

impl SessionBuilder {
    /// Keeps tool calls left open at the end of the restored history for [`Session::resume`]
    /// instead of closing them as `interrupted`; `started` names the calls that had begun
    /// running (from the event log): those are closed, never run twice.
    pub fn resume_pending(mut self, started: std::collections::BTreeSet<String>) -> Self {
        self.resume_pending = Some(started);
        self
    }

    /// Restores where the history stood at the end of each turn (saved with the history).
    pub fn turn_marks(mut self, marks: Vec<crate::rewind::TurnMark>) -> Self {
        self.turn_marks = marks;
        self
    }

    /// Sets the tool registry.
    pub fn tools(mut self, registry: ToolRegistry) -> Self {
        self.registry = registry;
        self
    }

    /// Sets the approver (without one, `EngineConfig::default_approval` applies).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self.approver_set = true;
        self
    }

    /// Sets persistent permission rules, the shell policy and whether a sandbox is enforced.
    pub fn permission_rules(
        mut self,
        rules: cairn_policy::RuleSet,
        shell_policy: crate::permission::ShellPolicy,
        sandbox_enforced: bool,
    ) -> Self {
        self.rules = Some((rules, shell_policy, sandbox_enforced));
        self
    }

    /// The user's hooks (gates), run at defined points of each turn.
    pub fn gate(mut self, gate: Arc<dyn crate::gate::Gate>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Adds a hook.
    pub fn hook(mut self, hook: Arc<dyn EngineHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Restores history (a system message is inserted first when missing).
    pub fn messages(mut self, messages: Vec<Message>) -> Self {
        self.messages = messages;
        self
    }

    /// Restores permission mode and session allowlists.
    pub fn permission_state(mut self, state: PermissionState) -> Self {
        self.permission_state = Some(state);
        self
    }

    /// Sets the number of turns already run (when restoring).
    pub fn turns(mut self, turns: u32) -> Self {
        self.turns = turns;
        self
    }

    /// Restores the todo list.
    pub fn todos(mut self, todos: Vec<cairn_protocol::TodoItem>) -> Self {
        self.todos = todos;
        self
    }

    /// Sets the checkpointer that snapshots the workspace around side effects.
    pub fn checkpointer(mut self, c: Arc<dyn crate::checkpoint::Checkpointer>) -> Self {
        self.checkpointer = Some(c);
        self
    }

    /// Sets how token usage is priced (cost on `assistant_message` and `turn_end`).
    pub fn pricing(mut self, p: Arc<dyn crate::llm::Pricing>) -> Self {
        self.pricing = Some(p);
        self
    }

    /// Sets the sandbox wrapper and vault for commands.
    pub fn exec_environment(mut self, exec: crate::execenv::ExecEnvironment) -> Self {
        self.exec = exec;
        self
    }

    /// Gives a child session this session's persistent rules and shell policy only (its
    /// own mode and allowances stay), so a deny rule binds the explore subagent's reads too;
    /// the session's hooks gate its tool calls too.
    pub(crate) fn inherit_rules_from(self, host: &crate::host::ToolHost) -> Self {
        let mut builder = self;
        let Some(s) = host.shared() else {
            return builder;
        };
        if let Some(g) = &s.gate {
            builder = builder.gate(Arc::new(crate::gate::ToolGates(g.clone())));
        }
        let (rules, policy, enforced) = {
            let p = lock(&s.permissions);
            let (policy, enforced) = p.shell_policy();
            (p.rules().clone(), policy, enforced)
        };
        builder.permission_rules(rules, policy, enforced)
    }

    /// Gives a child session this session's sandbox, vault, persistent rules, shell policy
    /// and permission state (mode, session allowances, granted folders); the session's hooks
    /// gate its tool calls too.
    pub(crate) fn inherit_from(self, host: &crate::host::ToolHost) -> Self {
        let mut builder = self;
        let Some(s) = host.shared() else {
            return builder;
        };
        if let Some(g) = &s.gate {
            builder = builder.gate(Arc::new(crate::gate::ToolGates(g.clone())));
        }
        let (rules, policy, enforced, state) = {
            let p = lock(&s.permissions);
            let (policy, enforced) = p.shell_policy();
            (p.rules().clone(), policy, enforced, p.state().clone())
        };
        builder
            .exec_environment(s.exec.clone())
            .permission_rules(rules, policy, enforced)
            .permission_state(state)
    }

    /// Builds the session.
    pub fn build(self) -> Session {
        let mut permissions = PermissionEngine::new(
            self.config.workspace.clone(),
            self.config.mode,
            self.config.allowed_commands.clone(),
        );
        if let Some(state) = self.permission_state {
            permissions.restore(state);
        }
        permissions.add_readable_dir(&self.config.budget.dir_for(&self.config.state_dir));
        // Saved attachments: the user message names their path, so a tool can open them.
        permissions.add_readable_dir(&self.config.state_dir.join("attachments"));
        for dir in &self.config.private_dirs {
            permissions.add_private_dir(dir);
        }
        if let Some((rules, policy, enforced)) = self.rules {
            permissions.set_rules(rules);
            permissions.set_shell_policy(policy, enforced);
        }
        let mut messages = self.messages;
        let tail = match self.resume_pending {
            Some(_) => crate::resume::take_pending(&mut messages),
            None => None,
        };
        let repaired = crate::repair::repair_history(&mut messages);
        let mut turn_marks = self.turn_marks;
        if repaired > 0 {
            // Repair inserts results: the recorded turn ends no longer line up.
            turn_marks.clear();
            tracing::warn!(
                repaired,
                "restored history repaired (unfinished tool calls closed)"
            );
        }
        if !matches!(messages.first(), Some(Message::System { .. })) {
            messages.insert(0, Message::system(self.config.instructions.clone()));
            crate::rewind::shift(&mut turn_marks, 1);
        }
        let pending = tail.map(|t| t.restore(&mut messages)).unwrap_or_default();
        let pending_started = self.resume_pending.unwrap_or_default();
        self.exec.add_secrets(self.llm.secrets());
        Session {
            inner: Arc::new(Inner {
                config: RwLock::new(self.config),
                llm: RwLock::new(self.llm),
                registry: RwLock::new(self.registry),
                permissions: Arc::new(Mutex::new(permissions)),
                todos: Arc::new(Mutex::new(self.todos)),
                checkpointer: self.checkpointer,
                exec: self.exec,
                pricing: self.pricing,
                approver: RwLock::new(self.approver),
                approver_set: std::sync::atomic::AtomicBool::new(self.approver_set),
                hooks: self.hooks,
                gate: RwLock::new(self.gate),
                started: std::sync::atomic::AtomicBool::new(false),
                state: tokio::sync::Mutex::new(TurnState {
                    messages,
                    turns: self.turns,
                    retry_pending: false,
                    last_input: String::new(),
                    pending,
                    pending_started,
                    inline: Vec::new(),
                    turn_marks,
                    stop_continues: 0,
                    spend_warned: false,
                }),
                steering: Mutex::new(VecDeque::new()),
                active: Mutex::new(Vec::new()),
                idle: tokio::sync::watch::Sender::new(true),
                next_ticket: std::sync::atomic::AtomicU64::new(1),
                compaction_state: Default::default(),
                announcements: Default::default(),
                spent_live: Default::default(),
                shared_cap: Default::default(),
                spend_rewarn: Default::default(),
                spent_outside: Default::default(),
            }),
        }
    }
}

/// One conversation: cheap to clone, all clones share state.
#[derive(Clone)]
pub struct Session {
    pub(crate) inner: Arc<Inner>,
}

impl Session {
    /// Starts building a session.
    pub fn builder(config: EngineConfig, llm: Arc<dyn LlmClient>) -> SessionBuilder {
        SessionBuilder {
            config,
            llm,
            registry: ToolRegistry::new(),
            approver: Arc::new(FixedApprover(cairn_protocol::ApprovalDecision::Deny)),
            approver_set: false,
            hooks: Vec::new(),
            gate: None,
            messages: Vec::new(),
            permission_state: None,
            turns: 0,
            todos: Vec::new(),
            checkpointer: None,
            rules: None,
            exec: crate::execenv::ExecEnvironment::default().without_credentials(),
            pricing: None,
            resume_pending: None,
            turn_marks: Vec::new(),
        }
    }

    /// Runs the user's `SessionEnd` hooks when the face closes the session: once, and only
    /// after `SessionStart` ran in this process.
    pub async fn end(&self) {
        if !self
            .inner
            .started
            .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let gate = read(&self.inner.gate).clone();
        if let Some(g) = gate
            .as_ref()
            .filter(|g| g.wants(crate::gate::GatePoint::SessionEnd))
        {
            let _ = g
                .check(&crate::gate::GateInput::at(
                    crate::gate::GatePoint::SessionEnd,
                ))
                .await;
        }
    }

    /// Compacts the history now (`/compact`), as a turn of its own: `turn_start`, the
    /// `compacting` / `compacted` events, `turn_end` (not started when there is nothing).
    pub fn compact(&self) -> EventStream {
        self.spawn_turn(TurnKind::Compact)
    }

    /// Session id.
    pub fn id(&self) -> String {
        read(&self.inner.config).session_id.clone()
    }

    /// Runs one turn with this user input; must be called inside a tokio runtime. Steering
    /// still queued when a turn ends (not interrupted) runs next in the same stream, as a turn
    /// whose `turn_start` says `source: steering`; [`EventStream::end`] tells how it all ended.
    pub fn run(&self, input: impl Into<String>) -> EventStream {
        self.spawn_turn(TurnKind::Input(input.into()))
    }

    /// Runs one turn whose input carries attachments (see [`crate::attachments`]): history
    /// keeps a reference line per attachment; image data is sent with this turn only.
    pub fn run_with_attachments(
        &self,
        input: impl Into<String>,
        attachments: crate::attachments::TurnAttachments,
    ) -> EventStream {
        self.spawn_turn(TurnKind::Attach(input.into(), Box::new(attachments)))
    }

    /// Runs one turn of user input (with its attachments, if any) with what a command file
    /// asked of it ([`crate::turn_options::TurnOptions`]: shell lines run first and inlined, grants for
    /// this turn only, the model it runs on); the turns after it run without them.
    pub fn run_with_options(
        &self,
        input: impl Into<String>,
        attachments: Option<crate::attachments::TurnAttachments>,
        options: crate::turn_options::TurnOptions,
    ) -> EventStream {
        let kind = match attachments {
            Some(a) => TurnKind::Attach(input.into(), Box::new(a)),
            None => TurnKind::Input(input.into()),
        };
        self.spawn_turn_with(kind, options)
    }

    /// Re-runs the last turn if it ended with a retriable error; otherwise an empty stream.
    pub fn retry(&self) -> EventStream {
        match self.inner.state.try_lock() {
            Ok(state) if !state.retry_pending => EventStream::empty(),
            _ => self.spawn_turn(TurnKind::Retry),
        }
    }

    /// Finishes the tool calls left open in a restored history (seed §12.4): approvals are
    /// asked again, then the turn continues. Without open calls: an empty stream, no events.
    pub fn resume(&self) -> EventStream {
        match self.inner.state.try_lock() {
            Ok(state) if state.pending.is_empty() => EventStream::empty(),
            _ => self.spawn_turn(TurnKind::Resume),
        }
    }

    /// Tool calls waiting for [`Session::resume`] (waits for a running turn to finish).
    pub async fn pending_calls(&self) -> Vec<cairn_protocol::ToolCall> {
        self.inner.state.lock().await.pending.clone()
    }

    fn spawn_turn(&self, kind: TurnKind) -> EventStream {
        self.spawn_turn_with(kind, crate::turn_options::TurnOptions::default())
    }

    fn spawn_turn_with(
        &self,
        kind: TurnKind,
        options: crate::turn_options::TurnOptions,
    ) -> EventStream {
        let (tx, rx) = mpsc::channel(EVENT_CHANNEL_CAPACITY);
        let (end_tx, end_rx) = tokio::sync::oneshot::channel();
        let cancel = CancellationToken::new();
        let ticket = self
            .inner
            .next_ticket
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        add_ticket(&self.inner, ticket, cancel.clone());
        let inner = self.inner.clone();
        // A consumer that goes away cancels the turn, even while nothing is being sent.
        let done = CancellationToken::new();
        {
            let (tx, cancel, done) = (tx.clone(), cancel.clone(), done.clone());
            tokio::spawn(async move {
                tokio::select! {
                    _ = tx.closed() => cancel.cancel(),
                    _ = done.cancelled() => {}
                }
            });
        }
        tokio::spawn(async move {
            let _done = done.drop_guard();
            // Held until the ticket is gone: the stream ends only once the session let go.
            let keep_open = tx.clone();
            let end = crate::run::drive(&inner, kind, options, tx, cancel).await;
            remove_ticket(&inner, ticket);
            drop(keep_open);
            let _ = end_tx.send(end);
        });
        EventStream::new(rx, end_rx)
    }

    /// Resolves when no turn runs and none is queued (at once when the session is idle).
    pub async fn idle(&self) {
        let mut rx = self.inner.idle.subscribe();
        // The sender lives in the session itself, so waiting cannot fail.
        let _ = rx.wait_for(|idle| *idle).await;
    }

    /// Interrupts the running turn (and any queued one): aborts the LLM stream and kills tools.
    pub fn interrupt(&self) {
        for (_, t) in lock(&self.inner.active).iter() {
            t.cancel();
        }
    }

    /// Whether a turn is running or queued.
    pub fn is_busy(&self) -> bool {
        !lock(&self.inner.active).is_empty()
    }

    /// Queues an instruction to inject between iterations; one left when the turn ends starts
    /// a steering turn in the same run (after an interrupted turn it waits for the next one).
    pub fn queue_steering(&self, text: impl Into<String>) {
        lock(&self.inner.steering).push_back(crate::state::Steering::text(text));
    }

    /// Queues an instruction with images and mentioned files: they reach the model with it,
    /// like a turn's own (images with this turn's requests only).
    pub fn queue_steering_with(
        &self,
        text: impl Into<String>,
        attached: crate::attachments::TurnAttachments,
    ) {
        lock(&self.inner.steering).push_back(crate::state::Steering {
            text: text.into(),
            attached: Some(Box::new(attached)),
        });
    }

    /// Withdraws a queued instruction; false when it was already injected.
    pub fn remove_steering(&self, text: &str) -> bool {
        let mut q = lock(&self.inner.steering);
        match q.iter().position(|t| t.text == text) {
            Some(i) => {
                q.remove(i);
                true
            }
            None => false,
        }
    }

    /// Instructions still waiting to be injected.
    pub fn pending_steering(&self) -> Vec<String> {
        lock(&self.inner.steering)
            .iter()
            .map(|s| s.text.clone())
            .collect()
    }

    /// A copy of the history (waits for a running turn to finish).
    pub async fn messages(&self) -> Vec<Message> {
        self.inner.state.lock().await.messages.clone()
    }

    /// Where the history stood at the end of each turn (waits for a running turn to finish).
    pub async fn turn_marks(&self) -> Vec<crate::rewind::TurnMark> {
        self.inner.state.lock().await.turn_marks.clone()
    }

    /// Rewinds the conversation to the state right after `turn`: later messages leave the
    /// history the model sees (hooks archive them first; a hook error cancels the rewind),
    /// open tool calls and a pending retry are dropped, and the state is checkpointed. Turn
    /// numbers are not reused. Refused while a turn runs or is queued.
    pub fn rewind_to_turn(
        &self,
        turn: u32,
    ) -> Result<crate::rewind::Rewound, crate::rewind::RewindError> {
        use crate::rewind::{RewindError, RewindSnapshot, Rewound};
        if self.is_busy() {
            return Err(RewindError::Busy);
        }
        let mut state = self.inner.state.try_lock().map_err(|_| RewindError::Busy)?;
        let (cut, removed_turns) =
            crate::rewind::plan(&state.turn_marks, &state.messages, state.turns, turn)?;
        if cut == state.messages.len() {
            // Already right after that turn: nothing to archive or save.
            return Ok(Rewound {
                turn,
                removed: Vec::new(),
                removed_turns,
            });
        }
        crate::hook::notify_rewind(
            &self.inner.hooks,
            &RewindSnapshot {
                turn,
                removed: &state.messages[cut..],
                removed_turns: &removed_turns,
            },
        )
        .map_err(RewindError::Hook)?;
        let removed = state.messages.split_off(cut);
        state.turn_marks.retain(|m| m.turn <= turn);
        state.pending.clear();
        state.pending_started.clear();
        state.retry_pending = false;
        state.inline.clear();
        save_state(&self.inner, &state);
        Ok(Rewound {
            turn,
            removed,
            removed_turns,
        })
    }

    /// Turns run so far.
    pub async fn turns(&self) -> u32 {
        self.inner.state.lock().await.turns
    }

    /// Current permission mode.
    pub fn mode(&self) -> Mode {
        lock(&self.inner.permissions).mode()
    }

    /// Changes the permission mode.
    pub fn set_mode(&self, mode: Mode) {
        lock(&self.inner.permissions).set_mode(mode);
    }

    /// Replaces the user's hooks from the next turn on (a project's hooks trusted or changed
    /// while the session is open).
    pub fn set_gate(&self, gate: Option<Arc<dyn crate::gate::Gate>>) {
        *write(&self.inner.gate) = gate;
    }

    /// The wrapper that confines this session's commands (its hooks run in it too).
    pub fn command_wrapper(&self) -> Option<Arc<dyn crate::execenv::CommandWrapper>> {
        self.inner.exec.wrapper.clone()
    }

    /// The OS sandbox that really wraps this session's commands (its description), or `None`
    /// when commands run unconfined.
    pub fn sandbox(&self) -> Option<String> {
        self.inner.exec.wrapper.as_ref().map(|w| w.describe())
    }

    /// What protects this session's commands, layer by layer (`turn_start.data.sandbox`).
    pub fn sandbox_report(&self) -> Option<cairn_protocol::SandboxReport> {
        self.inner.exec.sandbox.clone()
    }

    /// Permission state to persist.
    pub fn permission_state(&self) -> PermissionState {
        lock(&self.inner.permissions).state().clone()
    }

    /// The agent's current todo list.
    pub fn todos(&self) -> Vec<cairn_protocol::TodoItem> {
        lock(&self.inner.todos).clone()
    }

    /// Grants access to a directory outside the workspace (e.g. from the UI).
    pub fn grant_directory(&self, path: &str, writable: bool) {
        lock(&self.inner.permissions).grant_directory(path, writable);
    }

    /// Revokes a session tool allowance; true when it existed.
    pub fn revoke_tool(&self, name: &str) -> bool {
        lock(&self.inner.permissions).revoke_tool(name)
    }

    /// Changes the model for the next request.
    pub fn set_model(&self, model: impl Into<String>) {
        write(&self.inner.config).model = model.into();
    }

    /// The context window and compaction thresholds in force.
    pub fn compaction(&self) -> crate::compaction::CompactionConfig {
        read(&self.inner.config).compaction.clone()
    }

    /// Says `event` at the start of the next turn, right after its `turn_start` (its
    /// `taskId` is the turn's): what changed between turns, e.g. a model switch.
    pub fn announce(&self, event: Event) {
        lock(&self.inner.announcements).push(event);
    }

    /// The spending cap in force (`None`: no cap).
    pub fn spend_limit(&self) -> Option<crate::spend::SpendLimit> {
        read(&self.inner.config).spend_limit
    }

    /// Sets (raises, lowers, removes) the spending cap from the next request on; the 80 %
    /// warning may come again for the new cap.
    pub fn set_spend_limit(&self, limit: Option<crate::spend::SpendLimit>) {
        write(&self.inner.config).spend_limit = limit;
        self.inner
            .spend_rewarn
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Counts a request made for the session outside its turns (naming it) against its
    /// spending cap, priced by `model`.
    pub fn add_spent(&self, usage: &cairn_protocol::TokenUsage, model: &str) {
        let cost = self
            .inner
            .pricing
            .as_ref()
            .and_then(|p| p.cost_usd(model, usage));
        match lock(&self.inner.spent_live).as_mut() {
            Some(live) => live.add(usage, cost),
            // Not counted yet: the first turn's count takes it in.
            None => lock(&self.inner.spent_outside).push((*usage, cost)),
        }
    }

    /// Counts this session against `cap`, a cap it shares with other sessions (a batch),
    /// besides its own.
    pub fn share_cap(&self, cap: Arc<crate::spend::SharedCap>) {
        cap.join(self.inner.spent_live.clone());
        *lock(&self.inner.shared_cap) = Some(cap);
        self.inner
            .spend_rewarn
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The cap this session shares with others, if any.
    pub fn shared_cap(&self) -> Option<Arc<crate::spend::SharedCap>> {
        lock(&self.inner.shared_cap).clone()
    }

    /// What the session spent so far, as its turns count it (`None` before a turn of this
    /// process counted).
    pub fn spent(&self) -> Option<crate::spend::Spent> {
        *lock(&self.inner.spent_live)
    }

    /// The session's own folder (saved tool results, attachments, what the agent read).
    pub fn state_dir(&self) -> std::path::PathBuf {
        read(&self.inner.config).state_dir.clone()
    }

    /// What compaction did in this session so far (counts, last pass's tokens, breaker).
    pub fn compaction_state(&self) -> cairn_protocol::CompactionState {
        lock(&self.inner.compaction_state).clone()
    }

    /// Sets the context window and compaction thresholds (a model switch).
    pub fn set_compaction(&self, c: crate::compaction::CompactionConfig) {
        write(&self.inner.config).compaction = c;
    }

    /// Replaces the system prompt for the next turn (switching roles): the first history
    /// message and the configured instructions. Waits for a running turn to finish.
    pub async fn set_system_prompt(&self, text: impl Into<String>) {
        let text = text.into();
        let mut state = self.inner.state.lock().await;
        match state.messages.first_mut() {
            Some(first @ Message::System { .. }) => *first = Message::system(text.clone()),
            _ => {
                state.messages.insert(0, Message::system(text.clone()));
                crate::rewind::shift(&mut state.turn_marks, 1);
            }
        }
        write(&self.inner.config).instructions = text;
    }

    /// The current system prompt.
    pub fn system_prompt(&self) -> String {
        read(&self.inner.config).instructions.clone()
    }

    /// Current model id.
    pub fn model(&self) -> String {
        read(&self.inner.config).model.clone()
    }

    /// The LLM client the next request goes to.
    pub fn llm(&self) -> Arc<dyn LlmClient> {
        read(&self.inner.llm).clone()
    }

    /// Replaces the LLM client (e.g. after the user changed provider or key).
    pub fn set_llm(&self, llm: Arc<dyn LlmClient>) {
        self.inner.exec.add_secrets(llm.secrets());
        *write(&self.inner.llm) = llm;
    }

    /// Replaces the approver.
    pub fn set_approver(&self, approver: Arc<dyn Approver>) {
        *write(&self.inner.approver) = approver;
        self.inner
            .approver_set
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Revokes a session command allowance (by program name); true when it existed.
    pub fn revoke_command(&self, program: &str) -> bool {
        lock(&self.inner.permissions).revoke_command(program)
    }

    /// The deny path rules that bind what `tool` reads (`read_file` for `@path` mentions).
    pub fn read_denials(&self, tool: &str) -> cairn_policy::ReadDenials {
        lock(&self.inner.permissions).read_denials(tool)
    }

    /// Replaces the persistent rules (the user's rules file changed); the next call is
    /// decided by them.
    pub fn set_rules(&self, rules: cairn_policy::RuleSet) {
        lock(&self.inner.permissions).set_rules(rules);
    }

    /// Sets the shell policy from the next call on (whether the OS sandbox wraps commands
    /// is unchanged).
    pub fn set_shell_policy(&self, policy: crate::permission::ShellPolicy) {
        let mut p = lock(&self.inner.permissions);
        let (_, enforced) = p.shell_policy();
        p.set_shell_policy(policy, enforced);
    }

    /// The shell policy in force.
    pub fn shell_policy(&self) -> crate::permission::ShellPolicy {
        lock(&self.inner.permissions).shell_policy().0
    }

    /// Persistent rules in force, loaded (with the project a rule is limited to).
    pub fn persistent_rules(&self) -> Vec<cairn_policy::Rule> {
        lock(&self.inner.permissions).rules().rules().to_vec()
    }

    /// Persistent rules in force, as (decision, rule text, source).
    pub fn rules(&self) -> Vec<(cairn_policy::RuleDecision, String, String)> {
        lock(&self.inner.permissions)
            .rules()
            .rules()
            .iter()
            .map(|r| (r.decision, r.text.clone(), r.source.clone()))
            .collect()
    }

    /// Edits the tool registry (register, remove, enable, disable).
    pub fn with_tools<R>(&self, f: impl FnOnce(&mut ToolRegistry) -> R) -> R {
        f(&mut write(&self.inner.registry))
    }
}

/// Registers a queued or running turn: the session is busy.
fn add_ticket(inner: &Inner, ticket: u64, cancel: CancellationToken) {
    let mut active = lock(&inner.active);
    active.push((ticket, cancel));
    inner.idle.send_replace(false);
}

/// Forgets a turn that ended (or never started); idle once none is left.
fn remove_ticket(inner: &Inner, ticket: u64) {
    let mut active = lock(&inner.active);
    active.retain(|(t, _)| *t != ticket);
    if active.is_empty() {
        inner.idle.send_replace(true);
    }
}
