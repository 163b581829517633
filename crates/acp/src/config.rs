//! How `cairn acp` opens sessions ([`AcpConfig`]).

use std::sync::Arc;

use cairn_runtime::llm_setup::LlmSetup;
use cairn_runtime::RunOptions;

/// Builds the LLM client of a session from its options (tests point it at a mock model);
/// `None` = the runtime's own (the environment and the keyring).
pub type LlmFactory = Arc<dyn Fn(&RunOptions) -> Option<LlmSetup> + Send + Sync>;

/// How `cairn acp` opens sessions: the global flags of `cairn run`.
#[derive(Clone, Default)]
pub struct AcpConfig {
    /// The options every session starts from (provider, model, base URL, mode, state dir,
    /// sandbox…); the workspace comes from the client's `cwd`, the session id from
    /// `session/load`.
    pub options: RunOptions,
    /// The LLM client of a session; `None` = built from the options.
    pub llm: Option<LlmFactory>,
}
