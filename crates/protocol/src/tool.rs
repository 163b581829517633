//! Tool schemas and metadata as the model and the permission engine see them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a tool call ended (`tool_finished.data.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ToolStatus {
    Ok,
    Error,
    Denied,
    Interrupted,
}

impl ToolStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolStatus::Ok => "ok",
            ToolStatus::Error => "error",
            ToolStatus::Denied => "denied",
            ToolStatus::Interrupted => "interrupted",
        }
    }
}

/// What kind of work a tool does, for how a UI presents its calls (icon, edit diff).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ToolKind {
    /// Reads files, images or media.
    Read,
    /// Creates or changes files (its arguments describe the change).
    Edit,
    /// Searches or lists the workspace.
    Search,
    /// Runs a command or drives a terminal.
    Command,
    /// Reaches the web.
    Web,
    /// Asks the user something: a question, a plan, a directory.
    Question,
    /// Keeps the todo list.
    Todo,
    /// Reads version control (status, diff, log).
    Git,
    /// Runs or talks to a subagent.
    Agent,
    /// A tool served by an MCP server.
    Mcp,
    /// Anything else.
    #[default]
    Other,
}

/// Risk class of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum RiskLevel {
    Low,
    Medium,
    High,
}

/// The function schema handed to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolSchema {
    /// Tool name (what the model calls).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    #[ts(type = "Record<string, unknown>")]
    pub parameters: serde_json::Value,
}

/// Metadata the engine uses to decide approval, parallelism and limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolMeta {
    /// Category shown to users (`file`, `shell`, `search`, `mcp`, ...).
    pub category: String,
    /// Risk class.
    pub risk: RiskLevel,
    /// Free-form capability tags (`read`, `write`, `exec`, `network`, ...).
    pub capabilities: Vec<String>,
    /// Whether a call needs approval in interactive mode.
    pub requires_approval: bool,
    /// Whether the tool has side effects; defaults to true when in doubt.
    pub mutating: bool,
    /// Per-call timeout in milliseconds; `None` = no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub timeout_ms: Option<u64>,
    /// Maximum characters of output kept before budgeting; `None` = engine default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub max_output_chars: Option<usize>,
    /// Where the tool comes from (`internal`, `mcp:<server>`, ...).
    pub source: String,
}

impl ToolMeta {
    /// Metadata for a read-only, low-risk internal tool.
    pub fn read_only(category: &str) -> Self {
        ToolMeta {
            category: category.to_string(),
            risk: RiskLevel::Low,
            capabilities: vec!["read".into()],
            requires_approval: false,
            mutating: false,
            timeout_ms: None,
            max_output_chars: None,
            source: "internal".into(),
        }
    }

    /// Metadata for a side-effecting internal tool that needs approval.
    pub fn mutating(category: &str, risk: RiskLevel, capabilities: &[&str]) -> Self {
        ToolMeta {
            category: category.to_string(),
            risk,
            capabilities: capabilities.iter().map(|c| c.to_string()).collect(),
            requires_approval: true,
            mutating: true,
            timeout_ms: None,
            max_output_chars: None,
            source: "internal".into(),
        }
    }

    /// Whether this tool may run in parallel with other read-only calls.
    pub fn is_read_only(&self) -> bool {
        !self.mutating && !self.requires_approval
    }
}
