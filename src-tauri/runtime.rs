//! What the windows show of an open session: its header status, the view a window opens it
//! with, its MCP servers and timeline source. Sessions themselves live in the engine's host
//! ([`cairn_runtime::host`]); a window only holds a handle.

use std::path::Path;
use std::sync::Arc;

use cairn_runtime::host::{Answerer, Host, HostError, OpenSession, SessionHandle};
use cairn_runtime::llm_setup::LlmSetup;
use cairn_runtime::RunOptions;

use crate::attention::{Attention, SessionPresenter};
use crate::types::ApprovalHost;

/// An open session as a window holds it.
pub type SessionRuntime = SessionHandle;

/// Where a session comes from.
pub struct OpenRequest<'a> {
    /// The state dir shared with the CLI.
    pub state_dir: &'a Path,
    /// The workspace root.
    pub workspace: &'a Path,
    /// Resume this session; `None` = a new one.
    pub session_id: Option<String>,
    /// The LLM client and its model.
    pub llm: LlmSetup,
    /// Who answers approvals.
    pub host: ApprovalHost,
    /// Which approval gets the native dialog (and who is notified).
    pub attention: Arc<Attention>,
    /// The user's terminals (the agent reads this workspace's ones).
    pub terminals: Arc<cairn_tools::TerminalManager>,
    /// The Cairn-made git worktree `workspace` is in, for a new worktree session (a resumed
    /// one finds its own).
    pub worktree: Option<cairn_protocol::WorktreeRef>,
}

/// Opens (creates or resumes) a session in `host`. Its approvals go through
/// `req.attention`: a native dialog (with the chat card) while a window shows it, else a
/// notification.
pub fn open(host: &Arc<Host>, req: OpenRequest<'_>) -> Result<Arc<SessionHandle>, HostError> {
    let presenter = Arc::new(SessionPresenter::new(req.attention, host));
    let id = presenter.session.clone();
    let answerer = match req.host {
        ApprovalHost::Native | ApprovalHost::Ui => Answerer::Pending {
            presenter: Some(presenter),
            fixed: None,
        },
        ApprovalHost::Allow => Answerer::Pending {
            presenter: None,
            fixed: Some(cairn_protocol::ApprovalDecision::Once),
        },
        ApprovalHost::Deny => Answerer::Pending {
            presenter: None,
            fixed: Some(cairn_protocol::ApprovalDecision::Deny),
        },
    };
    let options = RunOptions {
        workspace: Some(req.workspace.to_path_buf()),
        state_dir: Some(req.state_dir.to_path_buf()),
        session_id: req.session_id,
        worktree: req.worktree,
        ..RunOptions::default()
    };
    let project = crate::terminals::project_id(req.workspace);
    let handle = host.open(OpenSession {
        options,
        llm: Some(req.llm),
        answerer,
        terminals: Some((req.terminals, project)),
    })?;
    let _ = id.set(handle.id());
    Ok(handle)
}
