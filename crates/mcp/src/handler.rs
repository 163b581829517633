//! The client side of one connection: identifies Cairn, routes progress notifications to the
//! call waiting for them, and reports `tools/list_changed`.

use std::sync::Arc;

use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::ClientHandler;

/// Called when the server says its tool list changed.
pub type ToolsChanged = Arc<dyn Fn() + Send + Sync>;

/// Cairn's MCP client handler for one server.
#[derive(Clone)]
pub struct Handler {
    server: String,
    progress: ProgressDispatcher,
    on_tools_changed: ToolsChanged,
}

impl Handler {
    /// A handler for `server`.
    pub fn new(server: &str, on_tools_changed: ToolsChanged) -> Self {
        Handler {
            server: server.to_string(),
            progress: ProgressDispatcher::new(),
            on_tools_changed,
        }
    }

    /// Where calls subscribe to their progress notifications.
    pub fn progress(&self) -> ProgressDispatcher {
        self.progress.clone()
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("cairn", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::debug!(server = %self.server, "MCP tool list changed");
        (self.on_tools_changed)();
    }
}
