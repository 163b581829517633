//! What a running tool can ask of its session: emit events (partial output), ask the user,
//! propose a plan, request a directory, update the todo list.

use std::sync::{Arc, Mutex};

use cairn_protocol::{
    AskUserQuestion, DirectoryGrant, DirectoryRequested, Event, Mode, PlanProposed, PlanReview,
    TodoItem, TodosUpdated, TokenUsage, ToolOutput as ToolOutputEvent, UserAnswer,
};
use tokio::sync::mpsc;

use crate::approval::Approver;
use crate::execenv::ExecEnvironment;
use crate::locks::lock;
use crate::permission::PermissionEngine;

/// Session state shared with tools.
pub(crate) struct HostShared {
    /// Taken away when the turn ends, so a tool that kept its host cannot hold the stream open.
    pub tx: Mutex<Option<mpsc::Sender<Event>>>,
    pub approver: Arc<dyn Approver>,
    /// Whether the host set the approver (else the session's default approval applies).
    pub approver_set: bool,
    pub permissions: Arc<Mutex<PermissionEngine>>,
    pub todos: Arc<Mutex<Vec<TodoItem>>>,
    pub task_id: String,
    pub exec: ExecEnvironment,
    pub hooks: Vec<Arc<dyn crate::hook::EngineHook>>,
    /// The session's gates (the user's hooks), passed on to subagents for their tool calls.
    pub gate: Option<Arc<dyn crate::gate::Gate>>,
    /// Requests made on the turn's behalf by its tools (subagents): tokens and cost (`None`
    /// once one of them was not priced), added to the turn's usage when it ends.
    pub extra_usage: Mutex<Option<(TokenUsage, Option<f64>)>>,
    /// The session's model client, model id and prices, for what a tool asks of the model
    /// itself (an MCP server's sampling request).
    pub llm: Option<Arc<dyn crate::llm::LlmClient>>,
    pub model: String,
    pub pricing: Option<Arc<dyn crate::llm::Pricing>>,
    /// One MCP sampling or elicitation question at a time per turn.
    pub asking: tokio::sync::Mutex<()>,
}

/// A tool call's handle on its session; a detached host (tests, subprocess tools) drops
/// events and gives headless answers.
#[derive(Clone, Default)]
pub struct ToolHost {
    shared: Option<Arc<HostShared>>,
    req_id: String,
    name: String,
    /// What this call wrote so far (shared by the clones a tool hands to blocking code).
    writes: Arc<crate::produced::WriteLog>,
    /// Connections the sandbox's network proxy refused to this call's commands.
    net_refusals: Arc<Mutex<Vec<String>>>,
}

impl std::fmt::Debug for ToolHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolHost")
            .field("attached", &self.shared.is_some())
            .field("req_id", &self.req_id)
            .field("name", &self.name)
            .finish()
    }
}

impl HostShared {
    async fn send(&self, event: Event) {
        let tx = lock(&self.tx).clone();
        if let Some(tx) = tx {
            crate::hook::notify(&self.hooks, &event);
            let _ = tx.send(event).await;
        }
    }

    /// Detaches tools from the turn's stream.
    pub(crate) fn close(&self) {
        lock(&self.tx).take();
    }
}

#[async_trait::async_trait]
impl crate::net_gate::GateSession for HostShared {
    async fn emit(&self, event: Event) {
        self.send(event).await;
    }
    fn approver(&self) -> &Arc<dyn Approver> {
        &self.approver
    }
    fn permissions(&self) -> &Arc<Mutex<PermissionEngine>> {
        &self.permissions
    }
    fn exec(&self) -> &ExecEnvironment {
        &self.exec
    }
    fn task_id(&self) -> &str {
        &self.task_id
    }
}

impl ToolHost {
    /// A host attached to nothing: events are dropped, questions declined, plans accepted,
    /// directories denied.
    pub fn detached() -> Self {
        ToolHost::default()
    }

