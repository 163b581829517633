//! Shared helpers for the provider tests.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::time::Duration;

use cairn_engine::{LlmChunk, LlmClient, LlmOutcome, LlmRequest};
use cairn_protocol::{Message, TokenUsage, ToolCall, ToolSchema};
use cairn_providers::{AnthropicClient, AnthropicConfig, ApiMode, OpenAiClient, OpenAiConfig};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

pub const KEY: &str = "sk-test-0123456789abcdefSECRET";

pub fn config(base_url: &str, mode: ApiMode) -> OpenAiConfig {
    let mut cfg = OpenAiConfig::new(base_url, Some(KEY.to_string()));
    cfg.api_mode = mode;
    cfg.request_timeout = Duration::from_secs(5);
    cfg.stream_idle_timeout = Duration::from_secs(5);
    cfg
}

pub fn anthropic_config(base_url: &str) -> AnthropicConfig {
    let mut cfg = AnthropicConfig::new(base_url, Some(KEY.to_string()));
    cfg.request_timeout = Duration::from_secs(5);
    cfg.stream_idle_timeout = Duration::from_secs(5);
    cfg
}

pub fn anthropic(base_url: &str) -> AnthropicClient {
    AnthropicClient::new(anthropic_config(base_url)).unwrap()
}

pub fn client(base_url: &str, mode: ApiMode) -> OpenAiClient {
    OpenAiClient::new(config(base_url, mode)).unwrap()
}

pub fn request(model: &str) -> LlmRequest {
    LlmRequest {
        model: model.to_string(),
        messages: vec![Message::system("You are terse."), Message::user("hello")],
        tools: Vec::new(),
        reasoning_effort: None,
        req_id: "req-1".to_string(),
    }
}

pub fn tool(name: &str) -> ToolSchema {
    ToolSchema {
        name: name.to_string(),
        description: format!("the {name} tool"),
        parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

/// Everything a stream produced, split by kind.
#[derive(Debug, Default)]
pub struct Collected {
    pub text: String,
    pub text_chunks: usize,
    pub reasoning: String,
    pub calls: Vec<ToolCall>,
    pub usage: Option<TokenUsage>,
    pub outcome: Option<LlmOutcome>,
}

impl Collected {
    pub fn outcome(&self) -> &LlmOutcome {
        self.outcome.as_ref().unwrap()
    }
}

/// Drains the stream, checking that it ends with exactly one `End`.
pub async fn collect(client: &dyn LlmClient, req: LlmRequest) -> Collected {
    collect_with(client, req, CancellationToken::new()).await
}

pub async fn collect_with(
    client: &dyn LlmClient,
    req: LlmRequest,
    cancel: CancellationToken,
) -> Collected {
    let chunks: Vec<LlmChunk> = tokio::time::timeout(
        Duration::from_secs(20),
        client.stream(req, cancel).collect(),
    )
    .await
    .expect("stream did not end");
    let mut c = Collected::default();
    let n = chunks.len();
    for (i, chunk) in chunks.into_iter().enumerate() {
        match chunk {
            LlmChunk::Text(t) => {
                c.text.push_str(&t);
                c.text_chunks += 1;
            }
            LlmChunk::Reasoning(r) => c.reasoning.push_str(&r),
            LlmChunk::ToolCall(call) => c.calls.push(call),
            LlmChunk::Usage(u) => c.usage = Some(u),
            LlmChunk::End(o) => {
                assert_eq!(i, n - 1, "End must be the last chunk");
                assert!(c.outcome.is_none(), "exactly one End");
                c.outcome = Some(o);
            }
        }
    }
    assert!(c.outcome.is_some(), "stream ended without End");
    c
}

/// The three wire protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Chat,
    Responses,
    Anthropic,
}

pub const PROTOCOLS: [Protocol; 3] = [Protocol::Chat, Protocol::Responses, Protocol::Anthropic];

/// The model used with each protocol in tests.
pub fn model_of(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Chat => "gpt-4o",
        Protocol::Responses => "gpt-5",
        Protocol::Anthropic => "claude-sonnet-4-5",
    }
}

/// A factory spec for `protocol` against the mock at `base_url` (idle timeout 300 ms).
pub fn spec(protocol: Protocol, base_url: &str) -> cairn_providers::ProviderSpec {
    let model = model_of(protocol);
    let (provider, mode) = match protocol {
        Protocol::Chat => ("openai", Some(ApiMode::Chat)),
        Protocol::Responses => ("openai", Some(ApiMode::Responses)),
        Protocol::Anthropic => ("anthropic", None),
    };
    let mut s = cairn_providers::ProviderSpec::new(provider, model);
    s.base_url = Some(base_url.to_string());
    s.api_key = Some(KEY.to_string());
    s.api_mode = mode;
    s.request_timeout = Some(Duration::from_secs(5));
    s.stream_idle_timeout = Some(Duration::from_millis(300));
    s
}

/// A mock server with this script, Responses endpoint on.
pub async fn mock(script: Vec<cairn_testkit::Reply>) -> cairn_testkit::MockLlmServer {
    let server = cairn_testkit::MockLlmServer::with_script(script)
        .await
        .unwrap();
    server.enable_responses_api(true);
    server
}

/// An engine session over `llm` in auto mode with these tools and retry policy.
pub fn session(
    llm: std::sync::Arc<dyn LlmClient>,
    model: &str,
    tools: cairn_engine::ToolRegistry,
    retry: cairn_engine::RetryPolicy,
    dir: &std::path::Path,
) -> cairn_engine::Session {
    let mut config = cairn_engine::EngineConfig::new(dir.to_path_buf(), dir.join("state"), model);
    config.mode = cairn_protocol::Mode::Auto;
    config.retry = retry;
    cairn_engine::Session::builder(config, llm)
        .tools(tools)
        .approver(std::sync::Arc::new(cairn_engine::FixedApprover(
            cairn_protocol::ApprovalDecision::Once,
        )))
        .build()
}

/// Every event of one turn (bounded in time).
pub async fn run_turn(s: &cairn_engine::Session, input: &str) -> Vec<cairn_protocol::Event> {
    let mut stream = s.run(input);
    let mut events = Vec::new();
    let deadline = Duration::from_secs(30);
    while let Ok(Some(e)) = tokio::time::timeout(deadline, stream.recv()).await {
        events.push(e);
    }
    events
}
