//! What Cairn knows about well-known models and endpoints.

/// Context windows by model-name prefix; the first matching row wins.
const CONTEXT_WINDOWS: &[(&str, u64)] = &[
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("chatgpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-5", 400_000),
    ("gpt-oss", 131_072),
    ("codex-mini", 200_000),
    ("o1-mini", 128_000),
    ("o1-preview", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("deepseek", 131_072),
    ("claude-", 200_000),
    ("gemini-1.5", 1_048_576),
    ("gemini-2", 1_048_576),
    ("qwen", 131_072),
    ("llama3.", 131_072),
    ("llama-3.", 131_072),
    ("llama3", 8_192),
    ("llama-3", 8_192),
];

/// Lower-cased model name without a `vendor/` routing prefix.
fn bare(model: &str) -> String {
    let m = model.trim().to_ascii_lowercase();
    match m.rfind('/') {
        Some(i) => m[i + 1..].to_string(),
        None => m,
    }
}

/// The context window (tokens) of a well-known model, `None` when unknown.
pub fn context_window_for(model: &str) -> Option<u64> {
    let m = bare(model);
    CONTEXT_WINDOWS
        .iter()
        .find(|(prefix, _)| m.starts_with(prefix))
        .map(|(_, n)| *n)
}

/// Whether this is an OpenAI model name (served by the Responses API on OpenAI).
pub fn is_openai_model(model: &str) -> bool {
    let m = bare(model);
    ["gpt-", "o1", "o3", "o4", "codex", "chatgpt"]
        .iter()
        .any(|p| m.starts_with(p))
}

/// Host fragments of OpenAI-compatible gateways that do not serve the Responses API.
const NON_OPENAI_HOSTS: &[&str] = &[
    "deepseek",
    "openrouter",
    "groq",
    "together",
    "fireworks",
    "mistral",
    "anthropic",
    "googleapis",
    "dashscope",
    "moonshot",
    "siliconflow",
    "bigmodel",
    "perplexity",
    "cerebras",
    "ollama",
];

/// Ports of local servers that only speak Chat Completions (Ollama, LM Studio).
const NON_OPENAI_PORTS: &[u16] = &[11434, 1234];

/// Whether the base URL is obviously a non-OpenAI gateway (so Auto mode goes straight to chat).
pub fn is_non_openai_gateway(base_url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    let host = url.host_str().unwrap_or("").to_ascii_lowercase();
    NON_OPENAI_HOSTS.iter().any(|h| host.contains(h))
        || url.port().is_some_and(|p| NON_OPENAI_PORTS.contains(&p))
}

/// Whether the model or endpoint is DeepSeek's (no `reasoning_effort`, `reasoning_content` echoed).
pub fn is_deepseek(model: &str, base_url: &str) -> bool {
    model.to_ascii_lowercase().contains("deepseek")
        || base_url.to_ascii_lowercase().contains("deepseek")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_windows_of_well_known_models() {
        let cases = [
            ("gpt-4o", Some(128_000)),
            ("gpt-4o-mini-2024-07-18", Some(128_000)),
            ("gpt-4.1", Some(1_047_576)),
            ("gpt-4.1-nano", Some(1_047_576)),
            ("gpt-4", Some(8_192)),
            ("o3", Some(200_000)),
            ("o3-mini", Some(200_000)),
            ("o4-mini", Some(200_000)),
            ("o1-mini", Some(128_000)),
            ("gpt-5", Some(400_000)),
            ("gpt-5-mini", Some(400_000)),
            ("GPT-5.1-codex", Some(400_000)),
            ("deepseek-chat", Some(131_072)),
            ("deepseek-reasoner", Some(131_072)),
            ("claude-sonnet-4-5", Some(200_000)),
            ("anthropic/claude-3-5-haiku", Some(200_000)),
            ("qwen2.5-coder:32b", Some(131_072)),
            ("llama3.1:8b", Some(131_072)),
            ("meta-llama/llama-3.3-70b-instruct", Some(131_072)),
            ("llama3:8b", Some(8_192)),
            ("some-unknown-model", None),
            ("", None),
        ];
        for (model, want) in cases {
            assert_eq!(context_window_for(model), want, "{model}");
        }
    }

    #[test]
    fn openai_model_names() {
        for m in [
            "gpt-4o",
            "o1",
            "o3-mini",
            "o4-mini",
            "codex-mini-latest",
            "chatgpt-4o-latest",
            "openai/gpt-5",
        ] {
            assert!(is_openai_model(m), "{m}");
        }
        for m in [
            "deepseek-chat",
            "claude-3-5-sonnet",
            "qwen3",
            "llama3.1",
            "omni",
        ] {
            assert!(!is_openai_model(m), "{m}");
        }
    }

    #[test]
    fn gateways() {
        assert!(is_non_openai_gateway("https://api.deepseek.com/v1"));
        assert!(is_non_openai_gateway("https://openrouter.ai/api/v1"));
        assert!(is_non_openai_gateway("http://localhost:11434/v1"));
        assert!(is_non_openai_gateway("http://127.0.0.1:1234/v1"));
        assert!(!is_non_openai_gateway("https://api.openai.com/v1"));
        assert!(!is_non_openai_gateway("http://127.0.0.1:40123/v1"));
        assert!(!is_non_openai_gateway("not a url"));
        assert!(is_deepseek("deepseek-reasoner", "https://x.test"));
        assert!(is_deepseek("model", "https://api.deepseek.com"));
        assert!(!is_deepseek("gpt-4o", "https://api.openai.com/v1"));
    }
}
