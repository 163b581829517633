//! The session runtime of one window: the engine session, its pending approvals and runs.
//! Turns of one session never overlap (the engine queues a run behind the running turn);
//! closing the window interrupts the turn, denies what is pending and saves the session.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cairn_protocol::Event;
use cairn_runtime::{Assembled, RunOptions, SessionStore};

use crate::approver::{DesktopApprover, Pending};
use crate::dialogs::NativeDialogs;
use crate::forward::{forward, ForwardEnd, BATCH_WINDOW};
use crate::llm::{model_view, LlmSetup};
use crate::types::{ApprovalHost, RunOutcome, SessionView};

/// Longest wait for a running turn to stop when the window closes.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// What a run starts with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnInput {
    /// A new user message.
    Text(String),
    /// A new user message with pasted images and/or `@path`-mentioned files.
    Attached(String, Box<cairn_engine::attachments::TurnAttachments>),
    /// Re-run the last turn after a retriable error.
    Retry,
    /// Finish the tool calls left open when the process stopped (approvals asked again).
    Resume,
}

/// Where a session comes from.
pub struct OpenRequest {
    /// The state dir shared with the CLI.
    pub state_dir: PathBuf,
    /// The workspace root.
    pub workspace: PathBuf,
    /// Resume this session; `None` = a new one.
    pub session_id: Option<String>,
    /// The LLM client and its model.
    pub llm: LlmSetup,
    /// Who answers approvals.
    pub host: ApprovalHost,
    /// Native dialogs.
    pub dialogs: Arc<dyn NativeDialogs>,
    /// The user's terminals (the agent reads this workspace's ones).
    pub terminals: Arc<cairn_tools::TerminalManager>,
}

/// One open session.
pub struct SessionRuntime {
    assembled: Assembled,
    commands: Arc<cairn_tools::CommandSessions>,
    pending: Arc<Pending>,
    workspace: PathBuf,
    provider: Mutex<String>,
    blocked: Mutex<Option<String>>,
    closed: AtomicBool,
}

