//! Builds a session's LLM client from a provider choice (provider, model, endpoint,
//! reasoning level), an environment lookup and a key store, and says why turns cannot run
//! (no model, no key, keyring down) instead of letting them fail. One builder for both
//! faces: the app blocks turns it knows cannot run ([`build`]); the CLI lets the endpoint
//! answer when no key is found (a local server behind the `openai` provider needs none).
//! Also the model views the settings and the context gauge show.

use std::sync::Arc;

use cairn_engine::{LlmChunk, LlmClient, LlmOutcome, LlmRequest, OutcomeStatus};
use cairn_providers::secrets::{resolve_key, KeyStore, SecretError};
use cairn_providers::{build_client, ModelCatalog, ProviderSpec, ThinkingLevel, PRESETS};
use futures::stream::BoxStream;
use serde::Serialize;
use tokio_util::sync::CancellationToken;
use ts_rs::TS;

/// Reads an environment variable (a closure so tests can fake the environment).
pub type EnvFn = dyn Fn(&str) -> Option<String> + Send + Sync;

/// What the client is built from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProviderChoice {
    /// Provider name.
    pub provider: String,
    /// Model id ("" = none chosen).
    pub model: String,
    /// Endpoint override ("" = default / environment).
    pub base_url: String,
    /// Reasoning level ("" = default).
    pub reasoning: String,
}

/// Why turns cannot run with a choice (the text is what the user is shown).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Blocked {
    /// No model is chosen.
    #[error("No model is chosen: pick one in Settings.")]
    NoModel,
    /// The generic compatible provider has no endpoint.
    #[error("The OpenAI-compatible provider needs a base URL: set it in Settings.")]
    NeedsBaseUrl,
    /// The provider needs a key and none is set.
    #[error("No API key is set for {}: add one in Settings (it is kept in the OS keyring).", provider_label(.provider))]
    NoKey {
        /// The provider whose key is missing.
        provider: String,
    },
    /// The provider needs a key and the keyring cannot be reached.
    #[error("The OS keyring is not available ({reason}), so the API key for {} cannot be read.", provider_label(.provider))]
    KeyringDown {
        /// The provider whose key cannot be read.
        provider: String,
        /// What the keyring said.
        reason: String,
    },
    /// The key could not be read or is not valid.
    #[error("{0}")]
    Key(String),
    /// The provider, endpoint or environment settings are wrong.
    #[error("{0}")]
    Config(String),
}

/// Which face builds the client: how strict the checks are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    /// The app: a provider that needs a key and has none is blocked before any turn.
    App,
    /// The CLI: requests go out without a key when none is found (the endpoint answers).
    Cli,
}

/// A built client and what it runs on.
pub struct LlmSetup {
    /// The client (a stand-in that explains the problem when `blocked`).
    pub client: Arc<dyn LlmClient>,
    /// The provider whose key and defaults apply.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Why turns cannot run, shown in the UI before the user sends anything.
    pub blocked: Option<Blocked>,
}

/// A provider's shown name.
pub fn provider_label(name: &str) -> String {
    match name {
        "openai" => "OpenAI".into(),
        "anthropic" => "Anthropic".into(),
        "deepseek" => "DeepSeek".into(),
        "openrouter" => "OpenRouter".into(),
        "ollama" => "Ollama (local)".into(),
        "lmstudio" => "LM Studio (local)".into(),
        "gemini" => "Gemini".into(),
        "compatible" => "OpenAI-compatible".into(),
        other => other.to_string(),
    }
}

/// Builds the app's client for `choice`; never fails: a configuration problem becomes
/// `blocked` and a stand-in client that reports it.
pub fn build(choice: &ProviderChoice, keys: &dyn KeyStore, env: &EnvFn) -> LlmSetup {
    let built = if choice.model.trim().is_empty() {
        Err(Blocked::NoModel)
    } else {
        client_for(choice, keys, env, Face::App)
    };
    match built {
        Ok(client) => LlmSetup {
            client,
            provider: choice.provider.clone(),
            model: choice.model.trim().to_string(),
            blocked: None,
        },
        Err(reason) => LlmSetup {
            client: Arc::new(BlockedClient(reason.to_string())),
            provider: choice.provider.clone(),
            model: choice.model.clone(),
            blocked: Some(reason),
        },
    }
}

