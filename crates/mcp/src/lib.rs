//! MCP for Cairn (seed §15) over `rmcp`: configuration in every accepted format, stdio /
//! Streamable HTTP / legacy SSE transports, a manager that starts servers in parallel in the
//! background with per-server timeouts, status, crash restarts and bounded shutdown, and
//! adapters that register each server tool as an engine tool named `mcp__<server>__<tool>`.

pub mod asks;
pub mod auth;
pub mod builtin;
pub mod error;
pub use error::ServerError;
pub mod config;
pub mod connection;
pub mod handler;
pub mod http;
pub mod lazy;
pub mod listing;
pub mod manager;
pub mod naming;
pub mod ocr_model;
pub mod options;
pub mod process;
pub mod prompts;
pub mod resources;
pub mod result;
pub mod server_log;
pub mod slot;
pub mod sse;
pub mod stderr_log;
pub mod task_only;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub mod tool;

pub use builtin::{with_builtin_defaults, BuiltinServer};
pub use config::{
    load_all, load_config_file, project_config_path, user_config_path, ConfigWarning, LoadedConfig,
    ServerConfig, TransportConfig, VarContext,
};
pub use lazy::{CALL_TOOL, SEARCH_TOOL};
pub use manager::{McpError, McpManager, RegistryTarget};
pub use ocr_model::OcrModel;
pub use options::{LazyMode, LazyOptions, ManagerOptions, McpSandbox, ServerInfo, ServerStatus};
