//! The Cairn agent engine: one session runs turns of LLM calls and tool executions and
//! reports everything as an ordered stream of [`cairn_protocol::Event`]s.

pub mod agents;
pub mod approval;
pub mod attachments;
pub mod budget;
pub mod checkpoint;
pub mod compaction;
pub mod config;
pub mod execenv;
pub mod gate;
pub mod hook;
pub mod host;
pub mod host_mcp;
pub mod llm;
mod locks;
pub mod net_gate;
/// The sandbox's network proxy and bridge (binaries call `netproxy::bridge::main_if_bridge`).
pub use cairn_netproxy as netproxy;
pub mod permission;
mod permission_reads;
pub mod process_session;
mod produced;
pub mod prompt;
pub mod registry;
pub mod repair;
pub mod resume;
pub mod retry;
pub mod rewind;
mod run;
pub mod secret_env;
pub mod session;
mod shrink;
pub mod spend;
mod state;
mod stream;
pub mod subagent;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub mod tokens;
pub mod tool;
mod tool_error;
mod turn;
pub mod turn_options;

pub use agents::{
    AgentDef, AgentRegistry, InputSubagentTool, ModelRef, RunSubagentTool, SubagentLimits,
    SubagentRunner,
};
pub use approval::{Approver, FixedApprover};
pub use budget::ResultBudget;
/// Deny path rules as a read filter (walking tools, `@path` mentions).
pub use cairn_policy::ReadDenials;
pub use checkpoint::{CheckpointError, Checkpointer, SideEffect};
pub use compaction::CompactionConfig;
pub use config::{DefaultApproval, EngineConfig, DEFAULT_MAX_ITERATIONS};
pub use execenv::{CommandWrapper, ExecEnvironment, WrappedCommand};
pub use gate::{Gate, GateInput, GatePoint, GateVerdict};
pub use hook::{EngineHook, StateSnapshot};
pub use host::ToolHost;
pub use llm::{
    answer_text, FailureKind, LlmChunk, LlmClient, LlmOutcome, LlmRequest, OutcomeStatus, Pricing,
    ReasoningEffort,
};
pub use permission::{
    Capability, CommandRun, Decision, PermissionEngine, PermissionState, PermissionSubject,
    ShellPolicy,
};
pub use registry::{RegisteredTool, ToolRegistry};
pub use repair::repair_history;
pub use retry::{RetryPolicy, TRANSIENT_400_SHAPES};
pub use rewind::{RewindError, Rewound, TurnMark};
pub use session::{EventStream, Session, SessionBuilder};
pub use subagent::ExploreTool;
pub use tool::{parse_args, Tool, ToolContext, ToolError, ToolHandle, ToolOutput};
pub use turn_options::{ShellLine, TurnOptions};
