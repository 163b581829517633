//! The engine's event stream: one ordered channel per turn, serialised as `{"type", "data"}`.
//!
//! Type names and `data` field names follow the reference event catalogue exactly, including
//! its mixed `camelCase` / `snake_case` spelling; do not rename them.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::compaction::{Compacted, Compacting};
use crate::message::TokenUsage;
use crate::tool::{ToolKind, ToolStatus};

/// How a turn ended (`turn_end.data.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum TurnStatus {
    Completed,
    MaxIterationsExceeded,
    Interrupted,
    Error,
}

impl TurnStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Completed => "completed",
            TurnStatus::MaxIterationsExceeded => "max_iterations_exceeded",
            TurnStatus::Interrupted => "interrupted",
            TurnStatus::Error => "error",
        }
    }
}

/// `turn_start`: a turn begins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TurnStart {
    #[serde(rename = "taskId")]
    pub task_id: String,
    pub input: String,
    #[serde(rename = "attachmentCount", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub attachment_count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub attachments: Option<Vec<crate::CarriedRef>>,
    #[serde(rename = "sessionId")]
    pub session_id: String,
    /// 1-based turn number in the session.
    pub turn: u32,
    /// Extension: what started the turn. A `steering` turn runs instructions that arrived too
    /// late for the turn before it: `input` is the first, each further one follows as its own
    /// `queue_steering` event.
    #[serde(default, skip_serializing_if = "TurnSource::is_input")]
    #[ts(as = "Option<TurnSource>", optional)]
    pub source: TurnSource,
    /// Extension: the git worktree the session runs in (absent for a folder session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub worktree: Option<WorktreeRef>,
    /// Extension: what protects this session's commands, layer by layer (absent when the
    /// face did not say, e.g. a slash command that ran no model turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sandbox: Option<crate::sandbox::SandboxReport>,
}

/// The Cairn-made git worktree a session runs in (`turn_start.data.worktree`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct WorktreeRef {
    /// The worktree's NAME (`cairn run --worktree NAME`).
    pub name: String,
    /// Its folder.
    pub path: String,
    /// Its branch (`cairn/NAME`).
    pub branch: String,
    /// Whether this run created it.
    pub created: bool,
}

/// What started a turn (`turn_start.data.source`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum TurnSource {
    /// New user input.
    #[default]
    Input,
    /// A re-run of the last turn after a retriable error.
    Retry,
    /// Finishing the tool calls a stopped session left open.
    Resume,
    /// Steering left over when the previous turn of the same run ended.
    Steering,
}

impl TurnSource {
    /// Whether the turn started from new user input (left out of events).
    pub fn is_input(&self) -> bool {
        *self == TurnSource::Input
    }
}

/// `assistant_delta` / `reasoning_delta`: streamed text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TextDelta {
    pub text: String,
    #[serde(rename = "reqId")]
    pub req_id: String,
    #[serde(rename = "taskId")]
    pub task_id: String,
}

/// `assistant_message`: one complete LLM reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AssistantMessage {
    pub text: String,
    pub reasoning: String,
    /// Names of the tools the reply calls.
    pub tool_calls: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub usage: Option<TokenUsage>,
    /// Extension: cost of this reply in USD, when the model's price is known.
    #[serde(rename = "costUsd", default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_usd: Option<f64>,
    #[serde(rename = "reqId")]
    pub req_id: String,
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(rename = "logTime")]
    pub log_time: String,
}

/// `tool_proposed`: the model asked for a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolProposed {
    /// The tool call id.
    #[serde(rename = "reqId")]
    pub req_id: String,
    pub name: String,
    #[ts(type = "unknown")]
    pub arguments: serde_json::Value,
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Extension: what kind of work the tool does (absent in logs written before it existed).
    #[serde(default)]
    #[ts(as = "Option<ToolKind>", optional)]
    pub kind: ToolKind,
    /// Extension: what the call is about, in one line, said by the tool (the command it runs,
    /// the files it writes, the path, pattern, query, URL or task); absent when it names
    /// nothing and in logs written before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub subject: Option<String>,
}

/// `permission_required`: the approver is about to be asked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PermissionRequired {
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(rename = "reqId")]
    pub req_id: String,
    /// Extension: the opaque id a face answers this request by (absent in logs written
    /// before it existed).
    #[serde(rename = "requestId", default)]
    pub request_id: String,
    pub name: String,
    #[ts(type = "unknown")]
    pub arguments: serde_json::Value,
    pub reason: String,
    pub category: String,
    /// What an "always allow" answer would allow (see [`crate::ApprovalRequest`]); absent when none
    /// is offered.
    #[serde(
        rename = "alwaysAllow",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub always_allow: Option<crate::AlwaysAllow>,
}

