//! Manager settings (timeouts, restarts, lazy loading) and per-server status as the UI and
//! `cairn mcp list` show it.

use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// When to offer only `mcp_search_tools` + `mcp_call_tool` instead of every tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LazyMode {
    /// Above the thresholds.
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

/// Lazy tool loading (seed §15.4).
#[derive(Debug, Clone)]
pub struct LazyOptions {
    /// On, off, or by threshold.
    pub mode: LazyMode,
    /// More tools than this turns lazy loading on.
    pub threshold_tools: usize,
    /// More schema characters than this turns lazy loading on.
    pub threshold_chars: usize,
    /// Most tools kept loaded by searches.
    pub max_loaded: usize,
    /// Matches a search loads.
    pub search_load: usize,
}

impl Default for LazyOptions {
    fn default() -> Self {
        LazyOptions {
            mode: LazyMode::Auto,
            threshold_tools: 16,
            threshold_chars: 24_000,
            max_loaded: 40,
            search_load: 8,
        }
    }
}

/// Everything the manager needs besides the server list.
#[derive(Debug, Clone)]
pub struct ManagerOptions {
    /// Working directory of stdio servers without their own `cwd`; root of relative paths.
    pub workspace: PathBuf,
    /// Spawn + `initialize` + first `tools/list`.
    pub startup_timeout: Duration,
    /// A call's time without a response or a progress notification.
    pub call_timeout: Duration,
    /// A call's total time, whatever progress it reports.
    pub max_call_timeout: Duration,
    /// Each step of a shutdown (voluntary exit, then after SIGTERM) waits this long.
    pub shutdown_grace: Duration,
    /// Automatic restarts after a crash before the server is left failed.
    pub max_restarts: u32,
    /// First restart delay; doubles each time up to `max_backoff`.
    pub restart_backoff: Duration,
    /// Longest restart delay.
    pub max_backoff: Duration,
    /// Bytes of stderr kept per server.
    pub stderr_log_bytes: usize,
    /// Lazy tool loading.
    pub lazy: LazyOptions,
    /// The `tesseract` program for the built-in OCR server; `None` = look it up on `PATH`.
    pub tesseract: Option<PathBuf>,
    /// Multimodal model the built-in OCR server falls back to without `tesseract`.
    pub ocr_model: Option<crate::ocr_model::OcrModel>,
    /// The session's sandbox, for the stdio servers it applies to (a project's); `None`:
    /// every server runs outside.
    pub sandbox: Option<McpSandbox>,
    /// Logins for HTTP servers that need one (bearer tokens, refreshed); `None`: no logins.
    pub auth: Option<std::sync::Arc<dyn crate::auth::AccessTokens>>,
    /// The session's model sees images: image blocks of tool results reach it as images (as
    /// `read_image`'s do), not only as the text placeholder.
    pub images_to_model: bool,
    /// The level asked of servers that log (`logging/setLevel`; `CAIRN_MCP_LOG_LEVEL`).
    pub log_level: String,
}

/// Which stdio servers run inside the session's sandbox, and the sandbox.
#[derive(Clone)]
pub struct McpSandbox {
    /// The session's sandbox wrapper.
    pub wrapper: std::sync::Arc<dyn cairn_engine::CommandWrapper>,
    /// Whether a server from this config file runs inside (a project's file: yes).
    pub applies: std::sync::Arc<dyn Fn(&std::path::Path) -> bool + Send + Sync>,
}

impl std::fmt::Debug for McpSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSandbox")
            .field("wrapper", &self.wrapper.describe())
            .finish_non_exhaustive()
    }
}

impl ManagerOptions {
    /// Defaults: 30 s startup, 300 s call (`MCP_CALL_TIMEOUT_MS`), 1 h maximum, 3 restarts.
    pub fn new(workspace: PathBuf) -> Self {
        ManagerOptions {
            workspace,
            startup_timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(300),
            max_call_timeout: Duration::from_secs(3600),
            shutdown_grace: Duration::from_millis(1500),
            max_restarts: 3,
            restart_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            stderr_log_bytes: 64 * 1024,
            lazy: LazyOptions::default(),
            tesseract: None,
            ocr_model: None,
            sandbox: None,
            auth: None,
            log_level: crate::server_log::DEFAULT_LEVEL.to_string(),
            images_to_model: false,
        }
    }

