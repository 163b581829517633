//! Builds the LLM client of a session from the settings, the environment and the key store,
//! and says clearly why a turn cannot run (no model, no key) instead of letting it fail.

use std::sync::Arc;

use cairn_engine::{LlmChunk, LlmClient, LlmOutcome, LlmRequest, OutcomeStatus};
use cairn_providers::secrets::{resolve_key, KeyStore, SecretError};
use cairn_providers::{build_client, ModelCatalog, ProviderSpec, ThinkingLevel, PRESETS};
use futures::stream::BoxStream;
use tokio_util::sync::CancellationToken;

use crate::types::{ModelView, PriceView};

/// Reads an environment variable (a closure so tests can fake the environment).
pub type EnvFn = dyn Fn(&str) -> Option<String> + Send + Sync;

/// What the client is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// A built client and what it runs on.
pub struct LlmSetup {
    /// The client (a stand-in that explains the problem when `blocked`).
    pub client: Arc<dyn LlmClient>,
    /// The provider whose key and defaults apply.
    pub provider: String,
    /// The model id.
    pub model: String,
    /// Why turns cannot run, shown in the UI before the user sends anything.
    pub blocked: Option<String>,
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

/// Builds the client for `choice`; never fails: a configuration problem becomes `blocked`
/// and a stand-in client that reports it.
pub fn build_llm(choice: &ProviderChoice, keys: &dyn KeyStore, env: &EnvFn) -> LlmSetup {
    match try_build(choice, keys, env) {
        Ok(setup) => setup,
        Err(reason) => LlmSetup {
            client: Arc::new(BlockedClient(reason.clone())),
            provider: choice.provider.clone(),
            model: choice.model.clone(),
            blocked: Some(reason),
        },
    }
}

fn try_build(
    choice: &ProviderChoice,
    keys: &dyn KeyStore,
    env: &EnvFn,
) -> Result<LlmSetup, String> {
    if choice.model.trim().is_empty() {
        return Err("No model is chosen: pick one in Settings.".into());
    }
    let mut spec = ProviderSpec::new(&choice.provider, choice.model.trim());
    let base = choice.base_url.trim();
    if !base.is_empty() {
        spec.base_url = Some(base.to_string());
    }
    if choice.provider == "compatible" && base.is_empty() {
        return Err("The OpenAI-compatible provider needs a base URL: set it in Settings.".into());
    }
    let mut spec = spec.apply_env(env).map_err(|e| e.to_string())?;
    if !choice.reasoning.trim().is_empty() {
        spec.thinking_level = ThinkingLevel::parse(&choice.reasoning);
    }
    let resolved = spec.resolve().map_err(|e| e.to_string())?;
    let key_name = resolved.provider.clone();
    match resolve_key(&key_name, env, keys) {
        Ok(Some(k)) => spec.api_key = Some(k.key.expose().to_string()),
        Ok(None) if resolved.needs_key => {
            return Err(format!(
                "No API key is set for {}: add one in Settings (it is kept in the OS keyring).",
                provider_label(&key_name)
            ))
        }
        Ok(None) => {}
        Err(SecretError::Unavailable(reason)) if resolved.needs_key => {
            return Err(format!(
                "The OS keyring is not available ({reason}), so the API key for {} cannot be read.",
                provider_label(&key_name)
            ))
        }
        Err(e) if resolved.needs_key => return Err(e.to_string()),
        Err(_) => {}
    }
    let client = build_client(&spec).map_err(|e| e.to_string())?;
    Ok(LlmSetup {
        client,
        provider: choice.provider.clone(),
        model: choice.model.trim().to_string(),
        blocked: None,
    })
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
        let s = build_llm(&choice("openai", ""), &keys, &no_env);
        assert!(s.blocked.unwrap().contains("No model"));
        let s = build_llm(&choice("openai", "gpt-5"), &keys, &no_env);
        let reason = s.blocked.unwrap();
        assert!(
            reason.contains("No API key") && reason.contains("OpenAI"),
            "{reason}"
        );
        keys.set("openai", &ApiKey::new("sk-test").unwrap())
            .unwrap();
        let s = build_llm(&choice("openai", "gpt-5"), &keys, &no_env);
        assert!(s.blocked.is_none(), "{:?}", s.blocked);
        // Local servers need no key.
        let s = build_llm(
            &choice("ollama", "llama3.1:8b"),
            &MemoryKeyStore::new(),
            &no_env,
        );
        assert!(s.blocked.is_none(), "{:?}", s.blocked);
        let s = build_llm(&choice("compatible", "m"), &keys, &no_env);
        assert!(s.blocked.unwrap().contains("base URL"));
        let down = MemoryKeyStore::unavailable("no bus");
        let s = build_llm(&choice("anthropic", "claude-sonnet-4-5"), &down, &no_env);
        assert!(s.blocked.unwrap().contains("keyring is not available"));
    }

    #[test]
    fn the_environment_key_wins_and_needs_no_keyring() {
        let env = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-env".to_string());
        let s = build_llm(
            &choice("openai", "gpt-5"),
            &MemoryKeyStore::unavailable("x"),
            &env,
        );
        assert!(s.blocked.is_none(), "{:?}", s.blocked);
    }

    #[tokio::test]
    async fn a_blocked_client_explains_itself() {
        use futures::StreamExt;
        let s = build_llm(&choice("openai", "gpt-5"), &MemoryKeyStore::new(), &no_env);
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