    /// A host outside any session (`cairn mcp call`, tests): what a tool asks of the user
    /// goes to `approver`, what it asks of a model to `model` (client, model id) when given;
    /// events are dropped.
    pub fn for_approver(
        approver: Arc<dyn Approver>,
        workspace: std::path::PathBuf,
        model: Option<(Arc<dyn crate::llm::LlmClient>, String)>,
        req_id: &str,
        name: &str,
    ) -> Self {
        let (llm, model) = match model {
            Some((l, m)) => (Some(l), m),
            None => (None, String::new()),
        };
        let shared = Arc::new(HostShared {
            tx: Mutex::new(None),
            approver,
            approver_set: true,
            permissions: Arc::new(Mutex::new(PermissionEngine::new(
                workspace,
                Mode::Interactive,
                Vec::new(),
            ))),
            todos: Arc::default(),
            task_id: String::new(),
            exec: ExecEnvironment::default(),
            hooks: Vec::new(),
            gate: None,
            extra_usage: Mutex::new(None),
            llm,
            model,
            pricing: None,
            asking: tokio::sync::Mutex::new(()),
        });
        ToolHost::attached(shared, req_id, name)
    }

    pub(crate) fn attached(shared: Arc<HostShared>, req_id: &str, name: &str) -> Self {
        ToolHost {
            shared: Some(shared),
            req_id: req_id.to_string(),
            name: name.to_string(),
            writes: Arc::default(),
            net_refusals: Arc::default(),
        }
    }

    /// The tool call's id.
    pub(crate) fn req_id(&self) -> &str {
        &self.req_id
    }

    /// The call's write log (see `ToolContext::write_files`).
    pub(crate) fn writes(&self) -> &Arc<crate::produced::WriteLog> {
        &self.writes
    }

    /// Whether this host reaches a real session.
    pub fn is_attached(&self) -> bool {
        self.shared.is_some()
    }

    /// Sends an event into the turn's stream, in order with everything else.
    pub async fn emit(&self, event: Event) {
        if let Some(s) = &self.shared {
            s.send(event).await;
        }
    }

    /// Streams a piece of partial output (`tool_output` event).
    pub async fn output(&self, text: impl Into<String>) {
        if let Some(s) = &self.shared {
            let ev = Event::ToolOutput(ToolOutputEvent {
                task_id: s.task_id.clone(),
                req_id: self.req_id.clone(),
                name: self.name.clone(),
                text: s.exec.scrub(&text.into()),
            });
            s.send(ev).await;
        }
    }

    /// Streams a log message an MCP server sent during this call (`mcp_log` event), bounded
    /// and scrubbed of secrets like tool output.
    pub async fn server_log(
        &self,
        server: &str,
        level: &str,
        logger: Option<String>,
        message: &str,
    ) {
        if let Some(s) = &self.shared {
            let mut text: String = message.chars().take(MAX_LOG_CHARS).collect();
            if text.len() < message.len() {
                text.push('…');
            }
            let ev = Event::McpLog(cairn_protocol::McpLog {
                task_id: s.task_id.clone(),
                req_id: self.req_id.clone(),
                server: server.to_string(),
                level: level.to_string(),
                logger,
                message: s.exec.scrub(&text),
            });
            s.send(ev).await;
        }
    }

    /// Asks the user (emits `ask_user_question`, then waits for the host's answer).
    pub async fn ask_user(
        &self,
        question: String,
        options: Vec<String>,
        allow_text: bool,
        multi: bool,
    ) -> UserAnswer {
        let Some(s) = &self.shared else {
            return UserAnswer::Declined {
                reason: "no user is available".into(),
            };
        };
        let q = AskUserQuestion {
            task_id: s.task_id.clone(),
            request_id: crate::approval::new_request_id(),
            question,
            options,
            allow_text,
            multi,
        };
        s.send(Event::AskUserQuestion(q.clone())).await;
        s.approver.ask_user(q).await
    }