/// Gives a session the terminal tools over this workspace's terminals, and command-session
/// tools whose sessions the host can reach (replacing the built-in ones of the same name);
/// returns those command sessions.
fn attach_terminal_tools(
    session: &cairn_engine::Session,
    workspace: &Path,
    terminals: Arc<cairn_tools::TerminalManager>,
) -> Arc<cairn_tools::CommandSessions> {
    let commands = Arc::new(cairn_tools::CommandSessions::new());
    let project = crate::terminals::project_id(workspace);
    session.with_tools(|reg| {
        reg.register(Arc::new(cairn_tools::ExecCommand::new(commands.clone())));
        reg.register(Arc::new(cairn_tools::InputCommand::new(commands.clone())));
        for tool in cairn_tools::terminal_tools(terminals, project) {
            reg.register(tool);
        }
    });
    commands
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl SessionRuntime {
    /// Opens (creates or resumes) a session.
    pub fn open(req: OpenRequest) -> Result<Arc<SessionRuntime>, String> {
        let pending = Arc::new(Pending::new());
        let approver = Arc::new(DesktopApprover::new(
            pending.clone(),
            req.dialogs,
            req.host,
            req.workspace.clone(),
        ));
        let opts = RunOptions {
            workspace: Some(req.workspace.clone()),
            state_dir: Some(req.state_dir),
            session_id: req.session_id,
            model: Some(req.llm.model.clone()).filter(|m| !m.is_empty()),
            provider: Some(req.llm.provider.clone()),
            ..RunOptions::default()
        };
        let assembled = cairn_runtime::open_session(opts, Some(req.llm.client), approver)
            .map_err(|e| e.to_string())?;
        tracing::info!(session = %assembled.session.id(), workspace = %req.workspace.display(), "session opened");
        let commands = attach_terminal_tools(&assembled.session, &req.workspace, req.terminals);
        Ok(Arc::new(SessionRuntime {
            assembled,
            commands,
            pending,
            workspace: req.workspace,
            provider: Mutex::new(req.llm.provider),
            blocked: Mutex::new(req.llm.blocked),
            closed: AtomicBool::new(false),
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

    /// The engine session.
    pub fn session(&self) -> &cairn_engine::Session {
        &self.assembled.session
    }

    /// The agent's command sessions (`exec_command`), which the terminal panel can take over.
    pub fn commands(&self) -> &Arc<cairn_tools::CommandSessions> {
        &self.commands
    }

    /// Where this session's checkpoints live (for the timeline).
    pub fn timeline_source(&self) -> crate::timeline::TimelineSource {
        crate::timeline::TimelineSource {
            state_dir: self.assembled.state_dir.clone(),
            workspace: self.workspace.clone(),
            session_id: self.id(),
        }
    }

    /// Requests waiting for the user.
    pub fn pending(&self) -> &Arc<Pending> {
        &self.pending
    }

    /// The session store.
    pub fn store(&self) -> &SessionStore {
        &self.assembled.store
    }

    /// The last saved checkpoint (never waits for a running turn).
    pub fn saved(&self) -> cairn_runtime::SavedSession {
        self.assembled.persister.saved()
    }

    /// State of the session's MCP servers (`None` when none is configured).
    pub fn mcp_status(&self) -> Option<Vec<crate::types::McpServerView>> {
        let manager = self.assembled.mcp.manager()?;
        let views = manager
            .status()
            .iter()
            .filter_map(|info| serde_json::to_value(info).ok())
            .map(|v| {
                let text = |k: &str| v[k].as_str().unwrap_or_default().to_string();
                let st = &v["status"];
                let state = st["state"].as_str().unwrap_or("unknown");
                let mut status = match (state, st["tools"].as_u64(), st["reason"].as_str()) {
                    ("ready", Some(n), _) => format!("ready · {n} tools"),
                    (s, _, Some(reason)) => format!("{s}: {reason}"),
                    (s, _, None) => s.to_string(),
                };
                let held = st["reason"]
                    .as_str()
                    .is_some_and(|r| r.starts_with(cairn_runtime::mcp_trust::UNTRUSTED));
                // Trusted since this session started: it starts with the next chat.
                let untrusted =
                    held && !cairn_runtime::mcp_trust::trusted_now(&self.workspace, &text("name"));
                if held && !untrusted {
                    status = crate::mcp::NOT_CONNECTED.to_string();
                }
                crate::types::McpServerView {
                    name: text("name"),
                    target: text("target"),
                    untrusted,
                    status,
                }
            })
            .collect();
        Some(views)
    }

    /// The provider name.
    pub fn provider(&self) -> String {
        lock(&self.provider).clone()
    }

    /// The live state shown in the header.
    pub fn status(&self) -> crate::types::SessionStatus {
        let session = &self.assembled.session;
        crate::types::SessionStatus {
            id: session.id(),
            provider: self.provider(),
            model: model_view(&session.model()),
            mode: session.mode(),
            busy: session.is_busy(),
            blocked: self.blocked(),
        }
    }

    /// Why turns cannot run now, if they cannot.
    pub fn blocked(&self) -> Option<String> {
        lock(&self.blocked).clone()
    }

    /// Switches the LLM client (after a settings change).
    pub fn set_llm(&self, llm: LlmSetup) {
        let session = &self.assembled.session;
        session.set_llm(llm.client);
        if !llm.model.is_empty() {
            session.set_model(llm.model);
        }
        *lock(&self.provider) = llm.provider;
        *lock(&self.blocked) = llm.blocked;
    }

    /// Renames the session.
    pub fn rename(&self, name: &str) -> Result<(), String> {
        let name = name.trim().to_string();
        self.assembled
            .persister
            .update(|s| s.name = name)
            .map_err(|e| e.to_string())
    }

    /// What the UI shows when it opens this session.
    pub fn view(&self) -> Result<SessionView, String> {
        let saved = self.saved();
        let session = &self.assembled.session;
        let events = self
            .assembled
            .store
            .read_events(&saved.session_id)
            .map_err(|e| e.to_string())?;
        Ok(SessionView {
            id: saved.session_id,
            name: saved.name,
            workspace: self.workspace.display().to_string(),
            provider: lock(&self.provider).clone(),
            model: model_view(&session.model()),
            mode: session.mode(),
            turns: saved.turns,
            events,
            todos: session.todos(),
            pending_steering: session.pending_steering(),
            busy: session.is_busy(),
            blocked: self.blocked(),
            pending_calls: 0,
            sandbox: crate::types::SandboxView::of(&self.assembled.sandbox),
        })
    }

    /// How many tool calls a killed process left open (0 while a turn runs: the running turn
    /// owns them).
    pub async fn pending_calls(&self) -> u32 {
        let session = &self.assembled.session;
        if session.is_busy() {
            return 0;
        }
        let calls = session.pending_calls().await;
        u32::try_from(calls.len()).unwrap_or(u32::MAX)
    }

    /// [`SessionRuntime::view`] with the count of open tool calls, for opening a session.
    pub async fn view_with_pending(&self) -> Result<SessionView, String> {
        let mut view = self.view()?;
        view.pending_calls = self.pending_calls().await;
        Ok(view)
    }

    /// Runs one turn (and the steering turns the engine goes on with), sending every event
    /// to `send`. A `send` failure (the page is gone) cancels the run.
    pub async fn run<F>(&self, input: TurnInput, mut send: F) -> RunOutcome
    where
        F: FnMut(Event) -> Result<(), String>,
    {
        if self.closed.load(Ordering::SeqCst) {
            return RunOutcome::ChannelClosed;
        }
        let session = &self.assembled.session;
        let mut stream = match input {
            TurnInput::Text(text) => session.run(text),
            TurnInput::Attached(text, a) => session.run_with_attachments(text, *a),
            TurnInput::Retry => session.retry(),
            TurnInput::Resume => session.resume(),
        };
        match forward(&mut stream, BATCH_WINDOW, &mut send, |_| {}).await {
            // Dropping the stream cancels the run.
            ForwardEnd::ChannelClosed => RunOutcome::ChannelClosed,
            ForwardEnd::StreamEnded => stream.end().await.into(),
        }
    }

    /// Closes the session: denies what is pending, interrupts the running turn (killing its
    /// processes), waits for it to stop and saves the session.
    pub async fn shutdown(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        self.pending.close();
        let session = &self.assembled.session;
        session.interrupt();
        let stop = async {
            session.idle().await;
            self.assembled.close_mcp().await;
            // A session that never ran a turn leaves no checkpoint (and no sidebar entry).
            if self.saved().turns == 0 {
                return;
            }
            if let Err(e) = self.assembled.checkpoint().await {
                tracing::warn!(error = %e, "could not save the session on close");
            }
        };
        if tokio::time::timeout(SHUTDOWN_WAIT, stop).await.is_err() {
            tracing::warn!(session = %self.id(), "the turn did not stop in time; the last checkpoint is kept");
        }
        tracing::info!(session = %self.id(), "session closed");
    }

    /// Whether [`SessionRuntime::shutdown`] ran.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}
