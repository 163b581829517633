//! What the windows show of an open session: its header status, the view a window opens it
//! with, its MCP servers and timeline source. Sessions themselves live in the engine's host
//! ([`cairn_runtime::host`]); a window only holds a handle.

use std::path::Path;
use std::sync::Arc;

use cairn_runtime::host::{
    Answerer, ApprovalPresenter, Host, HostError, OpenSession, SessionHandle,
};
use cairn_runtime::llm_setup::LlmSetup;
use cairn_runtime::RunOptions;

use crate::dialogs::{approval_prompt, NativeDialogs};
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
    /// Native dialogs.
    pub dialogs: Arc<dyn NativeDialogs>,
    /// The user's terminals (the agent reads this workspace's ones).
    pub terminals: Arc<cairn_tools::TerminalManager>,
}

/// Approvals in a native dialog as well as in the chat card (the first answer wins).
struct NativePresenter(Arc<dyn NativeDialogs>);

impl ApprovalPresenter for NativePresenter {
    fn present(
        &self,
        request: &cairn_protocol::ApprovalRequest,
        workspace: &Path,
        answer: Box<dyn FnOnce(cairn_protocol::ApprovalDecision) + Send>,
    ) -> Option<String> {
        let name = crate::settings::folder_name(workspace);
        let prompt = approval_prompt(request, &name, workspace);
        let title = prompt.title.clone();
        self.0.approval(prompt, answer);
        Some(title)
    }

    fn dismiss(&self, token: &str) {
        self.0.dismiss(token);
    }
}

/// Opens (creates or resumes) a session in `host`.
pub fn open(host: &Host, req: OpenRequest<'_>) -> Result<Arc<SessionHandle>, HostError> {
    let answerer = match req.host {
        ApprovalHost::Native => Answerer::Pending {
            presenter: Some(Arc::new(NativePresenter(req.dialogs))),
            fixed: None,
        },
        ApprovalHost::Ui => Answerer::waiting(),
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
        ..RunOptions::default()
    };
    let project = crate::terminals::project_id(req.workspace);
    host.open(OpenSession {
        options,
        llm: Some(req.llm),
        answerer,
        terminals: Some((req.terminals, project)),
    })
}