/// The client for `choice` as `face` checks it: the spec from the choice and the
/// environment, the key from the environment, else the key store (never consulted for
/// keyless local presets).
pub fn client_for(
    choice: &ProviderChoice,
    keys: &dyn KeyStore,
    env: &EnvFn,
    face: Face,
) -> Result<Arc<dyn LlmClient>, Blocked> {
    let config = |e: &dyn std::fmt::Display| Blocked::Config(e.to_string());
    let mut spec = ProviderSpec::new(&choice.provider, choice.model.trim());
    let base = choice.base_url.trim();
    if !base.is_empty() {
        spec.base_url = Some(base.to_string());
    }
    if face == Face::App && choice.provider == "compatible" && base.is_empty() {
        return Err(Blocked::NeedsBaseUrl);
    }
    let mut spec = spec.apply_env(env).map_err(|e| config(&e))?;
    if !choice.reasoning.trim().is_empty() {
        spec.thinking_level = ThinkingLevel::parse(&choice.reasoning);
    }
    let resolved = spec.resolve().map_err(|e| config(&e))?;
    let keyless_preset = !resolved.needs_key
        && resolved.key_env.is_none()
        && cairn_providers::preset(&resolved.provider).is_some();
    let strict = face == Face::App && resolved.needs_key;
    if !keyless_preset {
        let provider = resolved.provider.clone();
        match resolve_key(&provider, env, keys) {
            Ok(Some(k)) => spec.api_key = Some(k.key.expose().to_string()),
            Ok(None) if strict => return Err(Blocked::NoKey { provider }),
            Ok(None) => {}
            Err(SecretError::Unavailable(reason)) if strict => {
                return Err(Blocked::KeyringDown { provider, reason })
            }
            Err(SecretError::Unavailable(reason)) => {
                tracing::debug!(%reason, "no OS keyring; using environment keys only")
            }
            Err(e) if strict || face == Face::Cli => return Err(Blocked::Key(e.to_string())),
            Err(_) => {}
        }
    }
    build_client(&spec).map_err(|e| config(&e))
}

/// A client that ends every request with an `auth` outcome naming the configuration problem.
struct BlockedClient(String);

impl LlmClient for BlockedClient {
    fn stream(
        &self,
        _request: LlmRequest,
        _cancel: CancellationToken,
    ) -> BoxStream<'static, LlmChunk> {
        let outcome = LlmOutcome::new(OutcomeStatus::Auth, Some(self.0.clone()));
        Box::pin(futures::stream::iter(vec![LlmChunk::End(outcome)]))
    }
}

/// Prices in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export_to = "app/")]
pub struct PriceView {
    /// Uncached input.
    pub input: f64,
    /// Cached input (`None` = charged as input).
    pub cached_input: Option<f64>,
    /// Output.
    pub output: f64,
}

/// What Cairn knows about a model: the settings' model picker and the context gauge.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export_to = "app/")]
pub struct ModelView {
    /// Model id.
    pub id: String,
    /// Whether the model table knows it (else defaults apply).
    pub known: bool,
    /// Context window in tokens.
    #[ts(type = "number")]
    pub context_window: u64,
    /// Most output tokens per reply, when known.
    #[ts(type = "number | null")]
    pub max_output: Option<u64>,
    /// Accepts images.
    pub vision: bool,
    /// A reasoning model.
    pub reasoning: bool,
    /// Supports tool calls.
    pub tools: bool,
    /// Reasoning levels it accepts, lowest first.
    pub efforts: Vec<String>,
    /// Prices, `None` = unknown.
    pub price: Option<PriceView>,
}

