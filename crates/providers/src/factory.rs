//! [`build_client`]: one [`LlmClient`] from a [`ProviderSpec`], with unique tool-call ids
//! and the optional audit log applied whatever the provider.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cairn_engine::LlmClient;

use crate::anthropic::{AnthropicClient, AnthropicConfig};
use crate::audit::{AuditLog, AuditMeta};
use crate::catalog::ModelCatalog;
use crate::error::ProviderError;
use crate::http::{is_secret_header, socks_proxy_url};
use crate::ids::{ToolCallIds, UniqueToolCallIds};
use crate::openai::{parse_ms, ApiMode, OpenAiClient, OpenAiConfig};
use crate::presets::{preset, preset_of, unknown_provider, ClientType, ProviderPreset};
use crate::thinking::ThinkingLevel;

/// Everything needed to build a client for one provider and model.
#[derive(Clone, Default)]
pub struct ProviderSpec {
    /// `openai` (any OpenAI-compatible endpoint; the client type follows the model),
    /// `anthropic`, `deepseek`, `openrouter`, `ollama`, `lmstudio`, `gemini`, or another
    /// name together with a `base_url`.
    pub provider: String,
    /// Endpoint base URL; `None` = the preset's.
    pub base_url: Option<String>,
    /// API key; `None` for keyless servers (resolve it with `cairn_secrets`).
    pub api_key: Option<String>,
    /// Model id (drives client-type inference; may be empty when unknown yet).
    pub model: String,
    /// Client type override (seed `clientType`); `None` = preset, else inferred.
    pub client_type: Option<ClientType>,
    /// Force Responses or Chat Completions (OpenAI family).
    pub api_mode: Option<ApiMode>,
    /// Thinking level for requests that name none.
    pub thinking_level: Option<ThinkingLevel>,
    /// Cap on the tokens of one answer (`CAIRN_MAX_OUTPUT_TOKENS`); `None` = the model's.
    pub max_output_tokens: Option<u64>,
    /// Time to connect and receive headers.
    pub request_timeout: Option<Duration>,
    /// Longest silence inside a stream.
    pub stream_idle_timeout: Option<Duration>,
    /// Extra headers on every request.
    pub extra_headers: Vec<(String, String)>,
    /// `SOCKS5_PROXY` value.
    pub proxy: Option<String>,
    /// Audit log directory (seed `logDir`); `None` = no audit log.
    pub log_dir: Option<PathBuf>,
    /// Keep base64 attachments in the audit log.
    pub log_attachments: bool,
    /// Session-wide tool-call id registry to share; `None` = a fresh one.
    pub tool_call_ids: Option<Arc<ToolCallIds>>,
    /// User overrides of the model table.
    pub model_overrides: Option<ModelCatalog>,
}

impl std::fmt::Debug for ProviderSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSpec")
            .field("provider", &self.provider)
            .field(
                "base_url",
                &self.base_url.as_deref().map(crate::classify::display_base),
            )
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("model", &self.model)
            .field("client_type", &self.client_type)
            .field("api_mode", &self.api_mode)
            .field("thinking_level", &self.thinking_level)
            .field("max_output_tokens", &self.max_output_tokens)
            .field("proxy", &self.proxy.as_ref().map(|_| "[set]"))
            .field("log_dir", &self.log_dir)
            .finish_non_exhaustive()
    }
}

/// What a spec resolves to before building.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The provider whose key and defaults apply (may differ from the spec's for the
    /// generic `openai` provider, e.g. `claude-…` → `anthropic`).
    pub provider: String,
    /// The client type.
    pub client_type: ClientType,
    /// The endpoint base URL.
    pub base_url: String,
    /// The environment variable of the key, if the provider has one.
    pub key_env: Option<&'static str>,
    /// Whether the provider needs a key.
    pub needs_key: bool,
}

impl ProviderSpec {
    /// A spec for `provider` and `model` with defaults elsewhere.
    pub fn new(provider: &str, model: &str) -> ProviderSpec {
        ProviderSpec {
            provider: provider.to_string(),
            model: model.to_string(),
            ..ProviderSpec::default()
        }
    }

