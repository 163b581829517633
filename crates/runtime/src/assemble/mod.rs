//! Assembling a session from what a face decided: the workspace and state dir, the
//! restored or new session, its LLM, tools, MCP servers, sandbox, rules and prompt, with its
//! event log attached ([`open_session`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use cairn_engine::agents::{AgentDef, AgentRegistry};
use cairn_engine::{Approver, EngineConfig, LlmClient, Session};
use cairn_protocol::Mode;

use crate::checkpoints;
use crate::checkpoints::VcsMode;
use crate::error::RuntimeError;
use crate::hooks;
use crate::llm_setup::build_llm;
use crate::mcp;
use crate::permissions;
use crate::reserved;
use crate::sandbox;
use crate::skills;
use crate::skipped;
use crate::store;
use crate::store::{SavedSession, SessionPersister, SessionStore, StoreError};
use crate::tooling::tools_with_agents;
use crate::worktrees;

mod defaults;
mod model_switch;
mod prompt;
mod sandbox_options;
mod steps;
pub use defaults::{
    agent_type_from_env, compaction_config, default_state_dir, lang_from_env, resolve_model,
    resolve_workspace,
};
use sandbox_options::sandbox_options;
pub use sandbox_options::sandbox_report;

/// What the caller decided; `None` fields fall back to the restored session, then defaults.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Workspace folder; `None` = the restored session's, else the current dir.
    pub workspace: Option<PathBuf>,
    /// State dir; `None` = [`default_state_dir`].
    pub state_dir: Option<PathBuf>,
    /// Continue this session.
    pub session_id: Option<String>,
    /// Model id; `None` = restored, then `CAIRN_MODEL`, then `OPENAI_MODEL`.
    pub model: Option<String>,
    /// Provider name (`openai`).
    pub provider: Option<String>,
    /// Endpoint base URL; `None` = `OPENAI_BASE_URL`, then the provider's.
    pub base_url: Option<String>,
    /// Permission mode; `None` = restored, then interactive.
    pub mode: Option<Mode>,
    /// Command-allowlist prefixes.
    pub allowed_commands: Vec<String>,
    /// Iteration cap per turn.
    pub max_iterations: Option<u32>,
    /// Context window override in tokens; `None` = the model table, else 128K.
    pub context_window: Option<u64>,
    /// The session's spending cap; `None` = `CAIRN_BUDGET_USD` / `CAIRN_BUDGET_TOKENS`, else
    /// none.
    pub spend_limit: Option<cairn_engine::spend::SpendLimit>,
    /// Per-turn workspace snapshots (`auto`) or none (`off`).
    pub vcs: VcsMode,
    /// OS sandbox mode; `None` = `CAIRN_SANDBOX`, then the sandbox settings, then `auto`.
    pub sandbox: Option<cairn_policy::sandbox::SandboxMode>,
    /// Extra folders commands may write inside the sandbox (`--sandbox-writable`), besides
    /// the settings' `extraWritable`.
    pub sandbox_writable: Vec<PathBuf>,
    /// Extra paths hidden inside the sandbox (`--sandbox-hide`), besides the settings'.
    pub sandbox_hidden: Vec<PathBuf>,
    /// The network of sandboxed commands (`--sandbox-network proxy|none|open`); `None` =
    /// the settings' `network`, else `proxy`.
    pub sandbox_network: Option<crate::sandbox_net::SandboxNetwork>,
    /// Hosts sandboxed commands reach without asking (`--allow-domain`), besides the
    /// defaults and the `Network(...)` rules.
    pub allow_domains: Vec<String>,
    /// Shell policy; `None` = `CAIRN_SHELL_POLICY`, then `approve`.
    pub shell_policy: Option<cairn_engine::ShellPolicy>,
    /// Agent role (`code`, `cowork` or a user role from `agents.json`); `None` = `CAIRN_AGENT`,
    /// else `code`. A role's model applies unless `model` is given.
    pub agent: Option<String>,
    /// The Cairn-made git worktree `workspace` is in ([`worktrees::prepare`]); `None` = a
    /// folder session, or the restored session's worktree.
    pub worktree: Option<cairn_protocol::WorktreeRef>,
    /// The configuration the session reads (hooks, MCP servers, skills, commands, rules,
    /// instructions, sandbox settings, roles); the default is the user's, as the CLI and the
    /// app read it.
    pub config: crate::config_scope::ConfigScope,
    /// MCP servers the face passes for this session (an editor's, over ACP): trusted as the
    /// editor's own, their stdio servers sandboxed like a project's ([`crate::mcp_editor`]).
    pub mcp_servers: Vec<crate::mcp_editor::EditorServer>,
    /// Reasoning level (`--reasoning`); `None` = `CAIRN_THINKING_LEVEL`, then the
    /// `reasoning` setting, then the model's.
    pub reasoning: Option<String>,
    /// Prompt language (`--lang`); `None` = `CAIRN_LANG`, then the `language` setting, else
    /// English.
    pub language: Option<cairn_engine::prompt::Lang>,
    /// Retries of a failed LLM request (`--retries`); `None` = `NETWORK_RETRY_MAX`, then the
    /// `retries` setting, then 2.
    pub retries: Option<u32>,
    /// Cap on the tokens of one answer (`--max-output-tokens`); `None` =
    /// `CAIRN_MAX_OUTPUT_TOKENS`, then the setting, then the model's.
    pub max_output_tokens: Option<u64>,
    /// How long an approval (or question) waits before it is denied (`--approval-timeout`);
    /// `None` = `CAIRN_APPROVAL_TIMEOUT`, then the `approval_timeout` setting, else no limit.
    /// Applied by [`crate::host::Host::open`].
    pub approval_timeout: Option<std::time::Duration>,
    /// Tools never offered (`--disable-tool`), besides the user's `tools.disabled`.
    pub disabled_tools: Vec<String>,
}

