//! A server's log messages (`notifications/message`): into the session log (tracing, at the
//! matching level, with the server's name) and, while one of its tools runs, into that call's
//! stream as `mcp_log` events. `logging/setLevel` asks servers that declare logging for
//! messages at `CAIRN_MCP_LOG_LEVEL` and above (default `info`).
#![allow(deprecated)] // Logging is part of 2025-11-25, the version Cairn announces.

use std::sync::{Arc, Mutex};

use cairn_engine::ToolHost;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::RoleClient;
use rmcp::Peer;
use serde_json::Value;

/// Called with each log message a server sends.
pub type LogSink = Arc<dyn Fn(LoggingMessageNotificationParam) + Send + Sync>;

/// The level asked for when none is set.
pub const DEFAULT_LEVEL: &str = "info";

/// The level `name` names (`debug` … `emergency`), if any.
pub fn parse_level(name: &str) -> Option<LoggingLevel> {
    serde_json::from_value(Value::String(name.trim().to_ascii_lowercase())).ok()
}

/// The wire name of `level`.
pub fn level_name(level: LoggingLevel) -> String {
    serde_json::to_value(level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "info".into())
}

/// Asks `peer` for messages at `level` and above when it declared logging.
pub async fn set_level(server: &str, peer: &Peer<RoleClient>, level: &str) {
    let declared = peer
        .peer_info()
        .is_some_and(|i| i.capabilities.logging.is_some());
    let Some(level) = parse_level(level).filter(|_| declared) else {
        return;
    };
    if let Err(e) = peer.set_level(SetLevelRequestParams::new(level)).await {
        tracing::debug!(server, "logging/setLevel failed: {e}");
    }
}

/// The tool calls of one server that are running now, which hear its log messages.
#[derive(Default)]
pub struct Listeners {
    next: std::sync::atomic::AtomicU64,
    hosts: Mutex<Vec<(u64, ToolHost)>>,
}

/// Removes a call's listener when dropped.
pub struct Listening<'a> {
    listeners: &'a Listeners,
    id: u64,
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        let mut hosts = self
            .listeners
            .hosts
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        hosts.retain(|(id, _)| *id != self.id);
    }
}

impl Listeners {
    /// `host` hears the server's log messages until the returned guard is dropped.
    pub fn listen(&self, host: ToolHost) -> Listening<'_> {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.hosts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((id, host));
        Listening {
            listeners: self,
            id,
        }
    }

    /// The call that started last of those running now.
    pub fn latest(&self) -> Option<ToolHost> {
        self.hosts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .last()
            .map(|(_, h)| h.clone())
    }

    /// Logs one message of `server` and hands it to the running calls.
    pub fn deliver(&self, server: &str, p: LoggingMessageNotificationParam) {
        let level = level_name(p.level);
        let message = match &p.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let logger = p.logger.clone();
        match p.level {
            LoggingLevel::Debug => {
                tracing::debug!(server, logger = ?logger, "MCP server log: {message}")
            }
            LoggingLevel::Info | LoggingLevel::Notice => {
                tracing::info!(server, logger = ?logger, "MCP server log: {message}")
            }
            LoggingLevel::Warning => {
                tracing::warn!(server, logger = ?logger, "MCP server log: {message}")
            }
            _ => {
                tracing::error!(server, logger = ?logger, level = %level, "MCP server log: {message}")
            }
        }
        let hosts: Vec<ToolHost> = self
            .hosts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(_, h)| h.clone())
            .collect();
        for host in hosts {
            let (server, level, logger, message) = (
                server.to_string(),
                level.clone(),
                logger.clone(),
                message.clone(),
            );
            tokio::spawn(async move {
                host.server_log(&server, &level, logger, &message).await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn levels_round_trip_by_their_wire_names() {
        for name in [
            "debug",
            "info",
            "notice",
            "warning",
            "error",
            "critical",
            "alert",
            "emergency",
        ] {
            assert_eq!(level_name(parse_level(name).unwrap()), name);
        }
        assert_eq!(
            parse_level(" WARNING ").map(level_name).as_deref(),
            Some("warning")
        );
        assert!(parse_level("loud").is_none());
    }
}