/// The model view of `model` from the built-in table.
pub fn model_view(model: &str) -> ModelView {
    let info = ModelCatalog::builtin().lookup(model);
    ModelView {
        id: model.to_string(),
        known: info.is_known(),
        context_window: info.context_window,
        max_output: info.max_output,
        vision: info.vision,
        reasoning: info.reasoning,
        tools: info.tools,
        efforts: info.efforts,
        price: info.price.map(|p| PriceView {
            input: p.input,
            cached_input: p.cached_input,
            output: p.output,
        }),
    }
}

/// Every model of the built-in table.
pub fn catalog_models() -> Vec<ModelView> {
    ModelCatalog::builtin()
        .entries()
        .iter()
        .map(|e| model_view(&e.id))
        .collect()
}

/// Provider names offered in the settings: the presets plus the generic compatible endpoint.
pub fn provider_names() -> Vec<String> {
    let mut names: Vec<String> = PRESETS.iter().map(|p| p.name.to_string()).collect();
    names.push("compatible".to_string());
    names
}

/// Builds the LLM client for a provider name: `openai` (any OpenAI-compatible endpoint),
/// `anthropic`, `deepseek`, `openrouter`, `ollama`, `lmstudio`, `gemini`, or any other name
/// with a base URL. Settings come from the environment (`OPENAI_BASE_URL` /
/// `ANTHROPIC_BASE_URL`, `OPENAI_FORCE_API_MODE`, timeouts, `SOCKS5_PROXY`, …); the key from
/// the provider's variable (`ANTHROPIC_API_KEY`, …), else the OS keyring entry.
pub fn build_llm(
    provider: &str,
    base_url: Option<String>,
) -> Result<std::sync::Arc<dyn cairn_engine::LlmClient>, crate::error::RuntimeError> {
    build_llm_with(provider, base_url, None, None)
}