/// A session ready to run, with what is needed to persist it.
pub struct Assembled {
    /// The engine session.
    pub session: Session,
    /// Where it is saved.
    pub store: SessionStore,
    /// Writes its event log and checkpoints.
    pub persister: Arc<SessionPersister>,
    /// The state dir in use.
    pub state_dir: PathBuf,
    /// The session's MCP servers (dropping this kills them; see [`Assembled::close_mcp`]).
    pub mcp: mcp::McpSession,
    /// The role table (built-ins plus `agents.json`); its current role is the session's.
    pub agents: Arc<RwLock<AgentRegistry>>,
    /// Whether the session's commands run sandboxed.
    pub sandbox: sandbox::SandboxState,
    /// What the system prompts are built from (kept for role switches).
    prompt: prompt::SystemPrompt,
    /// What the user must be told about how the session was opened (e.g. rebuilt from its
    /// event log, permissions reset): stderr in the CLI, a notice in the app.
    pub notice: Option<String>,
    /// What Cairn skipped for lack of trust (project hooks, project MCP servers), each named
    /// once per run: stderr in the CLI, a banner in the app.
    pub untrusted: Vec<String>,
    /// The same, as typed facts, as the session was opened (see [`Assembled::skipped_now`]).
    pub skipped: Vec<skipped::SkippedView>,
    /// The hooks' part of it now (trusting them while the session is open clears it).
    hook_skipped: std::sync::Mutex<Option<skipped::SkippedView>>,
    /// The configuration the session reads (commands are read again at each submit).
    pub config: crate::config_scope::ConfigScope,
    /// The context window the session was given explicitly (it survives model switches).
    pub window_override: Option<u64>,
    /// The user's per-tool settings (tools re-made on a model switch follow them too).
    tool_settings: crate::user_config::ToolSettings,
}

