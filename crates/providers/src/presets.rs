//! Provider presets (endpoint, key variable, protocol) and the client type (seed 000
//! `clientType`): the wire protocol and quirks, inferred from the model id unless given.

use crate::catalog::bare;
use crate::error::ProviderError;
use crate::models::is_openai_model;
use crate::openai::{ApiMode, Compat};

/// The wire protocol and request quirks a client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClientType {
    /// OpenAI: Responses API with Chat Completions fallback.
    OpenAi,
    /// Any OpenAI-compatible server over Chat Completions.
    Chat,
    /// Anthropic Messages API.
    Anthropic,
    /// DeepSeek (Chat Completions, `reasoning_content`, no thinking levels).
    DeepSeek,
    /// OpenRouter (Chat Completions, `reasoning: {effort}`).
    OpenRouter,
    /// Gemini's OpenAI-compatible endpoint.
    Gemini,
    /// A local server (Ollama, LM Studio) over Chat Completions.
    Local,
}

impl ClientType {
    /// Parses a client type name (`openai`, `chat`, `anthropic`/`claude`, `deepseek`,
    /// `openrouter`, `gemini`, `local`/`ollama`/`lmstudio`).
    pub fn parse(s: &str) -> Option<ClientType> {
        let s = s.trim().to_ascii_lowercase();
        let head = s.split(['-', '_']).next().unwrap_or("");
        Some(match head {
            "openai" | "responses" => ClientType::OpenAi,
            "chat" | "compatible" => ClientType::Chat,
            "anthropic" | "claude" => ClientType::Anthropic,
            "deepseek" => ClientType::DeepSeek,
            "openrouter" => ClientType::OpenRouter,
            "gemini" | "google" => ClientType::Gemini,
            "local" | "ollama" | "lmstudio" => ClientType::Local,
            _ => return None,
        })
    }

    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientType::OpenAi => "openai",
            ClientType::Chat => "chat",
            ClientType::Anthropic => "anthropic",
            ClientType::DeepSeek => "deepseek",
            ClientType::OpenRouter => "openrouter",
            ClientType::Gemini => "gemini",
            ClientType::Local => "local",
        }
    }

    /// The client type a model id implies (`claude-…` → Anthropic, `deepseek-…` →
    /// DeepSeek, `gemini-…` → Gemini, OpenAI model names → OpenAI, else Chat).
    pub fn infer(model: &str) -> ClientType {
        let m = bare(model);
        if m.starts_with("claude") {
            ClientType::Anthropic
        } else if m.starts_with("deepseek") {
            ClientType::DeepSeek
        } else if m.starts_with("gemini") {
            ClientType::Gemini
        } else if is_openai_model(&m) {
            ClientType::OpenAi
        } else {
            ClientType::Chat
        }
    }

    /// Whether this type speaks an OpenAI wire API.
    pub fn is_openai_family(self) -> bool {
        self != ClientType::Anthropic
    }

    /// Request quirks and API selection for OpenAI-family types.
    pub(crate) fn openai_mode(self) -> (Compat, ApiMode) {
        match self {
            ClientType::OpenAi => (Compat::OpenAi, ApiMode::Auto),
            ClientType::Chat | ClientType::Anthropic => (Compat::Auto, ApiMode::Auto),
            ClientType::DeepSeek => (Compat::DeepSeek, ApiMode::Chat),
            ClientType::OpenRouter => (Compat::OpenRouter, ApiMode::Chat),
            ClientType::Gemini => (Compat::Gemini, ApiMode::Chat),
            ClientType::Local => (Compat::Local, ApiMode::Chat),
        }
    }
}

/// What Cairn knows about a provider by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderPreset {
    /// Provider name (also the keyring entry name).
    pub name: &'static str,
    /// Default endpoint base URL.
    pub base_url: &'static str,
    /// Environment variable of its API key (which wins over the keyring).
    pub key_env: Option<&'static str>,
    /// Environment variable that overrides the base URL.
    pub base_url_env: Option<&'static str>,
    /// Whether requests need a key (local servers do not).
    pub needs_key: bool,
    /// Client type used unless one is given (`None` = inferred from the model id).
    pub client_type: Option<ClientType>,
}

