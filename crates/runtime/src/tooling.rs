//! The built-in tool set of an assembled session: [`cairn_tools::builtin_tools`] with its
//! options from settings in the environment (and keys from the OS keyring):
//!
//! - web search: `CAIRN_SEARCH_PROVIDER` (`searxng` | `brave` | `tavily`; default: the first
//!   configured of `SEARXNG_URL`, `BRAVE_API_KEY`, `TAVILY_API_KEY`), keys from the variable or
//!   the keyring entry `brave` / `tavily`; `CAIRN_SEARCH_ENDPOINT` overrides the API URL.
//!   Without one, `web_search` is not offered.
//! - images: the session model's vision (model table; `CAIRN_MODEL_VISION=1|0` overrides)
//!   selects `read_image`, else `describe_image` through `CAIRN_VISION_MODEL` (same provider).
//! - media: images through the model that sees them; audio through `CAIRN_TRANSCRIBE_MODEL`
//!   at `CAIRN_TRANSCRIBE_BASE_URL` (default `OPENAI_BASE_URL`, then OpenAI) with
//!   `CAIRN_TRANSCRIBE_API_KEY` (default `OPENAI_API_KEY`); video through `CAIRN_FFPROBE` or
//!   `ffprobe` in /usr/bin, /usr/local/bin or /bin (never `PATH`).
//! - `CAIRN_NO_CALL_DESCRIPTION`: comma-separated tools whose `description` argument is off.

use std::sync::Arc;

use cairn_engine::{LlmClient, ToolHandle};
use cairn_tools::web::{SearchProvider, WebSearchConfig};
use cairn_tools::{TerminalSource, ToolOptions, TranscriptionConfig, VisionConfig};

use std::sync::RwLock;

use cairn_engine::agents::{AgentRegistry, SubagentLimits, SubagentRunner};
use cairn_engine::prompt::{Environment, Lang, ProjectNote};
use cairn_engine::{EngineConfig, ToolRegistry};

use crate::error::RuntimeError;

/// Looks a setting up by name (the process environment in production).
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