impl Assembled {
    /// Stops the session's MCP servers gracefully (stdin closed, SIGTERM, then SIGKILL,
    /// bounded). Dropping the [`Assembled`] also kills them, without the grace.
    pub async fn close_mcp(&self) {
        self.mcp.close().await;
    }
    /// Switches the session to another role for the next turn: its system prompt, and its
    /// model (with a new client when the role names another provider).
    pub async fn switch_agent(&self, name: &str) -> Result<AgentDef, RuntimeError> {
        let mut agents = self
            .agents
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let def = agents
            .require(name)
            .map_err(|e| RuntimeError::Config(e.to_string()))?;
        if let (Some(provider), Some(_)) = (&def.provider, &def.model) {
            self.session.set_llm(crate::mcp::gated(
                build_llm(provider, None)?,
                self.mcp.manager(),
            ));
        }
        // The role's prompt (skills still listed) replaces the whole system prompt.
        let prompt = self.prompt.for_role(&agents, name)?;
        let def = agents
            .switch(name)
            .map_err(|e| RuntimeError::Config(e.to_string()))?
            .clone();
        self.session.set_system_prompt(prompt).await;
        if let Some(model) = &def.model {
            self.switch_model(model);
        }
        *self.agents.write().unwrap_or_else(|e| e.into_inner()) = agents;
        Ok(def)
    }

    /// What Cairn skips for lack of trust now (the app's banner): the hooks as last read
    /// ([`Assembled::refresh_hooks`]) and the MCP servers.
    pub fn skipped_now(&self) -> Vec<skipped::SkippedView> {
        let mut now: Vec<_> = self
            .hook_skipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        now.extend(self.mcp.skipped().iter().cloned());
        now
    }

    /// Reads the hooks again for the next turn: a project's hooks trusted (or changed) while
    /// the session is open run from its next turn on, and the banner follows.
    pub fn refresh_hooks(&self, session_id: &str, workspace: &Path) {
        let hooks = hooks::load_in(workspace, &self.config);
        let gate = hooks
            .gate_in(session_id, workspace, self.session.command_wrapper())
            .map(|g| g as Arc<dyn cairn_engine::Gate>);
        self.session.set_gate(gate);
        *self
            .hook_skipped
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = hooks.skipped(workspace);
    }

    /// Renames the session on the user's behalf (wins over automatic names).
    pub fn rename(&self, name: &str) -> Result<(), StoreError> {
        self.persister.update(|s| {
            s.name = name.trim().to_string();
            s.name_source = "user".into();
        })
    }

    /// Saves history, permission state, todos and turn count now (atomic replace).
    pub async fn checkpoint(&self) -> Result<(), StoreError> {
        let messages = self.session.messages().await;
        let turns = self.session.turns().await;
        let permissions = self.session.permission_state();
        let todos = self.session.todos();
        let model = self.session.model();
        let turn_marks = self.session.turn_marks().await;
        // A save without a new turn or message (closing a session that was only looked
        // at) keeps its save time: the boards order sessions by it.
        self.persister.save_quietly(|s| {
            s.turn_marks = turn_marks;
            s.messages = messages;
            s.turns = turns;
            s.permissions = permissions;
            s.todos = todos;
            s.model = model;
            if s.name.is_empty() {
                s.name = store::derive_name(&s.messages);
            }
        })
    }
}

