//! Engine configuration.

use std::path::PathBuf;

use cairn_protocol::Mode;

use crate::budget::ResultBudget;
use crate::compaction::CompactionConfig;
use crate::llm::ReasoningEffort;
use crate::retry::RetryPolicy;

/// What happens when a call needs approval and no approver was set (seed `defaultApproval`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DefaultApproval {
    /// End the turn with an error naming the tool (the default: a missing approver is a bug).
    #[default]
    Error,
    /// Deny the call.
    Deny,
    /// Allow the call.
    Allow,
}

/// Default iteration cap for one turn.
pub const DEFAULT_MAX_ITERATIONS: u32 = 800;

/// Everything a session needs besides its LLM client, tools and approver.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Session id (also the default state sub-directory name).
    pub session_id: String,
    /// Workspace root: the permission boundary.
    pub workspace: PathBuf,
    /// Session state dir (tool results, logs).
    pub state_dir: PathBuf,
    /// Folders shell commands never read unasked (Cairn's own state: other sessions, the
    /// vault), even when they look read-only.
    pub private_dirs: Vec<PathBuf>,
    /// Model id; empty ⇒ `run` fails with a clear error.
    pub model: String,
    /// System prompt, injected as the first message.
    pub instructions: String,
    /// Initial permission mode.
    pub mode: Mode,
    /// Command-allowlist prefixes.
    pub allowed_commands: Vec<String>,
    /// Iteration cap per turn.
    pub max_iterations: u32,
    /// After hitting the cap, run one more LLM call without tools to wrap up.
    pub finalize_on_max_iterations: bool,
    /// Reasoning effort passed to the provider.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Retry policy for transient LLM failures.
    pub retry: RetryPolicy,
    /// Tool result budget.
    pub budget: ResultBudget,
    /// Default per-tool timeout when a tool declares none (ms); `None` = no limit.
    pub default_tool_timeout_ms: Option<u64>,
    /// Context window and compaction thresholds.
    pub compaction: CompactionConfig,
    /// Behaviour when approval is needed but no approver was set.
    pub default_approval: DefaultApproval,
    /// The Cairn-made git worktree the session runs in (reported in `turn_start`).
    pub worktree: Option<cairn_protocol::WorktreeRef>,
    /// The session's spending cap; `None` = none.
    pub spend_limit: Option<crate::spend::SpendLimit>,
}

impl EngineConfig {
    /// A config with defaults for everything but the essentials.
    pub fn new(workspace: PathBuf, state_dir: PathBuf, model: impl Into<String>) -> Self {
        EngineConfig {
            session_id: uuid::Uuid::new_v4().to_string(),
            workspace,
            state_dir,
            private_dirs: Vec::new(),
            model: model.into(),
            instructions: crate::prompt::default_instructions(),
            mode: Mode::Interactive,
            allowed_commands: Vec::new(),
            max_iterations: DEFAULT_MAX_ITERATIONS,
            finalize_on_max_iterations: false,
            reasoning_effort: None,
            retry: RetryPolicy::default(),
            budget: ResultBudget::default(),
            default_tool_timeout_ms: None,
            compaction: CompactionConfig::default(),
            default_approval: DefaultApproval::Error,
            worktree: None,
            spend_limit: None,
        }
    }
}