fn get(env: Lookup<'_>, name: &str) -> Option<String> {
    env(name)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// The process environment (secrets from their sealed copy), else the user's settings file
/// ([`crate::user_config::var`]), as a [`Lookup`].
pub fn process_env(name: &str) -> Option<String> {
    crate::user_config::var(name)
}

/// A key from `var`, else the OS keyring entry `entry` (absent keyring: none).
fn key(env: Lookup<'_>, var: &str, entry: &str, keyring: bool) -> Option<String> {
    get(env, var).or_else(|| {
        if !keyring {
            return None;
        }
        use cairn_secrets::KeyStore;
        cairn_secrets::OsKeyStore::new()
            .get(entry)
            .ok()
            .flatten()
            .map(|k| k.expose().to_string())
    })
}

/// The web search configuration, `None` when none is configured; an explicit provider whose
/// setting is missing is an error naming what to set.
pub fn web_search_from(
    env: Lookup<'_>,
    keyring: bool,
) -> Result<Option<WebSearchConfig>, RuntimeError> {
    let missing = |what: &str| {
        RuntimeError::Config(format!(
            "CAIRN_SEARCH_PROVIDER needs {what} (set it, or store it in the keyring)"
        ))
    };
    let provider = match get(env, "CAIRN_SEARCH_PROVIDER")
        .map(|p| p.to_ascii_lowercase())
        .as_deref()
    {
        Some("searxng") => SearchProvider::Searxng {
            url: get(env, "SEARXNG_URL").ok_or_else(|| missing("SEARXNG_URL"))?,
        },
        Some("brave") => SearchProvider::Brave {
            api_key: key(env, "BRAVE_API_KEY", "brave", keyring)
                .ok_or_else(|| missing("BRAVE_API_KEY"))?,
        },
        Some("tavily") => SearchProvider::Tavily {
            api_key: key(env, "TAVILY_API_KEY", "tavily", keyring)
                .ok_or_else(|| missing("TAVILY_API_KEY"))?,
        },
        Some(other) => {
            return Err(RuntimeError::Config(format!(
                "CAIRN_SEARCH_PROVIDER `{other}` is not one of searxng, brave, tavily"
            )))
        }
        None => {
            if let Some(url) = get(env, "SEARXNG_URL") {
                SearchProvider::Searxng { url }
            } else if let Some(api_key) = get(env, "BRAVE_API_KEY") {
                SearchProvider::Brave { api_key }
            } else if let Some(api_key) = get(env, "TAVILY_API_KEY") {
                SearchProvider::Tavily { api_key }
            } else {
                return Ok(None);
            }
        }
    };
    let mut cfg = WebSearchConfig::new(provider);
    cfg.endpoint = get(env, "CAIRN_SEARCH_ENDPOINT");
    Ok(Some(cfg))
}

/// Whether `model` accepts images: `CAIRN_MODEL_VISION` (`1`/`0`), else the model table.
pub fn model_has_vision(env: Lookup<'_>, model: &str) -> bool {
    match get(env, "CAIRN_MODEL_VISION").as_deref() {
        Some("1") | Some("true") => true,
        Some("0") | Some("false") => false,
        _ => cairn_providers::model_info(model).vision,
    }
}

/// Keeps attached images out of the request when `model` is known not to see them (a
/// text-only endpoint rejects image parts): the saved copies stay referenced in the message, where the
/// agent's `media` tool can describe them. Returns how many images were held back.
pub fn hold_back_images(
    model: &str,
    attachments: &mut cairn_engine::attachments::TurnAttachments,
) -> usize {
    // Only a model known to be text-only (or CAIRN_MODEL_VISION=0): an unknown model (a
    // local one) may well see images.
    let text_only = match get(&process_env, "CAIRN_MODEL_VISION").as_deref() {
        Some("1") | Some("true") => false,
        Some("0") | Some("false") => true,
        _ => {
            let info = cairn_providers::model_info(model);
            info.is_known() && !info.vision
        }
    };
    if !text_only {
        return 0;
    }
    let before = attachments.attachments.len();
    attachments
        .attachments
        .retain(|a| !a.mime_type.starts_with("image/"));
    before - attachments.attachments.len()
}

/// The model used when the session model cannot see images: `CAIRN_VISION_MODEL` (the
/// `vision.model` setting), on `CAIRN_VISION_PROVIDER` (`vision.provider`) when set, else on
/// the session's provider. A provider that cannot be built is logged and leaves it out.
pub fn vision_model(env: Lookup<'_>, llm: &Arc<dyn LlmClient>) -> Option<VisionConfig> {
    let model = get(env, "CAIRN_VISION_MODEL")?;
    let llm = match get(env, "CAIRN_VISION_PROVIDER") {
        Some(provider) => match crate::llm_setup::build_llm(&provider, None) {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!("describe_image is off: vision provider `{provider}`: {e}");
                return None;
            }
        },
        None => llm.clone(),
    };
    Some(VisionConfig { llm, model })
}

/// The model that reads images for the built-in OCR server and `media`: the session model
/// when it sees images, else `CAIRN_VISION_MODEL`.
pub fn image_model(env: Lookup<'_>, llm: &Arc<dyn LlmClient>, model: &str) -> Option<VisionConfig> {
    if model_has_vision(env, model) {
        Some(VisionConfig {
            llm: llm.clone(),
            model: model.to_string(),
        })
    } else {
        vision_model(env, llm)
    }
}

/// Audio transcription from `CAIRN_TRANSCRIBE_*`, `None` without a model.
pub fn transcription_from(env: Lookup<'_>) -> Option<TranscriptionConfig> {
    let model = get(env, "CAIRN_TRANSCRIBE_MODEL")?;
    let base = get(env, "CAIRN_TRANSCRIBE_BASE_URL")
        .or_else(|| get(env, "OPENAI_BASE_URL"))
        .unwrap_or_else(|| "https://api.openai.com/v1".into());
    // The key: its variable, else the keyring entry `cairn config set transcribe.key` fills,
    // else OpenAI's variable.
    let keyring = std::env::var_os("CAIRN_NO_KEYRING").is_none();
    let key = key(env, "CAIRN_TRANSCRIBE_API_KEY", "transcribe", keyring)
        .or_else(|| get(env, "OPENAI_API_KEY"));
    Some(TranscriptionConfig::new(base, key, model))
}