/// Creates or restores a session according to `opts`, with its event log attached.
pub fn open_session(
    opts: RunOptions,
    llm: Option<Arc<dyn LlmClient>>,
    approver: Arc<dyn Approver>,
) -> Result<Assembled, RuntimeError> {
    let state_dir = opts.state_dir.clone().unwrap_or_else(default_state_dir);
    let store = SessionStore::new(&state_dir);
    let steps::Restored {
        saved: mut restored,
        lock,
        notice,
    } = steps::restore(&store, &opts)?;
    let workspace = steps::workspace(&opts, restored.as_ref())?;
    reserved::refuse_reserved(&workspace, &state_dir).map_err(RuntimeError::Config)?;
    let (agents, role) = steps::roles(&state_dir, &workspace, &opts)?;
    let (model, provider) = steps::model_and_provider(&opts, &role, restored.as_ref())?;
    let llm = match llm {
        Some(l) => l,
        None => crate::llm_setup::build_llm_with(
            &provider,
            opts.base_url.clone(),
            opts.reasoning.as_deref(),
            opts.max_output_tokens,
        )?,
    };
    let session_id = restored
        .as_ref()
        .map(|r| r.session_id.clone())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());

    // The engine's settings.
    let mut config = EngineConfig::new(
        workspace.clone(),
        store.session_dir(&session_id)?,
        model.clone(),
    );
    config.session_id = session_id.clone();
    config.allowed_commands = opts.allowed_commands.clone();
    config.private_dirs = reserved::private_dirs(&state_dir);
    config.retry = defaults::retry_policy(opts.retries);
    config.budget = defaults::result_budget();
    if let Some(n) = opts.max_iterations.or_else(defaults::max_iterations) {
        config.max_iterations = n;
    }
    config.compaction = compaction_config(&model, opts.context_window);
    config.spend_limit = opts.spend_limit.or_else(crate::spend_env::limit_from_env);
    let (worktree, worktree_writable) =
        worktree_of(&opts, restored.as_ref(), &workspace, &state_dir)?;
    config.worktree = worktree;
    let permissions = steps::permissions(&store, restored.as_ref(), &opts)?;
    config.mode = permissions.mode;
    let scope = opts.config;
    let rules = permissions::load_rules_in(&workspace, &scope)?;
    let shell_policy = match opts.shell_policy {
        Some(p) => p,
        // Without the user config neither `CAIRN_SHELL_POLICY` nor the settings apply.
        None if !scope.user_config => cairn_engine::ShellPolicy::Approve,
        None => crate::sandbox_settings::default_shell_policy()?,
    };

    // The sandbox, then the system prompt that describes it.
    let mut sandbox_opts = sandbox_options(&opts)?;
    sandbox_opts.writable.extend(worktree_writable);
    let (exec, sandbox_state) =
        sandbox::exec_environment_with(&workspace, &state_dir, &sandbox_opts)?;
    // The vault entries of the session's role (and an old state-dir vault not migrated yet).
    let exec = exec.with_vault(crate::vault::session_env(&state_dir, &role.name, &scope)?);
    let sandbox_enforced = exec.wrapper.is_some();
    let wrapper = exec.wrapper.clone();
    let lang = opts.language.unwrap_or_else(lang_from_env);
    // The summary is written in the session's language.
    config.compaction.lang = lang;
    let prompt = prompt::SystemPrompt::of(
        &workspace,
        &steps::sandbox_line(wrapper.as_deref()),
        &scope,
        lang,
    );
    config.instructions = prompt.for_role(&agents, &role.name)?;

    // The record, saved at once when it was rebuilt (the damaged copies are kept aside).
    if let (Some(r), Some(_)) = (restored.as_mut(), &notice) {
        r.workspace = workspace.display().to_string();
        store.keep_corrupt(&r.session_id)?;
        store.save(r)?;
    }
    let record = steps::NewRecord {
        session_id: &session_id,
        workspace: &workspace,
        model: &model,
        provider: &provider,
    };
    let saved = steps::record(restored.as_ref(), record, &permissions, &opts);
    let lock = match lock {
        Some(l) => l,
        None => store.lock(&session_id)?,
    };
    let persister = Arc::new(store.persister(saved, lock)?);

    // The tools, the engine session with its history, hooks and MCP servers.
    let agents = Arc::new(RwLock::new(agents));
    let mut tools = tools_with_agents(
        llm.clone(),
        &config,
        &provider,
        agents.clone(),
        prompt.context(),
    );
    if prompt.skills().iter().any(|s| !s.user_only) {
        tools.register(Arc::new(skills::SkillTool::new(prompt.skills().to_vec())));
    }
    // The user's per-tool settings (never a project's): tools turned off are not offered.
    let mut tool_settings = if scope.user_config {
        crate::user_config::current().tool_settings(&crate::tooling::process_env)
    } else {
        crate::user_config::ToolSettings::default()
    };
    tool_settings
        .disabled
        .extend(opts.disabled_tools.iter().cloned());
    tool_settings.apply(&mut tools);
    let kept_settings = tool_settings.clone();
    let role_prompt = opts.agent.is_some().then(|| config.instructions.clone());
    let mut builder = Session::builder(config, llm.clone())
        .tools(tools)
        .approver(approver)
        .hook(persister.clone())
        .permission_state(permissions)
        .permission_rules(rules, shell_policy, sandbox_enforced)
        .exec_environment(exec)
        .pricing(Arc::new(CatalogPricing));
    if let Some(r) = restored {
        builder = steps::with_history(builder, r, &store, role_prompt.as_deref())?;
    }
    if let Some(c) = checkpoints::checkpointer(opts.vcs, &state_dir, &workspace, &session_id) {
        builder = builder.checkpointer(c);
    }
    let hooks = hooks::load_in(&workspace, &scope);
    for w in &hooks.warnings {
        tracing::warn!("hooks: {w}");
    }
    if let Some(gate) = hooks.gate_in(&session_id, &workspace, wrapper.clone()) {
        builder = builder.gate(gate);
    }
    let session = builder.build();
    let mcp = mcp::attach_in(
        &session,
        &workspace,
        llm,
        wrapper,
        &scope,
        &opts.mcp_servers,
    );
    let mut untrusted: Vec<String> = hooks.notice(&workspace).into_iter().collect();
    untrusted.extend(mcp.untrusted().iter().cloned());
    let hook_skipped = hooks.skipped(&workspace);
    let mut skipped: Vec<skipped::SkippedView> = hook_skipped.clone().into_iter().collect();
    skipped.extend(mcp.skipped().iter().cloned());
    Ok(Assembled {
        session,
        store,
        persister,
        state_dir,
        mcp,
        agents,
        sandbox: sandbox_state,
        prompt,
        notice,
        untrusted,
        skipped,
        config: scope,
        window_override: opts.context_window,
        tool_settings: kept_settings,
        hook_skipped: std::sync::Mutex::new(hook_skipped),
    })
}

