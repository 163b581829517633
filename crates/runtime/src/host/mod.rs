//! The session host both faces drive: the CLI maps flags to its calls and events to output,
//! the desktop app maps IPC to its calls and channels to its event streams. One host holds
//! any number of open sessions, each behind a [`SessionHandle`].

pub mod attention;
mod batch;
pub mod board;
pub mod budget;
mod command_turn;
mod dispatch;
mod facts;
mod handle;
mod pending;
pub mod prompt;
pub mod rules_view;
mod submit;
#[cfg(test)]
mod tests;
mod timed;
pub mod view;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use cairn_engine::attachments::TurnAttachments;
use serde::Serialize;
use ts_rs::TS;

pub use batch::{forward, ForwardEnd, BATCH_WINDOW};
/// What a face implements to let `read_file` see an editor's unsaved buffers.
pub use cairn_tools::buffers::BufferSource;
pub use dispatch::{CommandEffect, CommandError, CommandOutcome};
pub use handle::SessionHandle;
pub use handle::{SlottedStream, TurnHold};
pub use pending::{
    Answerer, ApprovalPresenter, Pending, PendingApprover, RequestAnswer, Waiting, CLOSED_REASON,
};
pub use submit::{Prompt, Submission, SubmitError, SubmitNote, Turn};
pub use timed::{default_approval_timeout, TimedApprover};

use crate::assemble::open_session;
use crate::assemble::RunOptions;
use crate::error::RuntimeError;
use crate::store::StoreError;
use crate::turn_slots::TurnSlots;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a turn starts with (made by [`SessionHandle::submit`] only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TurnInput {
    /// A new user message.
    Text(String),
    /// A new user message with images and/or `@path`-mentioned files.
    Attached(String, Box<TurnAttachments>),
    /// Re-run the last turn after a retriable error.
    Retry,
    /// Finish the tool calls left open when the process stopped (approvals asked again).
    Resume,
    /// Compact the history now (`/compact`).
    Compact,
}

/// How a run (a turn and the turns started from steering left over) ended, as a face
/// reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum RunOutcome {
    /// Turns ran: the asked one, then `steeringTurns` started from steering left over.
    Ended {
        /// How the last turn ended.
        status: cairn_protocol::TurnStatus,
        /// Turns the run held.
        turns: u32,
        /// Of those, turns started from leftover steering.
        #[serde(rename = "steeringTurns")]
        steering_turns: u32,
    },
    /// Nothing ran: no retriable error to retry, no open call to resume.
    NotStarted,
    /// The face stopped taking events; the run was cancelled.
    ChannelClosed,
    /// A slash command was carried out without a model turn.
    Command {
        /// What it did.
        outcome: CommandOutcome,
    },
}

impl From<cairn_protocol::RunEnd> for RunOutcome {
    fn from(end: cairn_protocol::RunEnd) -> Self {
        match end {
            cairn_protocol::RunEnd::Ended {
                status,
                turns,
                steering_turns,
            } => RunOutcome::Ended {
                status,
                turns,
                steering_turns,
            },
            cairn_protocol::RunEnd::NotStarted => RunOutcome::NotStarted,
        }
    }
}

/// Why the host refused a call.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The session could not be assembled (the user's configuration to fix).
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// Session files could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The session is closed.
    #[error("session {0} is closed")]
    Closed(String),
    /// Turns cannot run now, for this reason (no key, no model).
    #[error("{0}")]
    Blocked(String),
    /// The session is already open in this process.
    #[error("session {0} is already open")]
    AlreadyOpen(String),
    /// No approval of this tool call waits.
    #[error("no approval of tool call {0} is waiting")]
    NotPending(String),
    /// The approval of this tool call offers no "always allow" (a command with operators).
    #[error("the approval of tool call {0} offers no \"always allow\"")]
    NoAllowance(String),
    /// The allowance could not be kept as a project rule.
    #[error(transparent)]
    ProjectRule(#[from] crate::permissions::ProjectRuleError),
}