/// [`build_llm`] with a reasoning level and an answer cap chosen by the face (`--reasoning`,
/// `--max-output-tokens`), which win over `CAIRN_THINKING_LEVEL` / `CAIRN_MAX_OUTPUT_TOKENS`
/// and the `reasoning` / `max_output_tokens` settings.
pub fn build_llm_with(
    provider: &str,
    base_url: Option<String>,
    reasoning: Option<&str>,
    max_output_tokens: Option<u64>,
) -> Result<std::sync::Arc<dyn cairn_engine::LlmClient>, crate::error::RuntimeError> {
    if let Some(r) = reasoning.filter(|r| ThinkingLevel::parse(r).is_none()) {
        return Err(crate::error::RuntimeError::Config(format!(
            "unknown reasoning level `{r}`: none, low, medium, high or xhigh"
        )));
    }
    // Flag, then the provider's variable (read by the spec), then the user's file.
    let env_set = cairn_providers::preset(provider)
        .and_then(|p| p.base_url_env)
        .and_then(cairn_engine::secret_env::var)
        .is_some_and(|v| !v.trim().is_empty());
    let base_url = base_url.or_else(|| {
        (!env_set)
            .then(|| crate::user_config::current().file_value(&format!("base_urls.{provider}")))
            .flatten()
    });
    let choice = ProviderChoice {
        provider: provider.to_string(),
        base_url: base_url.unwrap_or_default(),
        reasoning: reasoning.unwrap_or_default().to_string(),
        ..Default::default()
    };
    // The flag is the first layer of the lookup the spec reads its settings through.
    let env = move |n: &str| match n {
        "CAIRN_MAX_OUTPUT_TOKENS" if max_output_tokens.is_some() => {
            max_output_tokens.map(|t| t.to_string())
        }
        _ => crate::user_config::var(n),
    };
    client_for(
        &choice,
        &cairn_providers::secrets::OsKeyStore::new(),
        &env,
        Face::Cli,
    )
    .map_err(|e| crate::error::RuntimeError::Config(e.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_providers::secrets::{ApiKey, MemoryKeyStore};

    fn choice(provider: &str, model: &str) -> ProviderChoice {
        ProviderChoice {
            provider: provider.into(),
            model: model.into(),
            base_url: String::new(),
            reasoning: String::new(),
        }
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn missing_model_or_key_is_a_clear_block() {
        let keys = MemoryKeyStore::new();
        let s = build(&choice("openai", ""), &keys, &no_env);
        assert!(s.blocked.unwrap().to_string().contains("No model"));
        let s = build(&choice("openai", "gpt-5"), &keys, &no_env);
        let reason = s.blocked.unwrap().to_string();
        assert!(
            reason.contains("No API key") && reason.contains("OpenAI"),
            "{reason}"
        );
        keys.set("openai", &ApiKey::new("sk-test").unwrap())
            .unwrap();
        let s = build(&choice("openai", "gpt-5"), &keys, &no_env);
        assert!(s.blocked.is_none(), "{:?}", s.blocked);
        // Local servers need no key.
        let s = build(
            &choice("ollama", "llama3.1:8b"),
            &MemoryKeyStore::new(),
            &no_env,
        );
        assert!(s.blocked.is_none(), "{:?}", s.blocked);
        let s = build(&choice("compatible", "m"), &keys, &no_env);
        assert!(s.blocked.unwrap().to_string().contains("base URL"));
        let down = MemoryKeyStore::unavailable("no bus");
        let s = build(&choice("anthropic", "claude-sonnet-4-5"), &down, &no_env);
        assert!(s
            .blocked
            .unwrap()
            .to_string()
            .contains("keyring is not available"));
    }

    #[test]
    fn the_cli_face_sends_without_a_key_and_the_app_face_blocks() {
        let keys = MemoryKeyStore::new();
        let c = choice("openai", "");
        assert!(client_for(&c, &keys, &no_env, Face::Cli).is_ok());
        assert!(matches!(
            client_for(&c, &keys, &no_env, Face::App),
            Err(Blocked::NoKey { provider }) if provider == "openai"
        ));
        // A keyring that is down only matters to the app.
        let down = MemoryKeyStore::unavailable("no bus");
        assert!(client_for(&c, &down, &no_env, Face::Cli).is_ok());
        assert!(matches!(
            client_for(&c, &down, &no_env, Face::App),
            Err(Blocked::KeyringDown { .. })
        ));
        // The CLI names an unknown endpoint-less provider as the provider table does.
        let err = client_for(&choice("compatible", ""), &keys, &no_env, Face::Cli)
            .err()
            .unwrap();
        assert!(matches!(err, Blocked::Config(_)), "{err}");
    }

    #[test]
    fn the_environment_key_wins_and_needs_no_keyring() {
        let env = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-env".to_string());
        let s = build(
            &choice("openai", "gpt-5"),
            &MemoryKeyStore::unavailable("x"),
            &env,
        );
        assert!(s.blocked.is_none(), "{:?}", s.blocked);
    }

    #[tokio::test]
    async fn a_blocked_client_explains_itself() {
        use futures::StreamExt;
        let s = build(&choice("openai", "gpt-5"), &MemoryKeyStore::new(), &no_env);
        let req = LlmRequest {
            model: "gpt-5".into(),
            messages: vec![],
            tools: vec![],
            reasoning_effort: None,
            req_id: "r".into(),
        };
        let chunks: Vec<_> = s
            .client
            .stream(req, CancellationToken::new())
            .collect()
            .await;
        match chunks.as_slice() {
            [LlmChunk::End(o)] => {
                assert_eq!(o.status, OutcomeStatus::Auth);
                assert!(o.message.as_deref().unwrap().contains("No API key"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn model_views_come_from_the_table() {
        let v = model_view("gpt-5");
        assert!(v.known && v.context_window >= 100_000 && v.price.is_some());
        let u = model_view("mock-model");
        assert!(!u.known && u.price.is_none());
        assert!(!catalog_models().is_empty());
        assert!(provider_names().contains(&"compatible".to_string()));
    }
}
