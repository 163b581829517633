//! The subagent runner (seed 000 `SubagentRunner`): derives a child session for a role, with
//! an optional model override, the parent's approver and permission mode, its own tools and
//! context, within depth and concurrency limits.

use std::sync::{Arc, RwLock};

use tokio::sync::Semaphore;

use super::approver::ChildApprover;
use super::handle::{short_id, SubagentHandle, SubagentSessions};
use super::registry::AgentRegistry;
use crate::config::EngineConfig;
use crate::llm::LlmClient;
use crate::locks::read;
use crate::prompt::{Environment, Lang, ProjectNote};
use crate::registry::ToolRegistry;
use crate::session::Session;
use crate::tool::{ToolContext, ToolError};

/// Default deepest nesting: the parent is depth 0, its children depth 1, grandchildren 2.
pub const DEFAULT_MAX_DEPTH: u32 = 2;
/// Default number of children running at the same time across one session tree.
pub const DEFAULT_MAX_CONCURRENT: usize = 4;
/// Default number of open (continuable) children per parent session.
pub const DEFAULT_MAX_OPEN: usize = 8;

/// A complete model reference: provider and model id together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRef {
    /// Provider name (`openai`, `anthropic`, ...).
    pub provider: String,
    /// Model id.
    pub model: String,
}

impl ModelRef {
    /// Both halves or neither; one half alone (or a blank one) is refused.
    pub fn pair(
        model: Option<String>,
        provider: Option<String>,
    ) -> Result<Option<Self>, ToolError> {
        let clean = |o: Option<String>| o.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
        match (clean(model), clean(provider)) {
            (Some(model), Some(provider)) => Ok(Some(ModelRef { provider, model })),
            (None, None) => Ok(None),
            _ => Err(ToolError::InvalidArguments(
                "a model override needs both `model` and `provider` (or neither, to inherit the parent's model)"
                    .into(),
            )),
        }
    }
}

/// Builds an LLM client for another provider (e.g. the runtime's `build_llm`).
pub type LlmFactory = Arc<dyn Fn(&ModelRef) -> Result<Arc<dyn LlmClient>, String> + Send + Sync>;

/// Builds a fresh tool set for each child (so each child owns its command sessions).
pub type ToolsFactory = Arc<dyn Fn() -> ToolRegistry + Send + Sync>;

/// Depth and concurrency limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubagentLimits {
    /// Deepest child level allowed (parent = 0).
    pub max_depth: u32,
    /// Children running at the same time in the whole tree.
    pub max_concurrent: usize,
    /// Open children per parent session.
    pub max_open: usize,
}

impl Default for SubagentLimits {
    fn default() -> Self {
        SubagentLimits {
            max_depth: DEFAULT_MAX_DEPTH,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            max_open: DEFAULT_MAX_OPEN,
        }
    }
}

/// What to spawn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpawnRequest {
    /// Role name; `None` = the current role (self-invocation).
    pub agent_id: Option<String>,
    /// Model override, complete or absent.
    pub model: Option<ModelRef>,
}

/// Derives child sessions; shared by the `run_subagent` tools of one session tree.
#[derive(Clone)]
pub struct SubagentRunner {
    agents: Arc<RwLock<AgentRegistry>>,
    base: EngineConfig,
    llm: Arc<dyn LlmClient>,
    provider: String,
    llm_factory: Option<LlmFactory>,
    tools: ToolsFactory,
    lang: Lang,
    env: Environment,
    notes: Vec<ProjectNote>,
    limits: SubagentLimits,
    depth: u32,
    running: Arc<Semaphore>,
}

impl SubagentRunner {
    /// A runner whose children use `llm` (of `provider`) unless overridden, `base` as their
    /// config template and a fresh `tools()` set each.
    pub fn new(
        llm: Arc<dyn LlmClient>,
        provider: &str,
        base: EngineConfig,
        tools: ToolsFactory,
    ) -> Self {
        let limits = SubagentLimits::default();
        SubagentRunner {
            agents: Arc::new(RwLock::new(AgentRegistry::new())),
            base,
            llm,
            provider: provider.to_string(),
            llm_factory: None,
            tools,
            lang: Lang::default(),
            env: Environment::default(),
            notes: Vec::new(),
            limits,
            depth: 0,
            running: Arc::new(Semaphore::new(limits.max_concurrent)),
        }
    }

    /// Uses this role table (shared: role changes are seen by later spawns).
    pub fn with_agents(mut self, agents: Arc<RwLock<AgentRegistry>>) -> Self {
        self.agents = agents;
        self
    }