/// Every option of [`cairn_tools::builtin_tools`] for a session of `model` over `llm`.
pub fn tool_options(
    env: Lookup<'_>,
    keyring: bool,
    llm: &Arc<dyn LlmClient>,
    model: &str,
    terminals: Option<(Arc<dyn TerminalSource>, String)>,
) -> Result<ToolOptions, RuntimeError> {
    let web_search = web_search_from(env, keyring)?;
    Ok(ToolOptions {
        web_search,
        ..base_options(env, llm, model, terminals)
    })
}

/// The options besides web search (they cannot fail).
fn base_options(
    env: Lookup<'_>,
    llm: &Arc<dyn LlmClient>,
    model: &str,
    terminals: Option<(Arc<dyn TerminalSource>, String)>,
) -> ToolOptions {
    ToolOptions {
        vision: vision_model(env, llm),
        session_vision: model_has_vision(env, model),
        session_model: Some(VisionConfig {
            llm: llm.clone(),
            model: model.to_string(),
        }),
        transcription: transcription_from(env),
        ffprobe: get(env, "CAIRN_FFPROBE").map(Into::into),
        terminals,
        no_call_description: get(env, "CAIRN_NO_CALL_DESCRIPTION")
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default(),
        ..ToolOptions::default()
    }
}

/// The session's built-in tools from the process environment (keyring unless
/// `CAIRN_NO_KEYRING` is set), their conflict guard kept in `seen_file` when given. A bad web
/// search setting is logged and leaves `web_search` out rather than failing the session.
pub fn session_tools(
    llm: &Arc<dyn LlmClient>,
    model: &str,
    seen_file: Option<std::path::PathBuf>,
) -> Vec<ToolHandle> {
    let env: Lookup<'_> = &process_env;
    let keyring = std::env::var_os("CAIRN_NO_KEYRING").is_none();
    let web_search = web_search_from(env, keyring).unwrap_or_else(|e| {
        tracing::warn!("web_search is off: {e}");
        None
    });
    let with_search = ToolOptions {
        web_search,
        seen_file: seen_file.clone(),
        ..base_options(env, llm, model, None)
    };
    cairn_tools::builtin_tools(with_search).unwrap_or_else(|e| {
        tracing::warn!("web_search is off: {e}");
        let without = ToolOptions {
            seen_file,
            ..base_options(env, llm, model, None)
        };
        cairn_tools::builtin_tools(without).unwrap_or_else(|_| cairn_tools::core_tools())
    })
}

/// The built-in tools for `model` without web search (no keyring lookup): what a model switch
/// needs to re-make the image tools.
pub fn session_tools_offline(
    llm: &Arc<dyn LlmClient>,
    model: &str,
    seen_file: Option<std::path::PathBuf>,
) -> Vec<ToolHandle> {
    let opts = ToolOptions {
        seen_file,
        ..base_options(&process_env, llm, model, None)
    };
    cairn_tools::builtin_tools(opts).unwrap_or_else(|_| cairn_tools::core_tools())
}

/// The file in a session's folder where the file tools' conflict guard keeps what the agent
/// last saw of each file.
pub const SEEN_FILES: &str = "seen-files.jsonl";

/// The built-in tools plus the `explore` subagent (whose children get the read-only tools).
pub fn tools_with_subagents(llm: Arc<dyn LlmClient>, config: &EngineConfig) -> ToolRegistry {
    // The full set: web search, media, read_image / describe_image by the model (see `tooling`).
    let mut reg = ToolRegistry::new();
    // What the agent read is remembered across the session's processes (one per CLI turn).
    let seen_file = config.state_dir.join(SEEN_FILES);
    reg.register_all(session_tools(&llm, &config.model, Some(seen_file)));
    let mut read_only = ToolRegistry::new();
    read_only.register_all(cairn_tools::read_only_tools());
    let mut explore = cairn_engine::ExploreTool::new(llm, config.clone(), read_only);
    // `EXPLORE_MAX_ITERATIONS` (read by the engine), else the `explore.max_iterations` setting.
    if let Some(n) = env_parse::<u32>("EXPLORE_MAX_ITERATIONS").filter(|n| *n > 0) {
        explore = explore.with_max_iterations(n);
    }
    reg.register(Arc::new(explore));
    reg
}

