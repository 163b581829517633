//! Thinking level per request, mapped per provider (and skipped where unsupported).

use crate::common;

use cairn_engine::ReasoningEffort;
use cairn_providers::{build_client, ProviderSpec, ThinkingLevel};
use cairn_testkit::Reply;
use common::*;
use serde_json::{json, Value};

/// The body of one request sent with this spec, model, default level and request effort.
async fn body(
    provider: &str,
    model: &str,
    default: Option<ThinkingLevel>,
    effort: Option<ReasoningEffort>,
) -> Value {
    let server = mock(vec![Reply::text("ok")]).await;
    let mut s = ProviderSpec::new(provider, model);
    s.base_url = Some(server.base_url());
    s.api_key = Some(KEY.into());
    s.thinking_level = default;
    if provider == "openai" {
        s.api_mode = Some(cairn_providers::ApiMode::Chat);
    }
    let mut r = request(model);
    r.reasoning_effort = effort;
    collect(build_client(&s).unwrap().as_ref(), r).await;
    server.requests()[0].body.clone()
}

#[tokio::test]
async fn levels_map_per_provider() {
    use ThinkingLevel as L;
    let x = Some(L::XHigh);
    // OpenAI: the nearest effort the model accepts; the request's effort wins over the default.
    assert_eq!(
        body("openai", "gpt-5.2", x, None).await["reasoning_effort"],
        "xhigh"
    );
    assert_eq!(
        body("openai", "gpt-5", x, None).await["reasoning_effort"],
        "high"
    );
    assert_eq!(
        body("openai", "gpt-5", Some(L::None), None).await["reasoning_effort"],
        "minimal"
    );
    assert_eq!(
        body("openai", "o3", x, Some(ReasoningEffort::Low)).await["reasoning_effort"],
        "low"
    );
    assert!(body("openai", "gpt-4o", x, None)
        .await
        .get("reasoning_effort")
        .is_none());
    // DeepSeek: no levels at all.
    let d = body(
        "deepseek",
        "deepseek-reasoner",
        x,
        Some(ReasoningEffort::High),
    )
    .await;
    assert!(
        d.get("reasoning_effort").is_none() && d.get("reasoning").is_none(),
        "{d}"
    );
    // OpenRouter: `reasoning: {effort}`.
    let o = body(
        "openrouter",
        "anthropic/claude-sonnet-4.5",
        Some(L::Medium),
        None,
    )
    .await;
    assert_eq!(o["reasoning"], json!({"effort": "medium"}));
    assert!(o.get("reasoning_effort").is_none());
    // Gemini's endpoint and local servers: `reasoning_effort`.
    assert_eq!(
        body("gemini", "gemini-2.5-flash", Some(L::None), None).await["reasoning_effort"],
        "none"
    );
    assert_eq!(
        body("ollama", "gpt-oss:20b", Some(L::High), None).await["reasoning_effort"],
        "high"
    );
    assert!(body("ollama", "llama3.1:8b", Some(L::High), None)
        .await
        .get("reasoning_effort")
        .is_none());
    // Anthropic: a thinking budget, or adaptive thinking with an effort.
    let a = body(
        "anthropic",
        "claude-sonnet-4-5",
        None,
        Some(ReasoningEffort::Medium),
    )
    .await;
    assert_eq!(
        a["thinking"],
        json!({"type": "enabled", "budget_tokens": 8192})
    );
    let a = body("anthropic", "claude-opus-4-6", x, None).await;
    assert_eq!(a["thinking"], json!({"type": "adaptive"}));
    assert_eq!(a["output_config"], json!({"effort": "high"}));
    let a = body("anthropic", "claude-sonnet-4-5", Some(L::None), None).await;
    assert!(a.get("thinking").is_none());
    // No level anywhere: nothing is sent.
    assert!(body("openai", "o3", None, None)
        .await
        .get("reasoning_effort")
        .is_none());
}