    /// Builds clients for model overrides on other providers.
    pub fn with_llm_factory(mut self, f: LlmFactory) -> Self {
        self.llm_factory = Some(f);
        self
    }

    /// Sets the depth and concurrency limits.
    pub fn with_limits(mut self, limits: SubagentLimits) -> Self {
        self.limits = limits;
        self.running = Arc::new(Semaphore::new(limits.max_concurrent.max(1)));
        self
    }

    /// Language, environment block and project notes for the children's system prompts.
    pub fn with_prompt_context(
        mut self,
        lang: Lang,
        env: Environment,
        notes: Vec<ProjectNote>,
    ) -> Self {
        self.lang = lang;
        self.env = env;
        self.notes = notes;
        self
    }

    /// The depth of the session this runner spawns from (parent = 0).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The `run_subagent` and `input_subagent` tools for the session at this runner's depth,
    /// sharing one table of open children.
    pub fn tools(
        &self,
    ) -> (
        super::tools::RunSubagentTool,
        super::tools::InputSubagentTool,
    ) {
        let sessions = Arc::new(SubagentSessions::new(self.limits.max_open));
        (
            super::tools::RunSubagentTool::new(Arc::new(self.clone()), sessions.clone()),
            super::tools::InputSubagentTool::new(sessions),
        )
    }

    /// Derives a child session for a parent tool call. Errors: depth limit, unknown role,
    /// no client for the override's provider.
    pub fn spawn(&self, req: SpawnRequest, ctx: &ToolContext) -> Result<SubagentHandle, ToolError> {
        let child_depth = self.depth + 1;
        if child_depth > self.limits.max_depth {
            return Err(ToolError::Failed(format!(
                "subagent depth limit reached: this agent runs at depth {} and the limit is {}; do the work yourself instead of delegating",
                self.depth, self.limits.max_depth
            )));
        }
        let (def, instructions) = {
            let agents = read(&self.agents);
            let name = req
                .agent_id
                .clone()
                .filter(|a| !a.trim().is_empty())
                .unwrap_or_else(|| agents.current().name.clone());
            let def = agents
                .require(name.trim())
                .map_err(|e| ToolError::Failed(e.to_string()))?
                .clone();
            let instructions = agents
                .build_system_prompt(&def.name, self.lang, &self.env, &self.notes)
                .map_err(|e| ToolError::Failed(e.to_string()))?;
            (def, instructions)
        };
        // Explicit override, else the role's model, else the parent's.
        let model = req.model.clone().or_else(|| {
            def.model.clone().map(|m| ModelRef {
                provider: def
                    .provider
                    .clone()
                    .unwrap_or_else(|| self.provider.clone()),
                model: m,
            })
        });
        let (llm, model_id) = match &model {
            None => (self.llm.clone(), self.base.model.clone()),
            Some(m) if m.provider == self.provider => (self.llm.clone(), m.model.clone()),
            Some(m) => {
                let factory = self.llm_factory.as_ref().ok_or_else(|| {
                    ToolError::Failed(format!(
                        "cannot use provider `{}` for a subagent: only `{}` is configured",
                        m.provider, self.provider
                    ))
                })?;
                let llm = factory(m).map_err(|e| {
                    ToolError::Failed(format!(
                        "cannot use provider `{}` for a subagent: {e}",
                        m.provider
                    ))
                })?;
                (llm, m.model.clone())
            }
        };
        let mut config = self.base.clone();
        config.session_id = uuid::Uuid::new_v4().to_string();
        config.model = model_id;
        config.instructions = instructions;
        if let Some(mode) = ctx.host.mode() {
            config.mode = mode;
        }
        config.state_dir = ctx
            .state_dir
            .join("subagents")
            .join(short_id(&config.session_id));
        let mut child_runner = self.clone();
        child_runner.depth = child_depth;
        let mut tools = (self.tools)();
        let (run, input) = child_runner.tools();
        tools.register(Arc::new(run));
        tools.register(Arc::new(input));
        let origin = config.session_id.clone();
        let mut builder = Session::builder(config, llm)
            .tools(tools)
            .inherit_from(&ctx.host);
        if let Some(parent) = ctx.host.approver() {
            builder = builder.approver(Arc::new(ChildApprover::new(
                parent,
                &def.name,
                &short_id(&origin),
            )));
        }
        tracing::debug!(agent = %def.name, depth = child_depth, %origin, "subagent spawned");
        Ok(SubagentHandle::new(
            builder.build(),
            &def.name,
            self.running.clone(),
            self.limits.max_concurrent,
        ))
    }
}
