//! What a session left out for lack of trust, as typed facts: each face names them once (the
//! CLI on stderr, the app in a banner that leads to Settings).

use serde::Serialize;
use ts_rs::TS;

/// What kind of definition was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum SkippedKind {
    /// The project's hook file (all its hooks).
    Hooks,
    /// One project MCP server.
    McpServer,
}

/// A repository definition that does not run until the user trusts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SkippedView {
    /// Hooks or an MCP server.
    pub kind: SkippedKind,
    /// The server's name, or the number of hooks the file defines.
    pub name: String,
    /// The file that defines it.
    pub file: String,
}
