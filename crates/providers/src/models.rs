//! Model-name and endpoint heuristics (the capability table is in `catalog`).

/// Lower-cased model name without a `vendor/` routing prefix.
fn bare(model: &str) -> String {
    let m = model.trim().to_ascii_lowercase();
    match m.rfind('/') {
        Some(i) => m[i + 1..].to_string(),
        None => m,
    }
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