impl From<&crate::ApprovalRequest> for PermissionRequired {
    /// The event announcing `request`, emitted right before the approver is asked.
    fn from(request: &crate::ApprovalRequest) -> Self {
        PermissionRequired {
            task_id: request.task_id.clone(),
            req_id: request.req_id.clone(),
            request_id: request.request_id.clone(),
            name: request.name.clone(),
            arguments: request.arguments.clone(),
            reason: request.reason.clone(),
            category: request.category.clone(),
            always_allow: request.always_allow.clone(),
        }
    }
}

/// `tool_started`: a tool begins executing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolStarted {
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(rename = "reqId")]
    pub req_id: String,
    pub name: String,
    /// RFC 3339 start time.
    #[serde(rename = "startTime", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub start_time: Option<String>,
}

/// `tool_finished`: a tool call ended (ok, error, denied or interrupted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolFinished {
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(rename = "reqId")]
    pub req_id: String,
    pub name: String,
    pub status: ToolStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reason: Option<String>,
    /// Milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub duration: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub result_preview: Option<String>,
    /// Extension: what kind of work the tool does (absent in logs written before it existed).
    #[serde(default)]
    #[ts(as = "Option<ToolKind>", optional)]
    pub kind: ToolKind,
    /// Extension: `result_preview` is only the start of the result (fetch the rest); absent
    /// in logs written before it existed.
    #[serde(default)]
    #[ts(as = "Option<bool>", optional)]
    pub truncated: bool,
    /// Extension: what the result carries besides text (images handed to the model).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ResultAttachment>>", optional)]
    pub attachments: Vec<ResultAttachment>,
    /// Extension: files the agent read that changed on disk since (the model's result says
    /// so in a notice; faces show this list instead of that text).
    #[serde(default, rename = "staleFiles", skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<String>>", optional)]
    pub stale_files: Vec<String>,
    /// Extension: a file edit that succeeded and left every file as it was (a write of the
    /// content the file already had): faces say "no change" instead of showing a diff.
    /// Absent (false) in logs written before it existed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub unchanged: bool,
}

/// Something a tool result carries besides its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ResultAttachment {
    /// `image`.
    pub kind: String,
    /// MIME type, e.g. `image/png`.
    #[serde(rename = "mimeType")]
    pub mime_type: String,
}

/// `iteration_end`: one LLM call and its tools are done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct IterationEnd {
    pub iteration: u32,
    #[serde(rename = "taskId")]
    pub task_id: String,
}

/// `turn_end`: always the last event of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TurnEnd {
    pub status: TurnStatus,
    pub iterations: u32,
    pub produced_files: Vec<String>,
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Extension: token usage summed over the turn's LLM requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub usage: Option<TokenUsage>,
    /// Extension: cost of the turn in USD, when every request's price is known.
    #[serde(rename = "costUsd", default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub cost_usd: Option<f64>,
}

/// `error`: an engine or LLM error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ErrorEvent {
    pub error: String,
    pub error_type: String,
    pub retriable: bool,
    pub iteration: u32,
    #[serde(rename = "reqId")]
    pub req_id: String,
    #[serde(rename = "logTime")]
    pub log_time: String,
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub stack: Option<String>,
}

/// `interrupted`: the user interrupted the turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Interrupted {
    pub iterations: u32,
    #[serde(rename = "reqId")]
    pub req_id: String,
    #[serde(rename = "taskId")]
    pub task_id: String,
}

/// `queue_steering`: a queued instruction was injected between iterations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct QueueSteering {
    pub text: String,
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub attachments: Option<Vec<crate::CarriedRef>>,
}

/// `llm_request`: an LLM request is about to be sent (audit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct LlmRequest {
    #[serde(rename = "reqId")]
    pub req_id: String,
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(rename = "logTime")]
    pub log_time: String,
    pub model: String,
    #[serde(rename = "msgCount")]
    pub msg_count: u32,
    #[serde(rename = "toolCount")]
    pub tool_count: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub compact: Option<bool>,
}

/// `ask_user_question`: the model asked the user a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct AskUserQuestion {
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Extension: the opaque id a face answers this request by (absent in logs written
    /// before it existed).
    #[serde(rename = "requestId", default)]
    pub request_id: String,
    pub question: String,
    pub options: Vec<String>,
    #[serde(rename = "allowText")]
    pub allow_text: bool,
    pub multi: bool,
}

/// `plan_proposed`: the model proposed a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PlanProposed {
    pub plan: String,
    /// Extension: the opaque id a face answers this request by (absent in logs written
    /// before it existed).
    #[serde(rename = "requestId", default)]
    pub request_id: String,
}

