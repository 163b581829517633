//! The client side of one connection: identifies Cairn (announcing MCP 2025-11-25, the newest
//! version Cairn implements; the server may answer an older one), offers the workspace as the
//! one root, routes progress notifications to the call waiting for them, hands elicitation
//! and sampling requests to the tool call running now ([`crate::asks`]), and reports
//! `tools/list_changed`.

use std::sync::Arc;

use rmcp::handler::client::progress::ProgressDispatcher;
use std::path::PathBuf;

// Roots are part of 2025-11-25 (the version Cairn announces); the SDK marks them deprecated
// for the version after it (SEP-2577).
#[allow(deprecated)]
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationCapability, ErrorData, FormElicitationCapability,
    Implementation, ListRootsResult, ProgressNotificationParam, ProtocolVersion, Root,
    SamplingCapability, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use rmcp::ClientHandler;

/// The protocol version Cairn announces: the newest it implements fully.
pub const ANNOUNCED: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// Called when the server says its tool list changed.
pub type ToolsChanged = Arc<dyn Fn() + Send + Sync>;

/// Cairn's MCP client handler for one server.
#[derive(Clone)]
pub struct Handler {
    server: String,
    progress: ProgressDispatcher,
    on_tools_changed: ToolsChanged,
    root: PathBuf,
    on_log: Option<crate::server_log::LogSink>,
    running: Option<crate::asks::RunningCall>,
}

impl Handler {
    /// A handler for `server` whose one root is `root` (the workspace, or the worktree).
    pub fn new(server: &str, root: PathBuf, on_tools_changed: ToolsChanged) -> Self {
        Handler {
            server: server.to_string(),
            progress: ProgressDispatcher::new(),
            on_tools_changed,
            root,
            on_log: None,
            running: None,
        }
    }

    /// Hands the server's log messages to `sink`.
    pub fn with_log_sink(mut self, sink: crate::server_log::LogSink) -> Self {
        self.on_log = Some(sink);
        self
    }

    /// Hands elicitation and sampling requests to the call `running` returns.
    pub fn with_running_call(mut self, running: crate::asks::RunningCall) -> Self {
        self.running = Some(running);
        self
    }

    fn running_call(&self) -> Option<cairn_engine::ToolHost> {
        self.running.as_ref().and_then(|r| r())
    }

    /// Where calls subscribe to their progress notifications.
    pub fn progress(&self) -> ProgressDispatcher {
        self.progress.clone()
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        // The root is the session's folder for the session's life: no `listChanged`.
        capabilities.roots = Some(Default::default());
        // Forms and pages go to the user; sampling to the session's model, once the user
        // allows it (neither without a tool call running for a session).
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new())
                .with_url(UrlElicitationCapability::new()),
        );
        capabilities.sampling = Some(SamplingCapability::default());
        let mut config = ClientConfig::new(
            capabilities,
            Implementation::new("cairn", env!("CARGO_PKG_VERSION")),
        );
        config.protocol_version = ANNOUNCED;
        config
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let uri = url::Url::from_directory_path(&self.root)
            .map(|u| u.to_string())
            .map_err(|()| {
                ErrorData::internal_error("the workspace is not an absolute path", None)
            })?;
        let name = self
            .root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        let mut root = Root::new(uri);
        root.name = name;
        Ok(ListRootsResult::new(vec![root]))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(crate::asks::elicit(&self.server, self.running_call(), request).await)
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        crate::asks::sample(&self.server, self.running_call(), params).await
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(sink) = &self.on_log {
            sink(params);
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "MCP tool list changed");
        (self.on_tools_changed)();
    }
}