    /// Fills what the environment says: the preset's base-URL variable (`OPENAI_BASE_URL`,
    /// `ANTHROPIC_BASE_URL`) when no base URL is set, `OPENAI_FORCE_API_MODE`,
    /// `OPENAI_TIMEOUT_MS`, `OPENAI_STREAM_IDLE_MS`, `OPENAI_REASONING_EFFORT` (or
    /// `CAIRN_THINKING_LEVEL`), `SOCKS5_PROXY`, `CAIRN_CLIENT_TYPE`, `CAIRN_LLM_LOG_DIR`.
    /// Keys are not read here (see `cairn_secrets::resolve_key`).
    pub fn apply_env(
        mut self,
        get: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ProviderError> {
        let get = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let bad = |name: &str, want: &str, v: &str| {
            ProviderError::InvalidConfig(format!("{name} must be {want}, not `{v}`"))
        };
        if self.base_url.as_deref().is_none_or(|u| u.trim().is_empty()) {
            let var = preset(&self.provider).and_then(|p| p.base_url_env);
            self.base_url = var.and_then(&get).map(|u| u.trim().to_string());
        }
        if let Some(v) = get("OPENAI_FORCE_API_MODE") {
            self.api_mode = Some(
                ApiMode::parse(&v)
                    .ok_or_else(|| bad("OPENAI_FORCE_API_MODE", "`responses` or `chat`", &v))?,
            );
        }
        if let Some(v) = get("OPENAI_TIMEOUT_MS") {
            self.request_timeout = Some(parse_ms("OPENAI_TIMEOUT_MS", &v)?);
        }
        if let Some(v) = get("OPENAI_STREAM_IDLE_MS") {
            self.stream_idle_timeout = Some(parse_ms("OPENAI_STREAM_IDLE_MS", &v)?);
        }
        for var in ["CAIRN_THINKING_LEVEL", "OPENAI_REASONING_EFFORT"] {
            if let (None, Some(v)) = (self.thinking_level, get(var)) {
                self.thinking_level = Some(
                    ThinkingLevel::parse(&v)
                        .ok_or_else(|| bad(var, "none, low, medium, high or xhigh", &v))?,
                );
            }
        }
        if let Some(v) = get("CAIRN_MAX_OUTPUT_TOKENS") {
            self.max_output_tokens = Some(
                v.trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| bad("CAIRN_MAX_OUTPUT_TOKENS", "a number of tokens", &v))?,
            );
        }
        if let Some(v) = get("SOCKS5_PROXY") {
            socks_proxy_url(&v)?;
            self.proxy = Some(v.trim().to_string());
        }
        if let Some(v) = get("CAIRN_CLIENT_TYPE") {
            self.client_type = Some(ClientType::parse(&v).ok_or_else(|| {
                bad(
                    "CAIRN_CLIENT_TYPE",
                    "openai, chat, anthropic, deepseek, openrouter, gemini or local",
                    &v,
                )
            })?);
        }
        if let Some(v) = get("CAIRN_LLM_LOG_DIR") {
            self.log_dir = Some(PathBuf::from(v.trim()));
        }
        Ok(self)
    }

    /// Which provider, client type and endpoint this spec means.
    pub fn resolve(&self) -> Result<Resolved, ProviderError> {
        let name = match self.provider.trim() {
            "" => "openai".to_string(),
            other => other.to_ascii_lowercase(),
        };
        let explicit_base = self
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|u| !u.is_empty());
        let Some(p) = preset(&name) else {
            // Any other name is an OpenAI-compatible endpoint the user names.
            let base = explicit_base.ok_or_else(|| unknown_provider(&name))?;
            return Ok(Resolved {
                provider: name,
                client_type: self.client_type.unwrap_or(ClientType::Chat),
                base_url: base.to_string(),
                key_env: None,
                needs_key: false,
            });
        };
        let inferred = ClientType::infer(&self.model);
        let client_type = match (self.client_type, p.client_type) {
            (Some(t), _) => t,
            (None, Some(t)) => t,
            // On an explicit (gateway) endpoint the protocol stays OpenAI's.
            (None, None) if explicit_base.is_some() && !inferred.is_openai_family() => {
                ClientType::Chat
            }
            (None, None) => inferred,
        };
        // The generic provider with a vendor's model and no endpoint: that vendor's preset.
        let effective: &ProviderPreset =
            match (p.client_type, explicit_base, preset_of(client_type)) {
                (None, None, Some(vendor)) => vendor,
                _ => p,
            };
        Ok(Resolved {
            provider: effective.name.to_string(),
            client_type,
            base_url: explicit_base.unwrap_or(effective.base_url).to_string(),
            key_env: effective.key_env,
            needs_key: effective.needs_key,
        })
    }
}

