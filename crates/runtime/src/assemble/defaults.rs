//! What a session falls back to when a face decides nothing: the state dir, the workspace
//! checks, the model and the environment's settings (compaction, role type, prompt language).

use std::path::{Path, PathBuf};

use crate::error::RuntimeError;
use crate::git_dir;
use crate::reserved;

/// The state dir shared by the CLI and the desktop app: `CAIRN_STATE_DIR`, else the
/// platform data dir's `dev.cairn.app`.
pub fn default_state_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("CAIRN_STATE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    dirs::data_dir()
        .map(|d| d.join("dev.cairn.app"))
        .unwrap_or_else(reserved::fallback_state_dir)
}

/// Checks a workspace folder: it must exist, be a directory, and not be `/`, nor contain the
/// home folder, Cairn's config folder or the default state folder ([`reserved`]), nor be or
/// lie inside a repository's git directory ([`git_dir`]).
pub fn resolve_workspace(path: &Path) -> Result<PathBuf, RuntimeError> {
    let canon = path.canonicalize().map_err(|e| {
        RuntimeError::Config(format!("workspace {} is not usable: {e}", path.display()))
    })?;
    if !canon.is_dir() {
        return Err(RuntimeError::Config(format!(
            "workspace {} is not a directory",
            canon.display()
        )));
    }
    if canon.parent().is_none() {
        return Err(RuntimeError::Config(
            "refusing `/` as the workspace: the agent may change every file in it; pick a project folder"
                .into(),
        ));
    }
    if let Some(home) = dirs::home_dir().and_then(|h| h.canonicalize().ok()) {
        if canon == home {
            return Err(RuntimeError::Config(format!(
                "refusing your home folder {} as the workspace: it holds keys and settings; pick a project folder",
                canon.display()
            )));
        }
    }
    reserved::refuse_reserved(&canon, &default_state_dir()).map_err(RuntimeError::Config)?;
    git_dir::refuse_git_dir(&canon)?;
    Ok(canon)
}

/// The model: explicit, else `CAIRN_MODEL`, else `OPENAI_MODEL`.
pub fn resolve_model(explicit: Option<String>) -> Option<String> {
    explicit
        .filter(|m| !m.trim().is_empty())
        .or_else(|| env_nonempty("CAIRN_MODEL"))
        .or_else(|| env_nonempty("OPENAI_MODEL"))
}

fn env_nonempty(name: &str) -> Option<String> {
    crate::user_config::var(name)
}

/// Compaction settings: window from the override, else the model table, else 128K; thresholds
/// from `COMPACTION_THRESHOLD_PCT`, `COMPACTION_SOFT_THRESHOLD_PCT`, `COMPACTION_CAP_TOKENS`;
/// the summary's model and effort from `COMPACTION_MODEL` and `COMPACTION_REASONING_EFFORT`
/// (default: the session's model at low effort); `COMPACTION_ELIDE=0` / `COMPACTION_DEDUP=0`
/// turn off eliding old tool results / de-duplicating repeated reads.
pub fn compaction_config(
    model: &str,
    override_window: Option<u64>,
) -> cairn_engine::CompactionConfig {
    let mut c = cairn_engine::CompactionConfig::default();
    if let Some(w) = override_window
        .or_else(|| env_parse("CONTEXT_WINDOW"))
        .or_else(|| cairn_providers::context_window_for(model))
    {
        c.context_window = w.max(1_000);
    }
    if let Some(p) = env_parse::<f64>("COMPACTION_THRESHOLD_PCT").filter(|p| *p > 0.0 && *p <= 1.0)
    {
        c.threshold_pct = p;
    }
    if let Some(p) =
        env_parse::<f64>("COMPACTION_SOFT_THRESHOLD_PCT").filter(|p| *p > 0.0 && *p <= 1.0)
    {
        c.soft_threshold_pct = Some(p);
    }
    c.cap_tokens = env_parse("COMPACTION_CAP_TOKENS");
    c.model = env_nonempty("COMPACTION_MODEL");
    if let Some(e) = env_nonempty("COMPACTION_REASONING_EFFORT") {
        c.reasoning_effort = match e.trim().to_ascii_lowercase().as_str() {
            "none" | "off" | "0" => None,
            "medium" => Some(cairn_engine::ReasoningEffort::Medium),
            "high" | "xhigh" => Some(cairn_engine::ReasoningEffort::High),
            _ => Some(cairn_engine::ReasoningEffort::Low),
        };
    }
    c.elide = !env_off("COMPACTION_ELIDE");
    c.dedup = !env_off("COMPACTION_DEDUP");
    c
}

/// Whether a switch variable says off (`0`, `false`, `off`, `no`).
fn env_off(name: &str) -> bool {
    env_nonempty(name).is_some_and(|v| crate::user_config::switched_off(&v))
}

/// The agent type from `CAIRN_AGENT` (`code` or `cowork`; default code).
pub fn agent_type_from_env() -> cairn_engine::prompt::AgentType {
    match crate::user_config::var("CAIRN_AGENT")
        .as_deref()
        .map(str::trim)
    {
        Some("cowork") => cairn_engine::prompt::AgentType::Cowork,
        _ => cairn_engine::prompt::AgentType::Code,
    }
}

/// The prompt language from `CAIRN_LANG` (zh, en, zh-TW, ja, ko, es; default en).
pub fn lang_from_env() -> cairn_engine::prompt::Lang {
    crate::user_config::var("CAIRN_LANG")
        .and_then(|l| cairn_engine::prompt::Lang::parse(&l))
        .unwrap_or_default()
}

fn env_parse<T: std::str::FromStr>(name: &str) -> Option<T> {
    crate::user_config::var(name)?.trim().parse().ok()
}

/// The retry policy: `retries` (`--retries`) over `NETWORK_RETRY_MAX` / the `retries`
/// setting, the base delay from `NETWORK_RETRY_BASE_MS` / `retry_base_ms`.
pub fn retry_policy(retries: Option<u32>) -> cairn_engine::RetryPolicy {
    let mut p = cairn_engine::RetryPolicy::default();
    if let Some(n) = retries.or_else(|| env_parse("NETWORK_RETRY_MAX")) {
        p.max_retries = n;
    }
    if let Some(ms) = env_parse::<u64>("NETWORK_RETRY_BASE_MS") {
        p.base_delay = std::time::Duration::from_millis(ms);
    }
    p
}

/// The tool result budget from `TOOL_RESULT_*` or the `tool_results.*` settings.
pub fn result_budget() -> cairn_engine::ResultBudget {
    let mut b = cairn_engine::ResultBudget::from_env();
    if let Some(v) = env_parse::<usize>("TOOL_RESULT_SAVE_THRESHOLD") {
        b.save_threshold = v.max(1);
    }
    if let Some(v) = env_parse::<usize>("TOOL_RESULT_MAX_CHARS") {
        b.max_chars = v.max(2);
    }
    b
}

/// The iteration cap no flag set: `CAIRN_MAX_ITERATIONS`, else the `max_iterations` setting.
pub fn max_iterations() -> Option<u32> {
    env_parse::<u32>("CAIRN_MAX_ITERATIONS").filter(|n| *n > 0)
}