/// `directory_requested`: the model asked for access to another directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct DirectoryRequested {
    pub reason: String,
    pub path: String,
    pub writable: bool,
    /// Extension: the opaque id a face answers this request by (absent in logs written
    /// before it existed).
    #[serde(rename = "requestId", default)]
    pub request_id: String,
}

/// `llm_retry`: a transient LLM failure is being retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct LlmRetry {
    pub attempt: u32,
    pub max: u32,
    pub reason: String,
    #[serde(rename = "waitMs")]
    pub wait_ms: u64,
    pub iteration: u32,
    #[serde(rename = "reqId")]
    pub req_id: String,
}

/// `session_named`: the session got a name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SessionNamed {
    pub name: String,
    pub source: String,
}

/// `progress`: a long piece of work before or inside a turn (creating a worktree, a first
/// snapshot of a big tree), sent when it takes over a second.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Progress {
    /// What: `worktree`, `snapshot`.
    pub task: String,
    /// Units done so far (files).
    #[ts(type = "number")]
    pub done: u64,
    /// Units in all, when known.
    #[ts(type = "number | null")]
    pub total: Option<u64>,
}

/// `tool_output`: partial output of a running tool (shell, command session), in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolOutput {
    #[serde(rename = "taskId")]
    pub task_id: String,
    #[serde(rename = "reqId")]
    pub req_id: String,
    pub name: String,
    pub text: String,
}

/// `mcp_log`: a log message an MCP server sent (`notifications/message`) while one of its
/// tools ran for this turn (extension).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct McpLog {
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// The tool call it came during.
    #[serde(rename = "reqId")]
    pub req_id: String,
    /// The server's configured name.
    pub server: String,
    /// `debug` … `emergency` (RFC 5424 levels).
    pub level: String,
    /// The server's logger name, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub logger: Option<String>,
    /// The message (JSON data as compact text), bounded and scrubbed of secrets.
    pub message: String,
}

/// Status of one todo item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One item of the agent's todo list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TodoItem {
    pub content: String,
    pub status: TodoStatus,
}

/// `todos_updated`: the agent's todo list changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TodosUpdated {
    #[serde(rename = "taskId")]
    pub task_id: String,
    pub todos: Vec<TodoItem>,
}

/// `subagent_event`: an event of a child agent (explore, run_subagent), forwarded with its
/// origin; it never enters the parent's history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SubagentEvent {
    /// The child session's id.
    pub origin: String,
    /// Which agent (`explore`, a role name).
    pub agent: String,
    /// The parent's tool call that runs the child.
    #[serde(rename = "parentReqId")]
    pub parent_req_id: String,
    /// The child's event.
    pub event: Box<Event>,
}

/// One event of the engine's stream, serialised as `{"type": ..., "data": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", content = "data", rename_all = "snake_case")]
#[ts(export)]
pub enum Event {
    TurnStart(TurnStart),
    LlmRequest(LlmRequest),
    AssistantDelta(TextDelta),
    ReasoningDelta(TextDelta),
    AssistantMessage(AssistantMessage),
    ToolProposed(ToolProposed),
    PermissionRequired(PermissionRequired),
    ToolStarted(ToolStarted),
    ToolFinished(ToolFinished),
    IterationEnd(IterationEnd),
    TurnEnd(TurnEnd),
    Error(ErrorEvent),
    Interrupted(Interrupted),
    Compacting(Compacting),
    Compacted(Compacted),
    QueueSteering(QueueSteering),
    AskUserQuestion(AskUserQuestion),
    PlanProposed(PlanProposed),
    DirectoryRequested(DirectoryRequested),
    LlmRetry(LlmRetry),
    SessionNamed(SessionNamed),
    /// Extension: partial tool output.
    ToolOutput(ToolOutput),
    /// Extension: the todo list changed.
    TodosUpdated(TodosUpdated),
    /// Extension: a child agent's event, with its origin.
    SubagentEvent(SubagentEvent),
    /// Extension: progress of long work (worktree creation, a first snapshot).
    Progress(Progress),
    /// Extension: an MCP server's log message during one of its tool calls.
    McpLog(McpLog),
    /// Extension: an MCP server asks the user for information during one of its tool calls.
    ElicitationRequested(crate::elicit::ElicitationRequested),
    /// Extension: the session used 80 % of its spending cap (or cannot enforce it).
    BudgetWarning(crate::budget::BudgetWarning),
    /// Extension: the session's model changed, with what depends on it.
    ModelSwitched(crate::model_switch::ModelSwitched),
}

