//! What faces read and set of an open session without reaching into the engine: its turn
//! count, mode, model, sandbox, what was left out for lack of trust, and its end.

use cairn_protocol::Mode;
use std::sync::Arc;

use super::SessionHandle;
use crate::sandbox::SandboxState;

impl SessionHandle {
    /// Turns this session has run.
    pub async fn turns(&self) -> u32 {
        self.session().turns().await
    }

    /// The permission mode.
    pub fn mode(&self) -> Mode {
        self.session().mode()
    }

    /// Sets the permission mode (from the next tool call on).
    pub fn set_mode(&self, mode: Mode) {
        self.session().set_mode(mode);
    }

    /// The model the next turn uses.
    pub fn model(&self) -> String {
        self.session().model()
    }

    /// The context window in force (the model's, unless set explicitly).
    pub fn context_window(&self) -> u64 {
        self.session().compaction().context_window
    }

    /// Sets the model the next turn uses, with what depends on it (context window,
    /// compaction thresholds).
    pub fn set_model(&self, model: &str) {
        self.assembled().switch_model(model);
    }

    /// Whether a turn of this session runs now.
    pub fn is_running(&self) -> bool {
        self.session().is_busy()
    }

    /// What protects the session's commands, layer by layer (`None` without a sandbox).
    pub fn sandbox_report(&self) -> Option<cairn_protocol::SandboxReport> {
        self.session().sandbox_report()
    }

    /// Sets the session's shell policy from its next call on (the Settings' "run sandboxed
    /// commands without asking").
    pub fn set_shell_policy(&self, policy: cairn_engine::ShellPolicy) {
        self.session().set_shell_policy(policy);
    }

    /// Rewinds the conversation to right after session turn `turn` (refused while a turn
    /// runs); the later turns are kept in an archive file of the session.
    pub fn rewind_to_turn(
        &self,
        turn: u32,
    ) -> Result<cairn_engine::rewind::Rewound, cairn_engine::rewind::RewindError> {
        self.session().rewind_to_turn(turn)
    }

    /// Whether the session's commands run inside the OS sandbox, and why not.
    pub fn sandbox(&self) -> &SandboxState {
        &self.assembled().sandbox
    }

    /// Repository definitions left out until the user trusts them, as one line each.
    pub fn untrusted(&self) -> &[String] {
        &self.assembled().untrusted
    }

    /// Forgets a session-scoped "always allow" of tool `name`; false when none was given.
    pub fn revoke_tool(&self, name: &str) -> bool {
        self.session().revoke_tool(name)
    }

    /// Forgets a session-scoped "always allow" of `program`; false when none was given.
    pub fn revoke_command(&self, program: &str) -> bool {
        self.session().revoke_command(program)
    }

    /// Ends the face's use of the session without closing it in a host: runs its
    /// `SessionEnd` hooks (once) and stops its MCP servers gracefully.
    pub async fn end(&self) {
        self.session().end().await;
        self.assembled().close_mcp().await;
    }

    /// `read_file` of this session shows the editor's unsaved buffer of a file when
    /// `source` (an ACP client's `fs/read_text_file`) has one; the disk read still runs first
    /// (its rules and checks, the conflict guard), so writes are checked against the disk.
    pub fn read_buffers_through(&self, source: Arc<dyn cairn_tools::buffers::BufferSource>) {
        self.session().with_tools(|reg| {
            if let Some(t) = reg.get("read_file") {
                let inner = t.handle.clone();
                reg.register(cairn_tools::buffers::BufferedRead::wrap(inner, source));
            }
        });
    }
}

impl SessionHandle {
    /// The slash commands of this session: built-ins, the user's and the project's commands,
    /// skills only the user invokes, then its running MCP servers' prompts.
    pub fn command_views(&self) -> Vec<crate::commands::CommandView> {
        let mut views = crate::commands::views(self.workspace());
        let Some(manager) = self.assembled().mcp.manager() else {
            return views;
        };
        let taken: std::collections::HashSet<String> =
            views.iter().map(|v| v.name.clone()).collect();
        views.extend(
            manager
                .prompts()
                .into_iter()
                .filter(|p| !taken.contains(&p.command))
                .map(|p| crate::commands::CommandView {
                    argument_hint: (!p.arguments.is_empty()).then(|| {
                        p.arguments
                            .iter()
                            .map(|(n, required)| {
                                if *required {
                                    format!("<{n}>")
                                } else {
                                    format!("[{n}]")
                                }
                            })
                            .collect::<Vec<_>>()
                            .join(" ")
                    }),
                    name: p.command,
                    description: p.description,
                    source: crate::commands::CommandSource::Mcp,
                    file: p.server,
                    skill: false,
                    allowed_tools: Vec::new(),
                    model: None,
                }),
        );
        views
    }
}

impl SessionHandle {
    /// Asks the session's endpoint which models it serves (`GET /models`, at most `within`)
    /// and keeps the list for [`SessionHandle::offered_models`]; a failure keeps none
    /// (logged): the session's own model is always offered.
    pub async fn learn_models(&self, base_url: &str, within: std::time::Duration) {
        let env: std::sync::Arc<crate::llm_setup::EnvFn> =
            std::sync::Arc::new(crate::tooling::process_env);
        let keys = crate::keys::key_store_from_env(&crate::tooling::process_env);
        let provider = self.provider();
        let asked = crate::endpoint_models::endpoint_models(&provider, base_url, None, env, keys);
        match tokio::time::timeout(within, asked).await {
            Ok(Ok(models)) => *self.offered_lock() = models,
            Ok(Err(e)) => tracing::info!("the endpoint's models are not listed: {e}"),
            Err(_) => tracing::info!("the endpoint did not list its models in time"),
        }
    }

    fn offered_lock(&self) -> std::sync::MutexGuard<'_, Vec<String>> {
        self.offered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The models to offer: the session's own first, then its endpoint's
    /// ([`SessionHandle::learn_models`]), each once.
    pub fn offered_models(&self) -> Vec<String> {
        let mut out = vec![self.model()];
        for m in self.offered_lock().iter() {
            if !out.contains(m) {
                out.push(m.clone());
            }
        }
        out
    }
}
