//! General subagents and agent roles (seed 000 subagent interfaces, seed §16.2): the role
//! table, the runner that derives child sessions (role, model override as a complete pair,
//! inherited approver and permissions, depth and concurrency limits), the handles of open
//! children and the `run_subagent` / `input_subagent` tools.

mod approver;
mod handle;
pub(crate) mod pump;
mod registry;
mod runner;
mod switch;
mod tools;

pub use approver::ChildApprover;
pub use handle::{short_id, SubagentHandle, SubagentSessions};
pub use pump::run_child_turn;
pub use registry::{AgentDef, AgentError, AgentPatch, AgentRegistry, BUILTIN_AGENTS};
pub use runner::{
    LlmFactory, ModelRef, SpawnRequest, SubagentLimits, SubagentRunner, ToolsFactory,
    DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_DEPTH, DEFAULT_MAX_OPEN,
};
pub use switch::switch_role;
pub use tools::{InputSubagentTool, RunSubagentTool};