/// The built-in tools, `explore`, and the general subagent tools (`run_subagent`,
/// `input_subagent`) whose children take their roles from `agents`, get a fresh set of the
/// session's built-in tools each,
/// and reach other providers through [`build_llm`].
pub fn tools_with_agents(
    llm: Arc<dyn LlmClient>,
    config: &EngineConfig,
    provider: &str,
    agents: Arc<RwLock<AgentRegistry>>,
    prompt_context: (Lang, Environment, Vec<ProjectNote>),
) -> ToolRegistry {
    let mut reg = tools_with_subagents(llm.clone(), config);
    let (lang, env, notes) = prompt_context;
    // Children get the session's built-in tools (web search, media and images included),
    // each child a fresh set.
    let (tools_llm, tools_model) = (llm.clone(), config.model.clone());
    let child_tools = Arc::new(move || {
        let mut reg = ToolRegistry::new();
        reg.register_all(session_tools(&tools_llm, &tools_model, None));
        // The user's per-tool settings bind subagents too.
        crate::user_config::current()
            .tool_settings(&process_env)
            .apply(&mut reg);
        reg
    });
    let runner = SubagentRunner::new(llm, provider, config.clone(), child_tools)
        .with_agents(agents)
        .with_llm_factory(Arc::new(|m| {
            crate::llm_setup::build_llm(&m.provider, None).map_err(|e| e.to_string())
        }))
        .with_limits(subagent_limits_from_env())
        .with_prompt_context(lang, env, notes);
    let (run, input) = runner.tools();
    reg.register(Arc::new(run));
    reg.register(Arc::new(input));
    reg
}

/// Subagent limits from `CAIRN_SUBAGENT_MAX_DEPTH`, `CAIRN_SUBAGENT_MAX_CONCURRENT` and
/// `CAIRN_SUBAGENT_MAX_OPEN` (defaults 2, 4, 8).
pub fn subagent_limits_from_env() -> SubagentLimits {
    let d = SubagentLimits::default();
    SubagentLimits {
        max_depth: env_parse("CAIRN_SUBAGENT_MAX_DEPTH").unwrap_or(d.max_depth),
        max_concurrent: env_parse::<usize>("CAIRN_SUBAGENT_MAX_CONCURRENT")
            .filter(|n| *n > 0)
            .unwrap_or(d.max_concurrent),
        max_open: env_parse::<usize>("CAIRN_SUBAGENT_MAX_OPEN")
            .filter(|n| *n > 0)
            .unwrap_or(d.max_open),
    }
}