/// The worktree a session runs in (the one the options name, else the restored session's),
/// trusted again, and what its sandbox may write for git.
fn worktree_of(
    opts: &RunOptions,
    restored: Option<&SavedSession>,
    workspace: &Path,
    state_dir: &Path,
) -> Result<(Option<cairn_protocol::WorktreeRef>, Vec<PathBuf>), RuntimeError> {
    let saved = restored.and_then(|r| r.worktree.clone());
    let name = match (&opts.worktree, &saved) {
        (Some(w), Some(s)) if &w.name != s => {
            return Err(RuntimeError::Config(format!(
                "the session runs in worktree {s}, not {}",
                w.name
            )))
        }
        (Some(_), None) if restored.is_some() => {
            return Err(RuntimeError::Config(
                "--session of a folder session cannot be continued in a worktree: start a new                  session with --worktree"
                    .into(),
            ))
        }
        (Some(w), _) => w.name.clone(),
        (None, Some(s)) => s.clone(),
        (None, None) => return Ok((None, Vec::new())),
    };
    let record = worktrees::trusted(workspace, state_dir, &name)
        .map_err(|e| RuntimeError::Config(e.to_string()))?;
    let reference = opts
        .worktree
        .clone()
        .unwrap_or_else(|| worktrees::reference(&record, false));
    Ok((Some(reference), worktrees::sandbox_writable(&record)))
}

/// Prices usage from the providers' model table.
struct CatalogPricing;

impl cairn_engine::Pricing for CatalogPricing {
    fn cost_usd(&self, model: &str, usage: &cairn_protocol::TokenUsage) -> Option<f64> {
        crate::spend_env::cost_usd(model, usage)
    }
}