impl Event {
    /// The wire type name (`turn_start`, `tool_finished`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Event::TurnStart(_) => "turn_start",
            Event::LlmRequest(_) => "llm_request",
            Event::AssistantDelta(_) => "assistant_delta",
            Event::ReasoningDelta(_) => "reasoning_delta",
            Event::AssistantMessage(_) => "assistant_message",
            Event::ToolProposed(_) => "tool_proposed",
            Event::PermissionRequired(_) => "permission_required",
            Event::ToolStarted(_) => "tool_started",
            Event::ToolFinished(_) => "tool_finished",
            Event::IterationEnd(_) => "iteration_end",
            Event::TurnEnd(_) => "turn_end",
            Event::Error(_) => "error",
            Event::Interrupted(_) => "interrupted",
            Event::Compacting(_) => "compacting",
            Event::Compacted(_) => "compacted",
            Event::QueueSteering(_) => "queue_steering",
            Event::AskUserQuestion(_) => "ask_user_question",
            Event::PlanProposed(_) => "plan_proposed",
            Event::DirectoryRequested(_) => "directory_requested",
            Event::LlmRetry(_) => "llm_retry",
            Event::SessionNamed(_) => "session_named",
            Event::ToolOutput(_) => "tool_output",
            Event::TodosUpdated(_) => "todos_updated",
            Event::SubagentEvent(_) => "subagent_event",
            Event::Progress(_) => "progress",
            Event::McpLog(_) => "mcp_log",
            Event::ElicitationRequested(_) => "elicitation_requested",
            Event::BudgetWarning(_) => "budget_warning",
            Event::ModelSwitched(_) => "model_switched",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialise_as_type_and_data() -> Result<(), serde_json::Error> {
        let e = Event::ToolFinished(ToolFinished {
            task_id: "t".into(),
            req_id: "c1".into(),
            name: "run_shell".into(),
            status: ToolStatus::Denied,
            reason: Some("user denied".into()),
            duration: None,
            result_preview: None,
            kind: ToolKind::Command,
            truncated: false,
            attachments: Vec::new(),
            stale_files: Vec::new(),
            unchanged: false,
        });
        let v = serde_json::to_value(&e)?;
        assert_eq!(v["type"], "tool_finished");
        assert_eq!(v["data"]["kind"], "command");
        assert_eq!(v["data"]["truncated"], false);
        assert!(v["data"].get("attachments").is_none());
        assert_eq!(v["data"]["taskId"], "t");
        assert_eq!(v["data"]["reqId"], "c1");
        assert_eq!(v["data"]["status"], "denied");
        assert!(v["data"].get("duration").is_none());
        assert_eq!(e.type_name(), "tool_finished");
        let back: Event = serde_json::from_value(v)?;
        assert_eq!(back, e);
        Ok(())
    }

    #[test]
    fn a_steering_turn_start_says_so_and_an_input_one_stays_as_it_was(
    ) -> Result<(), serde_json::Error> {
        let start = |source| {
            Event::TurnStart(TurnStart {
                task_id: "t".into(),
                input: "also test it".into(),
                attachment_count: None,
                attachments: None,
                session_id: "s".into(),
                turn: 2,
                source,
                worktree: None,
                sandbox: None,
            })
        };
        let v = serde_json::to_value(start(TurnSource::Steering))?;
        assert_eq!(v["data"]["source"], "steering");
        let v = serde_json::to_value(start(TurnSource::Input))?;
        assert!(v["data"].get("source").is_none());
        // Logs written before the field existed read as input.
        let old: Event = serde_json::from_value(v)?;
        assert_eq!(old, start(TurnSource::Input));
        Ok(())
    }

    #[test]
    fn run_end_is_tagged_by_kind() -> Result<(), serde_json::Error> {
        let end = crate::RunEnd::Ended {
            status: TurnStatus::Completed,
            turns: 2,
            steering_turns: 1,
        };
        let v = serde_json::to_value(end)?;
        assert_eq!(v["kind"], "ended");
        assert_eq!(v["steeringTurns"], 1);
        assert_eq!(
            serde_json::to_value(crate::RunEnd::NotStarted)?["kind"],
            "not_started"
        );
        Ok(())
    }

    #[test]
    fn turn_end_uses_snake_case_fields() -> Result<(), serde_json::Error> {
        let e = Event::TurnEnd(TurnEnd {
            status: TurnStatus::MaxIterationsExceeded,
            iterations: 3,
            produced_files: vec!["a.txt".into()],
            task_id: "t".into(),
            usage: None,
            cost_usd: None,
        });
        let v = serde_json::to_value(&e)?;
        assert_eq!(v["data"]["status"], "max_iterations_exceeded");
        assert_eq!(v["data"]["produced_files"][0], "a.txt");
        Ok(())
    }
}
