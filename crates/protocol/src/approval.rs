//! Permission modes and approval requests/decisions.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Execution mode of a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Mode {
    /// Read-only conversation: no writes, no commands.
    Discuss,
    /// Read-only planning: no writes, no commands.
    Plan,
    /// Side effects need approval one by one (the default).
    #[default]
    Interactive,
    /// Side effects inside the workspace are allowed without asking.
    Auto,
}

impl Mode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Discuss => "discuss",
            Mode::Plan => "plan",
            Mode::Interactive => "interactive",
            Mode::Auto => "auto",
        }
    }

    /// Whether side effects are forbidden outright in this mode.
    pub fn is_read_only(self) -> bool {
        matches!(self, Mode::Discuss | Mode::Plan)
    }
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "discuss" => Ok(Mode::Discuss),
            "plan" => Ok(Mode::Plan),
            // "Ask" is what the app's mode switcher calls it.
            "interactive" | "ask" => Ok(Mode::Interactive),
            "auto" => Ok(Mode::Auto),
            other => Err(format!(
                "unknown mode `{other}` (expected discuss, plan, ask (interactive) or auto)"
            )),
        }
    }
}

/// What the approver is asked to decide.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ApprovalRequest {
    /// Turn id.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Tool call id.
    #[serde(rename = "reqId")]
    pub req_id: String,
    /// The opaque id a face answers this request by.
    #[serde(rename = "requestId", default)]
    pub request_id: String,
    /// Tool name.
    pub name: String,
    /// Parsed call arguments.
    #[ts(type = "unknown")]
    pub arguments: serde_json::Value,
    /// Why the engine asks.
    pub reason: String,
    /// Tool category.
    pub category: String,
    /// What an "always allow" answer would allow for the rest of the session; `None` when
    /// none is offered (a shell command with operators, which no allowance may cover).
    #[serde(
        rename = "alwaysAllow",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub always_allow: Option<AlwaysAllow>,
}

/// The session allowance an "always allow" answer grants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum AlwaysAllow {
    /// Every call of this tool ([`ApprovalDecision::AlwaysTool`]).
    Tool { name: String },
    /// Every plain run of this program ([`ApprovalDecision::AlwaysCommand`]).
    Command { program: String },
}

impl AlwaysAllow {
    /// The decision that grants this allowance.
    pub fn decision(&self) -> ApprovalDecision {
        match self {
            AlwaysAllow::Tool { .. } => ApprovalDecision::AlwaysTool,
            AlwaysAllow::Command { .. } => ApprovalDecision::AlwaysCommand,
        }
    }
}

/// The approver's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ApprovalDecision {
    /// Allow this one call.
    Once,
    /// Allow this tool for the rest of the session.
    AlwaysTool,
    /// Allow this command (shell tools) for the rest of the session.
    AlwaysCommand,
    /// Refuse the call.
    Deny,
}

impl ApprovalDecision {
    /// Whether the call may run.
    pub fn is_allowed(self) -> bool {
        !matches!(self, ApprovalDecision::Deny)
    }
}

/// The user's answer to an `ask_user` question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum UserAnswer {
    /// Chosen options (one unless `multi`) and/or free text.
    Answered {
        selected: Vec<String>,
        #[serde(default)]
        text: String,
    },
    /// The user declined to answer, or nobody can answer (headless).
    Declined { reason: String },
}

/// The user's verdict on a proposed plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum PlanReview {
    /// Go ahead.
    Accepted,
    /// Do not; optional feedback for the model.
    Rejected { feedback: String },
    /// Nobody could review it (a run without a user): the plan is shown, the work waits.
    Unreviewed { reason: String },
}

/// The user's answer to a `request_directory` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum DirectoryGrant {
    /// Access granted for the session (read-only unless `writable`).
    Granted { writable: bool },
    /// Access refused.
    Denied { reason: String },
}