/// Builds the client a spec describes: Anthropic or OpenAI-family, wrapped so tool-call ids
/// are unique across the session, with the audit log when `log_dir` is set.
pub fn build_client(spec: &ProviderSpec) -> Result<Arc<dyn LlmClient>, ProviderError> {
    let r = spec.resolve()?;
    let catalog = Arc::new(match &spec.model_overrides {
        Some(o) => ModelCatalog::builtin().merged(o),
        None => ModelCatalog::builtin().clone(),
    });
    let api_key = spec.api_key.clone().filter(|k| !k.trim().is_empty());
    let client: Arc<dyn LlmClient> = if r.client_type == ClientType::Anthropic {
        let mut cfg = AnthropicConfig::new(r.base_url.clone(), api_key.clone());
        cfg.extra_headers = spec.extra_headers.clone();
        cfg.proxy = spec.proxy.clone();
        cfg.thinking_level = spec.thinking_level;
        cfg.max_output_tokens = spec.max_output_tokens;
        cfg.catalog = catalog.clone();
        if let Some(t) = spec.request_timeout {
            cfg.request_timeout = t;
        }
        if let Some(t) = spec.stream_idle_timeout {
            cfg.stream_idle_timeout = t;
        }
        Arc::new(AnthropicClient::new(cfg)?)
    } else {
        let (compat, mode) = r.client_type.openai_mode();
        let mut cfg = OpenAiConfig::new(r.base_url.clone(), api_key.clone());
        cfg.compat = compat;
        cfg.api_mode = spec.api_mode.unwrap_or(mode);
        cfg.extra_headers = spec.extra_headers.clone();
        cfg.proxy = spec.proxy.clone();
        cfg.thinking_level = spec.thinking_level;
        cfg.max_output_tokens = spec.max_output_tokens;
        cfg.catalog = catalog.clone();
        if let Some(t) = spec.request_timeout {
            cfg.request_timeout = t;
        }
        if let Some(t) = spec.stream_idle_timeout {
            cfg.stream_idle_timeout = t;
        }
        Arc::new(OpenAiClient::new(cfg)?)
    };
    tracing::debug!(provider = %r.provider, client_type = r.client_type.as_str(), "LLM client built");
    let client = match &spec.log_dir {
        Some(dir) => {
            let mut headers: Vec<(String, String)> = spec.extra_headers.clone();
            match (&api_key, r.client_type) {
                (Some(k), ClientType::Anthropic) => headers.push(("x-api-key".into(), k.clone())),
                (Some(k), _) => headers.push(("authorization".into(), format!("Bearer {k}"))),
                (None, _) => {}
            }
            let mut secrets: Vec<String> = api_key.iter().cloned().collect();
            secrets.extend(
                spec.extra_headers
                    .iter()
                    .filter(|(k, _)| is_secret_header(k))
                    .map(|(_, v)| v.clone()),
            );
            let meta = AuditMeta {
                provider: r.provider.clone(),
                endpoint: r.base_url.clone(),
                headers,
                secrets,
                include_attachments: spec.log_attachments,
            };
            Arc::new(AuditLog::new(client, dir.clone(), meta).with_catalog(catalog))
                as Arc<dyn LlmClient>
        }
        None => client,
    };
    let ids = spec.tool_call_ids.clone().unwrap_or_default();
    Ok(Arc::new(UniqueToolCallIds::new(client, ids)))
}

#[cfg(test)]
#[path = "factory_tests.rs"]
mod tests;