/// The presets: OpenAI (generic: the client type follows the model), Anthropic, DeepSeek,
/// OpenRouter, Ollama, LM Studio and Gemini's OpenAI-compatible endpoint.
pub const PRESETS: &[ProviderPreset] = &[
    ProviderPreset {
        name: "openai",
        base_url: "https://api.openai.com/v1",
        key_env: Some("OPENAI_API_KEY"),
        base_url_env: Some("OPENAI_BASE_URL"),
        needs_key: true,
        client_type: None,
    },
    ProviderPreset {
        name: "anthropic",
        base_url: "https://api.anthropic.com/v1",
        key_env: Some("ANTHROPIC_API_KEY"),
        base_url_env: Some("ANTHROPIC_BASE_URL"),
        needs_key: true,
        client_type: Some(ClientType::Anthropic),
    },
    ProviderPreset {
        name: "deepseek",
        base_url: "https://api.deepseek.com/v1",
        key_env: Some("DEEPSEEK_API_KEY"),
        base_url_env: None,
        needs_key: true,
        client_type: Some(ClientType::DeepSeek),
    },
    ProviderPreset {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        key_env: Some("OPENROUTER_API_KEY"),
        base_url_env: None,
        needs_key: true,
        client_type: Some(ClientType::OpenRouter),
    },
    ProviderPreset {
        name: "ollama",
        base_url: "http://127.0.0.1:11434/v1",
        key_env: None,
        base_url_env: None,
        needs_key: false,
        client_type: Some(ClientType::Local),
    },
    ProviderPreset {
        name: "lmstudio",
        base_url: "http://127.0.0.1:1234/v1",
        key_env: None,
        base_url_env: None,
        needs_key: false,
        client_type: Some(ClientType::Local),
    },
    ProviderPreset {
        name: "gemini",
        base_url: "https://generativelanguage.googleapis.com/v1beta/openai",
        key_env: Some("GEMINI_API_KEY"),
        base_url_env: None,
        needs_key: true,
        client_type: Some(ClientType::Gemini),
    },
];

/// The preset named `name` (case-insensitive; `lm-studio` and `google` accepted).
pub fn preset(name: &str) -> Option<&'static ProviderPreset> {
    let n = match name.trim().to_ascii_lowercase().as_str() {
        "lm-studio" | "lm_studio" => "lmstudio".to_string(),
        "google" => "gemini".to_string(),
        "claude" => "anthropic".to_string(),
        other => other.to_string(),
    };
    PRESETS.iter().find(|p| p.name == n)
}

/// The preset a client type belongs to when it is inferred for the generic provider.
pub(crate) fn preset_of(t: ClientType) -> Option<&'static ProviderPreset> {
    match t {
        ClientType::Anthropic => preset("anthropic"),
        ClientType::DeepSeek => preset("deepseek"),
        ClientType::Gemini => preset("gemini"),
        _ => None,
    }
}

/// The error for an unknown provider name.
pub(crate) fn unknown_provider(name: &str) -> ProviderError {
    let known: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    ProviderError::InvalidConfig(format!(
        "unknown provider `{name}`: use one of {}, or give a base URL for any OpenAI-compatible endpoint",
        known.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inference_from_model_ids() {
        let cases = [
            ("claude-sonnet-4-5", ClientType::Anthropic),
            ("anthropic/claude-3-5-haiku", ClientType::Anthropic),
            ("deepseek-reasoner", ClientType::DeepSeek),
            ("gemini-2.5-pro", ClientType::Gemini),
            ("gpt-5", ClientType::OpenAi),
            ("o4-mini", ClientType::OpenAi),
            ("qwen2.5-coder:7b", ClientType::Chat),
            ("mock-model", ClientType::Chat),
        ];
        for (m, want) in cases {
            assert_eq!(ClientType::infer(m), want, "{m}");
        }
    }

    #[test]
    fn names_parse() {
        assert_eq!(ClientType::parse("claude-4-8"), Some(ClientType::Anthropic));
        assert_eq!(ClientType::parse("deepseek-v4"), Some(ClientType::DeepSeek));
        assert_eq!(ClientType::parse("OpenAI"), Some(ClientType::OpenAi));
        assert_eq!(ClientType::parse("grpc"), None);
        for t in [
            ClientType::OpenAi,
            ClientType::Chat,
            ClientType::Anthropic,
            ClientType::DeepSeek,
            ClientType::OpenRouter,
            ClientType::Gemini,
            ClientType::Local,
        ] {
            assert_eq!(ClientType::parse(t.as_str()), Some(t));
        }
        assert_eq!(preset("LM-Studio").map(|p| p.name), Some("lmstudio"));
        assert!(preset("nope").is_none());
        assert!(PRESETS.iter().all(|p| p.needs_key == p.key_env.is_some()));
    }
}
