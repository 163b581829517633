//! Configuration of the OpenAI-compatible client.

use std::sync::Arc;
use std::time::Duration;

use crate::catalog::ModelCatalog;
use crate::error::ProviderError;
use crate::thinking::ThinkingLevel;

/// Default base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Default time to connect and receive response headers.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_millis(120_000);
/// Default longest silence inside a streamed response.
pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_millis(90_000);

/// Which OpenAI wire API to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApiMode {
    /// Responses API for OpenAI models on OpenAI-like endpoints, with fallback to Chat Completions.
    #[default]
    Auto,
    /// Always the Responses API (`/responses`), no fallback.
    Responses,
    /// Always Chat Completions (`/chat/completions`).
    Chat,
}

impl ApiMode {
    /// Parses `responses` / `chat` / `auto` (case-insensitive).
    pub fn parse(s: &str) -> Option<ApiMode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" | "" => Some(ApiMode::Auto),
            "responses" => Some(ApiMode::Responses),
            "chat" | "chat_completions" | "completions" => Some(ApiMode::Chat),
            _ => None,
        }
    }
}

/// Which OpenAI-compatible server family a client talks to: decides the request quirks
/// (how reasoning is asked for, DeepSeek's `reasoning_content` echo).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compat {
    /// Inferred per request: DeepSeek when the model or base URL says so, else OpenAI.
    #[default]
    Auto,
    /// OpenAI itself (or a faithful proxy): `reasoning_effort` / `reasoning.effort`.
    OpenAi,
    /// DeepSeek: no thinking levels; reasoning echoed back as `reasoning_content`.
    DeepSeek,
    /// OpenRouter: `reasoning: {effort}`.
    OpenRouter,
    /// Gemini's OpenAI-compatible endpoint: `reasoning_effort`.
    Gemini,
    /// Local servers (Ollama, LM Studio): `reasoning_effort` passed through.
    Local,
}

/// Settings of an [`crate::OpenAiClient`].
#[derive(Clone)]
pub struct OpenAiConfig {
    /// Endpoint base, e.g. `https://api.openai.com/v1` (no trailing slash needed).
    pub base_url: String,
    /// API key sent as `Authorization: Bearer …`; `None` for keyless local servers.
    pub api_key: Option<String>,
    /// Wire API selection.
    pub api_mode: ApiMode,
    /// Time allowed to connect and receive response headers.
    pub request_timeout: Duration,
    /// Longest silence (no bytes) allowed inside a streamed response.
    pub stream_idle_timeout: Duration,
    /// Extra headers sent with every request (e.g. OpenRouter's `HTTP-Referer`).
    pub extra_headers: Vec<(String, String)>,
    /// `SOCKS5_PROXY` value (`host:port` or `socks5h://…`).
    pub proxy: Option<String>,
    /// Server family (request quirks).
    pub compat: Compat,
    /// Thinking level when a request names none.
    pub thinking_level: Option<ThinkingLevel>,
    /// Cap on the tokens of one answer; `None` = the model's (`max_tokens` of the model table
    /// for Anthropic, nothing sent for OpenAI-family endpoints).
    pub max_output_tokens: Option<u64>,
    /// Model capabilities (reasoning efforts, encrypted reasoning).
    pub catalog: Arc<ModelCatalog>,
}

impl Default for OpenAiConfig {
    fn default() -> Self {
        OpenAiConfig {
            base_url: DEFAULT_BASE_URL.to_string(),
            api_key: None,
            api_mode: ApiMode::Auto,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            stream_idle_timeout: DEFAULT_STREAM_IDLE_TIMEOUT,
            extra_headers: Vec::new(),
            proxy: None,
            compat: Compat::Auto,
            thinking_level: None,
            max_output_tokens: None,
            catalog: Arc::new(ModelCatalog::builtin().clone()),
        }
    }
}

impl std::fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = self.api_key.as_ref().map(|_| "[redacted]");
        let headers: Vec<&str> = self.extra_headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("OpenAiConfig")
            .field("base_url", &crate::classify::display_base(&self.base_url))
            .field("api_key", &key)
            .field("api_mode", &self.api_mode)
            .field("request_timeout", &self.request_timeout)
            .field("stream_idle_timeout", &self.stream_idle_timeout)
            .field("extra_headers", &headers)
            .field("proxy", &self.proxy.as_ref().map(|_| "[set]"))
            .field("compat", &self.compat)
            .field("thinking_level", &self.thinking_level)
            .finish()
    }
}