    /// Proposes a plan (emits `plan_proposed`, then waits for the host's review). An accepted
    /// plan takes a session in plan mode to interactive mode, so the work can start (each
    /// side effect still approved); the returned mode says so.
    pub async fn propose_plan(&self, plan: String) -> (PlanReview, Option<Mode>) {
        let Some(s) = &self.shared else {
            return (
                PlanReview::Unreviewed {
                    reason: "no user is available to review plans here".into(),
                },
                None,
            );
        };
        let proposal = PlanProposed {
            plan,
            request_id: crate::approval::new_request_id(),
        };
        s.send(Event::PlanProposed(proposal.clone())).await;
        let review = s.approver.review_plan(proposal).await;
        let mut switched = None;
        if review == PlanReview::Accepted {
            let mut permissions = lock(&s.permissions);
            if permissions.mode() == Mode::Plan {
                permissions.set_mode(Mode::Interactive);
                switched = Some(Mode::Interactive);
            }
        }
        (review, switched)
    }

    /// Requests access to a directory (emits `directory_requested`); a grant is remembered
    /// for the session and widens the permission boundary.
    pub async fn request_directory(
        &self,
        path: String,
        reason: String,
        writable: bool,
    ) -> DirectoryGrant {
        let Some(s) = &self.shared else {
            return DirectoryGrant::Denied {
                reason: "no user is available".into(),
            };
        };
        let req = DirectoryRequested {
            reason,
            path: path.clone(),
            writable,
            request_id: crate::approval::new_request_id(),
        };
        s.send(Event::DirectoryRequested(req.clone())).await;
        let grant = s.approver.grant_directory(req).await;
        if let DirectoryGrant::Granted { writable } = grant {
            lock(&s.permissions).grant_directory(&path, writable);
        }
        grant
    }