/// How to open a session.
pub struct OpenSession {
    /// Workspace, state dir, session to resume, model, mode, sandbox… (see [`RunOptions`]).
    pub options: RunOptions,
    /// The LLM to use; `None` = built from the options, the environment and the keyring.
    pub llm: Option<crate::llm_setup::LlmSetup>,
    /// Who answers the session's requests.
    pub answerer: Answerer,
    /// The user's terminals the agent may read (the desktop's terminal panel) and the
    /// project they are filed under; the session then gets command sessions of its own that
    /// the face can reach ([`SessionHandle::commands`]).
    pub terminals: Option<(Arc<cairn_tools::TerminalManager>, String)>,
}

/// The sessions open in this process.
pub struct Host {
    sessions: Mutex<HashMap<String, Arc<SessionHandle>>>,
    /// Bumped whenever a session's live state changes (a turn starts, waits for a slot or an
    /// answer, ends; a session opens or closes): what a sessions board listens to.
    changes: Arc<tokio::sync::watch::Sender<u64>>,
    /// The machine's turn slots, per state dir.
    slots: Mutex<HashMap<PathBuf, Arc<TurnSlots>>>,
    /// How the last turn of sessions closed in this process ended.
    finished: Mutex<HashMap<String, cairn_protocol::TurnStatus>>,
    /// Spending caps shared by batches of sessions started together, by batch id.
    batches: Mutex<HashMap<String, Arc<cairn_engine::spend::SharedCap>>>,
}

impl Default for Host {
    fn default() -> Self {
        Host {
            sessions: Mutex::default(),
            changes: Arc::new(tokio::sync::watch::channel(0).0),
            slots: Mutex::default(),
            finished: Mutex::default(),
            batches: Mutex::default(),
        }
    }
}

impl Host {
    /// A host with no session open.
    pub fn new() -> Host {
        Host::default()
    }