impl OpenAiConfig {
    /// A default configuration for this base URL and key.
    pub fn new(base_url: impl Into<String>, api_key: Option<String>) -> Self {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key,
            ..OpenAiConfig::default()
        }
    }

    /// Reads `OPENAI_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_FORCE_API_MODE`, `OPENAI_TIMEOUT_MS`,
    /// `OPENAI_STREAM_IDLE_MS`, `OPENAI_REASONING_EFFORT` and `SOCKS5_PROXY`; an unparsable
    /// value is an error.
    pub fn from_env() -> Result<Self, ProviderError> {
        Self::from_lookup(cairn_engine::secret_env::var)
    }

    /// Like [`OpenAiConfig::from_env`], reading variables through `get`.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ProviderError> {
        let get = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let mut cfg = OpenAiConfig::default();
        if let Some(url) = get("OPENAI_BASE_URL") {
            cfg.base_url = url.trim().to_string();
        }
        cfg.api_key = get("OPENAI_API_KEY").map(|k| k.trim().to_string());
        if let Some(mode) = get("OPENAI_FORCE_API_MODE") {
            cfg.api_mode = ApiMode::parse(&mode).ok_or_else(|| {
                ProviderError::InvalidConfig(format!(
                    "OPENAI_FORCE_API_MODE must be `responses` or `chat`, not `{mode}`"
                ))
            })?;
        }
        if let Some(ms) = get("OPENAI_TIMEOUT_MS") {
            cfg.request_timeout = parse_ms("OPENAI_TIMEOUT_MS", &ms)?;
        }
        if let Some(ms) = get("OPENAI_STREAM_IDLE_MS") {
            cfg.stream_idle_timeout = parse_ms("OPENAI_STREAM_IDLE_MS", &ms)?;
        }
        if let Some(level) = get("OPENAI_REASONING_EFFORT") {
            cfg.thinking_level = Some(ThinkingLevel::parse(&level).ok_or_else(|| {
                ProviderError::InvalidConfig(format!(
                    "OPENAI_REASONING_EFFORT must be none, low, medium, high or xhigh, not `{level}`"
                ))
            })?);
        }
        if let Some(proxy) = get("SOCKS5_PROXY") {
            crate::http::socks_proxy_url(&proxy)?;
            cfg.proxy = Some(proxy.trim().to_string());
        }
        Ok(cfg)
    }

    /// The base URL without trailing slashes.
    pub(crate) fn base(&self) -> &str {
        self.base_url.trim_end_matches('/')
    }
}

/// Parses a positive millisecond count.
pub(crate) fn parse_ms(name: &str, value: &str) -> Result<Duration, ProviderError> {
    match value.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(Duration::from_millis(ms)),
        _ => Err(ProviderError::InvalidConfig(format!(
            "{name} must be a positive number of milliseconds, not `{value}`"
        ))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn lookup<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |n| {
            vars.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn defaults_when_unset() {
        let cfg = OpenAiConfig::from_lookup(lookup(&[])).unwrap();
        assert_eq!(cfg.base_url, DEFAULT_BASE_URL);
        assert_eq!(cfg.api_key, None);
        assert_eq!(cfg.api_mode, ApiMode::Auto);
        assert_eq!(cfg.request_timeout, Duration::from_secs(120));
        assert_eq!(cfg.stream_idle_timeout, Duration::from_secs(90));
    }

    #[test]
    fn reads_every_variable() {
        let vars = [
            ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/"),
            ("OPENAI_API_KEY", "sk-secret-value"),
            ("OPENAI_FORCE_API_MODE", "Chat"),
            ("OPENAI_TIMEOUT_MS", "1500"),
            ("OPENAI_STREAM_IDLE_MS", "250"),
            ("OPENAI_REASONING_EFFORT", "xhigh"),
            ("SOCKS5_PROXY", "127.0.0.1:1080"),
        ];
        let cfg = OpenAiConfig::from_lookup(lookup(&vars)).unwrap();
        assert_eq!(cfg.base(), "http://127.0.0.1:11434/v1");
        assert_eq!(cfg.api_key.as_deref(), Some("sk-secret-value"));
        assert_eq!(cfg.api_mode, ApiMode::Chat);
        assert_eq!(cfg.request_timeout, Duration::from_millis(1500));
        assert_eq!(cfg.stream_idle_timeout, Duration::from_millis(250));
        assert_eq!(cfg.thinking_level, Some(ThinkingLevel::XHigh));
        assert_eq!(cfg.proxy.as_deref(), Some("127.0.0.1:1080"));
    }

    #[test]
    fn rejects_bad_values() {
        assert!(OpenAiConfig::from_lookup(lookup(&[("OPENAI_REASONING_EFFORT", "max")])).is_err());
        assert!(OpenAiConfig::from_lookup(lookup(&[("SOCKS5_PROXY", "http://p:1")])).is_err());
        assert!(OpenAiConfig::from_lookup(lookup(&[("OPENAI_FORCE_API_MODE", "grpc")])).is_err());
        assert!(OpenAiConfig::from_lookup(lookup(&[("OPENAI_TIMEOUT_MS", "soon")])).is_err());
        assert!(OpenAiConfig::from_lookup(lookup(&[("OPENAI_STREAM_IDLE_MS", "0")])).is_err());
        let empty_key = OpenAiConfig::from_lookup(lookup(&[("OPENAI_API_KEY", " ")])).unwrap();
        assert_eq!(empty_key.api_key, None);
    }

    #[test]
    fn debug_never_prints_the_key() {
        let mut cfg = OpenAiConfig::new("https://example.test/v1", Some("sk-very-secret".into()));
        cfg.extra_headers
            .push(("X-Token".into(), "also-secret".into()));
        let s = format!("{cfg:?}");
        assert!(
            !s.contains("sk-very-secret") && !s.contains("also-secret"),
            "{s}"
        );
        assert!(s.contains("[redacted]") && s.contains("example.test"));
    }
}