    /// [`ManagerOptions::new`] with `MCP_STARTUP_TIMEOUT_MS`, `MCP_CALL_TIMEOUT_MS`,
    /// `MCP_MAX_CALL_TIMEOUT_MS` and `CAIRN_MCP_LAZY` (`1`/`0`) applied.
    pub fn from_env(workspace: PathBuf) -> Self {
        let mut o = ManagerOptions::new(workspace);
        if let Some(d) = env_ms("MCP_STARTUP_TIMEOUT_MS") {
            o.startup_timeout = d;
        }
        if let Some(d) = env_ms("MCP_CALL_TIMEOUT_MS") {
            o.call_timeout = d;
        }
        if let Some(d) = env_ms("MCP_MAX_CALL_TIMEOUT_MS") {
            o.max_call_timeout = d;
        }
        o.max_call_timeout = o.max_call_timeout.max(o.call_timeout);
        o.lazy.mode = lazy_mode_from(std::env::var("CAIRN_MCP_LAZY").ok().as_deref());
        if let Some(level) = std::env::var("CAIRN_MCP_LOG_LEVEL")
            .ok()
            .filter(|l| crate::server_log::parse_level(l).is_some())
        {
            o.log_level = level.trim().to_ascii_lowercase();
        }
        o
    }
}

/// `CAIRN_MCP_LAZY` value → mode (`1`/`true`/`on` → on, `0`/`false`/`off` → off, else auto).
pub fn lazy_mode_from(v: Option<&str>) -> LazyMode {
    match v.map(|s| s.trim().to_ascii_lowercase()) {
        Some(s) if matches!(s.as_str(), "1" | "true" | "on" | "yes") => LazyMode::On,
        Some(s) if matches!(s.as_str(), "0" | "false" | "off" | "no") => LazyMode::Off,
        _ => LazyMode::Auto,
    }
}

fn env_ms(name: &str) -> Option<Duration> {
    std::env::var(name)
        .ok()?
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
}

/// A server's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerStatus {
    /// Being started (or restarted).
    Starting,
    /// Connected; this many tools listed.
    Ready {
        /// Tools the server lists.
        tools: usize,
    },
    /// Not usable; why (with the end of its stderr for stdio servers).
    Failed {
        /// The reason.
        reason: String,
    },
    /// Turned off in the config, or unavailable by design (e.g. OCR without tesseract).
    Disabled {
        /// Why.
        reason: String,
    },
}

impl ServerStatus {
    /// `starting`, `ready`, `failed`, `disabled`.
    pub fn label(&self) -> &'static str {
        match self {
            ServerStatus::Starting => "starting",
            ServerStatus::Ready { .. } => "ready",
            ServerStatus::Failed { .. } => "failed",
            ServerStatus::Disabled { .. } => "disabled",
        }
    }
}

/// One server as listed for the UI and `cairn mcp list`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    /// Configured name.
    pub name: String,
    /// `stdio`, `http`, `sse`, `builtin` (empty when not configured).
    pub transport: String,
    /// Command line or URL (never header or environment values).
    pub target: String,
    /// Current state.
    pub status: ServerStatus,
    /// Tool names as the server lists them.
    pub tools: Vec<String>,
    /// Problems with the last tool listing: entries skipped or repaired (one line each).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Process id of a stdio server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Automatic restarts so far.
    pub restarts: u32,
    /// Time the last successful start took.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_ms: Option<u64>,
    /// The config file it came from.
    pub source: PathBuf,
    /// Scopes a call was refused for since the last start: a login again (a step-up) grants
    /// them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_scope: Option<String>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn lazy_override_values() {
        assert_eq!(lazy_mode_from(Some("1")), LazyMode::On);
        assert_eq!(lazy_mode_from(Some("off")), LazyMode::Off);
        assert_eq!(lazy_mode_from(Some("")), LazyMode::Auto);
        assert_eq!(lazy_mode_from(None), LazyMode::Auto);
    }

    #[test]
    fn status_serialises_with_a_state_tag() {
        let s = serde_json::to_value(ServerStatus::Failed { reason: "x".into() }).unwrap();
        assert_eq!(s, serde_json::json!({"state": "failed", "reason": "x"}));
    }
}