    /// A signal bumped whenever a session's live state changes (see
    /// [`view::activity`]); never bumped for streamed text.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Bumps [`Host::changes`] (a face changed something its board shows: a rename, a
    /// deletion).
    pub fn touch(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// The turn slots of `state_dir`, shared by every session of this host using it.
    pub fn turn_slots(&self, state_dir: &std::path::Path) -> Arc<TurnSlots> {
        lock(&self.slots)
            .entry(state_dir.to_path_buf())
            .or_insert_with(|| TurnSlots::in_state_dir(state_dir))
            .clone()
    }

    /// How the last turn of session `id` ended, open or closed in this process; `None` when
    /// none ran here.
    pub fn last_status(&self, id: &str) -> Option<cairn_protocol::TurnStatus> {
        match self.get(id) {
            Some(h) => h.last_status(),
            None => lock(&self.finished).get(id).copied(),
        }
    }

    /// Creates or resumes a session (blocking: it reads and writes session files) and keeps
    /// it open until [`Host::close`].
    pub fn open(&self, spec: OpenSession) -> Result<Arc<SessionHandle>, HostError> {
        let OpenSession {
            mut options,
            llm,
            answerer,
            terminals,
        } = spec;
        if let Some(id) = &options.session_id {
            if lock(&self.sessions).contains_key(id) {
                return Err(HostError::AlreadyOpen(id.clone()));
            }
        }
        let pending = Arc::new(Pending::with_changes(self.changes.clone()));
        let approver: Arc<dyn cairn_engine::Approver> = match answerer {
            Answerer::Custom(a) => a,
            Answerer::Pending { presenter, fixed } => {
                // Dialogs show paths relative to the workspace the caller named.
                let given = options.workspace.clone().unwrap_or_default();
                let workspace = crate::assemble::resolve_workspace(&given).unwrap_or(given);
                Arc::new(PendingApprover::new(
                    pending.clone(),
                    presenter,
                    fixed,
                    workspace,
                ))
            }
        };
        // The deadline of requests: the face's, else the user's setting (seed §19).
        let timeout = options
            .approval_timeout
            .or_else(|| timed::default_approval_timeout(&options.config))
            .filter(|t| !t.is_zero());
        let approver: Arc<dyn cairn_engine::Approver> = match timeout {
            Some(t) => Arc::new(TimedApprover::new(approver, t, None)),
            None => approver,
        };
        let (client, provider, blocked) = match llm {
            Some(b) => {
                if !b.model.is_empty() {
                    options.model = Some(b.model);
                }
                options.provider = Some(b.provider.clone());
                (
                    Some(b.client),
                    Some(b.provider),
                    b.blocked.map(|r| r.to_string()),
                )
            }
            None => (None, None, None),
        };
        let assembled = open_session(options, client, approver)?;
        let saved = assembled.persister.saved();
        let workspace = PathBuf::from(&saved.workspace);
        let provider = provider.unwrap_or(saved.provider);
        let commands = terminals
            .map(|(manager, project)| attach_terminal_tools(&assembled.session, manager, project));
        let live = handle::Live {
            changes: self.changes.clone(),
            slots: self.turn_slots(&assembled.state_dir),
        };
        let handle = Arc::new(SessionHandle::new(
            assembled, pending, commands, workspace, provider, blocked, live,
        ));
        tracing::info!(session = %handle.id(), workspace = %handle.workspace().display(), "session opened");
        lock(&self.sessions).insert(handle.id(), handle.clone());
        self.touch();
        Ok(handle)
    }

    /// The open session `id`.
    pub fn get(&self, id: &str) -> Option<Arc<SessionHandle>> {
        lock(&self.sessions).get(id).cloned()
    }

    /// Every open session.
    pub fn sessions(&self) -> Vec<Arc<SessionHandle>> {
        lock(&self.sessions).values().cloned().collect()
    }

    /// Reloads the persistent rules of every open session (after the user's rules file
    /// changed: a project rule added, a rule revoked), so they apply to the next call. A
    /// session whose rules cannot be read keeps the ones it has (logged).
    pub fn reload_rules(&self) {
        self.reload_rules_except(None);
    }

    fn reload_rules_except(&self, done: Option<&str>) {
        for h in self
            .sessions()
            .iter()
            .filter(|h| Some(h.id().as_str()) != done)
        {
            if let Err(e) = h.reload_rules() {
                tracing::warn!(session = %h.id(), error = %e, "permission rules not reloaded");
            }
        }
    }

    /// [`SessionHandle::allow_in_project`] for the approval `req_id` of `session` (which
    /// reloads its own rules), then the rule reaches every other open session.
    pub fn allow_in_project(
        &self,
        session: &SessionHandle,
        req_id: &str,
    ) -> Result<bool, HostError> {
        let answered = session.allow_in_project(req_id)?;
        self.reload_rules_except(Some(&session.id()));
        Ok(answered)
    }

    /// Closes session `id` (see [`SessionHandle::close`]); false when it was not open.
    pub async fn close(&self, id: &str) -> Result<bool, StoreError> {
        let handle = lock(&self.sessions).remove(id);
        match handle {
            Some(h) => {
                let closed = h.close().await;
                self.closed(&h);
                closed.map(|_| true)
            }
            None => Ok(false),
        }
    }

    /// Closes every open session.
    pub async fn shutdown(&self) {
        let all: Vec<_> = lock(&self.sessions).drain().map(|(_, h)| h).collect();
        for h in all {
            if let Err(e) = h.close().await {
                tracing::warn!(session = %h.id(), error = %e, "could not save the session on close");
            }
            self.closed(&h);
        }
    }

    fn closed(&self, h: &SessionHandle) {
        if let Some(status) = h.last_status() {
            lock(&self.finished).insert(h.id(), status);
        }
        self.touch();
    }
}

/// Gives a session the terminal tools over `terminals`' sessions of `project`, and
/// command-session tools whose sessions the host can reach (replacing the built-in ones of
/// the same name); returns those command sessions.
fn attach_terminal_tools(
    session: &cairn_engine::Session,
    terminals: Arc<cairn_tools::TerminalManager>,
    project: String,
) -> Arc<cairn_tools::CommandSessions> {
    let commands = Arc::new(cairn_tools::CommandSessions::new());
    session.with_tools(|reg| {
        reg.register(Arc::new(cairn_tools::ExecCommand::new(commands.clone())));
        reg.register(Arc::new(cairn_tools::InputCommand::new(commands.clone())));
        for tool in cairn_tools::terminal_tools(terminals, project) {
            reg.register(tool);
        }
    });
    commands
}