fn env_parse<T: std::str::FromStr>(name: &str) -> Option<T> {
    crate::user_config::var(name)?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |n| m.get(n).cloned()
    }

    #[test]
    fn web_search_comes_from_the_first_configured_provider() {
        assert!(web_search_from(&env(&[]), false).unwrap().is_none());
        let c = web_search_from(
            &env(&[("BRAVE_API_KEY", "k"), ("TAVILY_API_KEY", "t")]),
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            c.provider,
            SearchProvider::Brave {
                api_key: "k".into()
            }
        );
        let c = web_search_from(
            &env(&[
                ("CAIRN_SEARCH_PROVIDER", "Tavily"),
                ("TAVILY_API_KEY", "t"),
                ("SEARXNG_URL", "http://s"),
                ("CAIRN_SEARCH_ENDPOINT", "http://127.0.0.1:9/search"),
            ]),
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            c.provider,
            SearchProvider::Tavily {
                api_key: "t".into()
            }
        );
        assert_eq!(c.endpoint.as_deref(), Some("http://127.0.0.1:9/search"));
    }

    #[test]
    fn an_explicit_provider_without_its_setting_is_a_clear_error() {
        let e = web_search_from(&env(&[("CAIRN_SEARCH_PROVIDER", "searxng")]), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("SEARXNG_URL"), "{e}");
        let e = web_search_from(&env(&[("CAIRN_SEARCH_PROVIDER", "bing")]), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`bing`"), "{e}");
    }

    #[test]
    fn images_are_held_back_only_from_models_known_to_be_text_only() {
        use cairn_engine::attachments::{MessageAttachment, TurnAttachments};
        if std::env::var_os("CAIRN_MODEL_VISION").is_some() {
            return;
        }
        let attached = || TurnAttachments {
            attachments: vec![
                MessageAttachment {
                    name: "a.png".into(),
                    mime_type: "image/png".into(),
                    data_url: "data:image/png;base64,AAAA".into(),
                },
                MessageAttachment {
                    name: "b.mp3".into(),
                    mime_type: "audio/mpeg".into(),
                    data_url: "data:audio/mpeg;base64,AAAA".into(),
                },
            ],
            refs: Vec::new(),
            files: Vec::new(),
        };
        let mut a = attached();
        assert_eq!(hold_back_images("deepseek-chat", &mut a), 1);
        assert_eq!(a.attachments.len(), 1);
        assert_eq!(a.attachments[0].name, "b.mp3");
        for model in ["gpt-4o", "some-local-model"] {
            let mut a = attached();
            assert_eq!(hold_back_images(model, &mut a), 0, "{model}");
            assert_eq!(a.attachments.len(), 2);
        }
    }

    #[test]
    fn vision_follows_the_model_table_unless_overridden() {
        assert!(model_has_vision(&env(&[]), "gpt-4o"));
        assert!(!model_has_vision(&env(&[]), "deepseek-chat"));
        assert!(model_has_vision(
            &env(&[("CAIRN_MODEL_VISION", "1")]),
            "deepseek-chat"
        ));
        assert!(!model_has_vision(
            &env(&[("CAIRN_MODEL_VISION", "0")]),
            "gpt-4o"
        ));
    }

    #[test]
    fn options_select_tools_by_settings() {
        let llm: Arc<dyn LlmClient> = Arc::new(cairn_engine::testing::FakeLlm::new(vec![]));
        let names = |pairs: &[(&str, &str)], model: &str| -> Vec<String> {
            let o = tool_options(&env(pairs), false, &llm, model, None).unwrap();
            cairn_tools::builtin_tools(o)
                .unwrap()
                .iter()
                .map(|t| t.schema().name)
                .collect()
        };
        let n = names(&[], "deepseek-chat");
        assert!(n.contains(&"media".to_string()), "{n:?}");
        assert!(!n
            .iter()
            .any(|t| t == "web_search" || t == "read_image" || t == "describe_image"));
        let n = names(
            &[
                ("SEARXNG_URL", "http://127.0.0.1:1"),
                ("CAIRN_VISION_MODEL", "gpt-4o"),
            ],
            "deepseek-chat",
        );
        assert!(
            n.contains(&"web_search".to_string()) && n.contains(&"describe_image".to_string()),
            "{n:?}"
        );
        let n = names(&[], "gpt-4o");
        assert!(n.contains(&"read_image".to_string()), "{n:?}");
        let o = tool_options(
            &env(&[
                ("CAIRN_NO_CALL_DESCRIPTION", "grep, read_file"),
                ("CAIRN_TRANSCRIBE_MODEL", "whisper-1"),
            ]),
            false,
            &llm,
            "gpt-4o",
            None,
        )
        .unwrap();
        assert_eq!(o.no_call_description, ["grep", "read_file"]);
        let t = o.transcription.unwrap();
        assert_eq!(
            (t.model.as_str(), t.base_url.as_str()),
            ("whisper-1", "https://api.openai.com/v1")
        );
    }
}

#[cfg(test)]
mod session_tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn assembled_sessions_get_the_full_tool_set() {
        let dir = tempfile::tempdir().unwrap();
        let llm: Arc<dyn LlmClient> = Arc::new(cairn_engine::testing::FakeLlm::new(vec![]));
        let config =
            cairn_engine::EngineConfig::new(dir.path().into(), dir.path().into(), "gpt-4o");
        let names = tools_with_subagents(llm, &config).names();
        for t in [
            "read_file",
            "exec_command",
            "input_command",
            "git_diff",
            "web_fetch",
            "media",
            "read_image",
            "explore",
        ] {
            assert!(names.iter().any(|n| n == t), "{t} missing from {names:?}");
        }
    }
}
