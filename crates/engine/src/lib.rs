//! The Cairn agent engine: one session runs turns of LLM calls and tool executions and
//! reports everything as an ordered stream of [`cairn_protocol::Event`]s.

pub mod approval;
pub mod llm;
pub mod tool;

pub use approval::{Approver, FixedApprover};
pub use llm::{
    FailureKind, LlmChunk, LlmClient, LlmOutcome, LlmRequest, OutcomeStatus, ReasoningEffort,
};
pub use tool::{parse_args, Tool, ToolContext, ToolError, ToolHandle, ToolOutput};