    /// Counts a request made for this call (a subagent's turn) in the parent turn's usage.
    pub fn add_usage(&self, usage: &TokenUsage, cost_usd: Option<f64>) {
        let Some(s) = &self.shared else { return };
        let mut extra = lock(&s.extra_usage);
        let (total, cost) = extra.get_or_insert((TokenUsage::default(), Some(0.0)));
        total.add(usage);
        *cost = match (*cost, cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    /// Directories granted for this session: (absolute path, writable); the folder of saved
    /// oversized tool results is readable too, so the path the model was given works.
    pub fn granted_directories(&self) -> Vec<(String, bool)> {
        match &self.shared {
            Some(s) => {
                let p = lock(&s.permissions);
                p.state()
                    .granted_dirs
                    .iter()
                    .map(|(d, w)| (d.clone(), *w))
                    .chain(p.readable_dirs().iter().map(|d| (d.clone(), false)))
                    .collect()
            }
            None => Vec::new(),
        }
    }

    /// The deny path rules that bind what this tool reads: walking tools (grep, list_files,
    /// the git tools) skip the paths they deny. None for a detached host.
    pub fn read_denials(&self) -> cairn_policy::ReadDenials {
        match &self.shared {
            Some(s) => lock(&s.permissions).read_denials(&self.name),
            None => cairn_policy::ReadDenials::default(),
        }
    }

    /// Replaces the session's todo list (emits `todos_updated`).
    pub async fn set_todos(&self, todos: Vec<TodoItem>) {
        let Some(s) = &self.shared else { return };
        *lock(&s.todos) = todos.clone();
        s.send(Event::TodosUpdated(TodosUpdated {
            task_id: s.task_id.clone(),
            todos,
        }))
        .await;
    }

    /// A system helper program (`ffprobe`, `tesseract`) run on untrusted input: `argv`
    /// wrapped as [`Self::wrap_command`] does, with none of Cairn's environment (only a
    /// system `PATH` and a UTF-8 locale) and no stdin; keep the guard until it has ended.
    pub fn helper_command(
        &self,
        argv: Vec<String>,
    ) -> Result<
        (tokio::process::Command, crate::execenv::WrappedCommand),
        crate::tool_error::ToolError,
    > {
        let wrapped = self.wrap_command(argv);
        let Some((first, rest)) = wrapped.argv.split_first() else {
            return Err(crate::tool_error::ToolError::Failed(
                "empty helper command line".into(),
            ));
        };
        let mut cmd = tokio::process::Command::new(first);
        cmd.args(rest)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("LC_ALL", "C.UTF-8")
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        crate::process_session::own_session_tokio(&mut cmd);
        Ok((cmd, wrapped))
    }

    /// The argv that runs `argv` for this session: inside the OS sandbox when one is set
    /// (granted writable folders included), unchanged otherwise; keep the returned guard
    /// until the process has ended.
    pub fn wrap_command(&self, argv: Vec<String>) -> crate::execenv::WrappedCommand {
        let Some(s) = &self.shared else {
            return crate::execenv::WrappedCommand::plain(argv);
        };
        match &s.exec.wrapper {
            Some(w) => {
                let extra: Vec<std::path::PathBuf> = self
                    .granted_directories()
                    .into_iter()
                    .filter(|(_, writable)| *writable)
                    .map(|(p, _)| std::path::PathBuf::from(p))
                    .collect();
                // Paths the permission rules deny reading are empty inside, whoever reads
                // them and through whatever link (`grep -R` following one).
                let (hidden, _) = self.read_denials().mountable();
                let gate = crate::net_gate::CallGate {
                    shared: s.clone(),
                    req_id: self.req_id.clone(),
                    tool: self.name.clone(),
                    here: Mutex::default(),
                    asking: tokio::sync::Mutex::default(),
                    refusals: self.net_refusals.clone(),
                };
                w.wrap_call(argv, &extra, &hidden, Some(Arc::new(gate)))
            }
            None => crate::execenv::WrappedCommand::plain(argv),
        }
    }

    /// The connections the sandbox's network proxy refused to this call's commands so far
    /// (each naming the host and why), and forgets them.
    pub fn take_network_refusals(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.net_refusals))
    }

    /// Whether commands of this session run inside an OS sandbox.
    pub fn sandboxed(&self) -> bool {
        self.shared
            .as_ref()
            .is_some_and(|s| s.exec.wrapper.is_some())
    }

    /// Variables (credentials) to remove from the environment of commands tools start.
    pub fn removed_env(&self) -> Vec<String> {
        self.shared
            .as_ref()
            .map(|s| s.exec.removed_env.clone())
            .unwrap_or_default()
    }

    /// Vault variables to add to the environment of commands tools start.
    pub fn vault_env(&self) -> Vec<(String, String)> {
        self.shared
            .as_ref()
            .map(|s| s.exec.vault.clone())
            .unwrap_or_default()
    }

    /// The session's approver when the host set one (subagents inherit it); `None` when
    /// detached or when the session runs on its default approval.
    pub fn approver(&self) -> Option<Arc<dyn Approver>> {
        self.shared
            .as_ref()
            .filter(|s| s.approver_set)
            .map(|s| s.approver.clone())
    }

    /// The session state behind this host; `None` when detached.
    pub(crate) fn shared(&self) -> Option<&Arc<HostShared>> {
        self.shared.as_ref()
    }

    /// The session's current permission mode; `None` when detached.
    pub fn mode(&self) -> Option<cairn_protocol::Mode> {
        self.shared.as_ref().map(|s| lock(&s.permissions).mode())
    }

    /// The session's current todo list.
    pub fn todos(&self) -> Vec<TodoItem> {
        match &self.shared {
            Some(s) => lock(&s.todos).clone(),
            None => Vec::new(),
        }
    }
}

/// Characters of one server log message kept in its event.
const MAX_LOG_CHARS: usize = 2_000;
