//! Shared helpers for the provider tests.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::time::Duration;

use cairn_engine::{LlmChunk, LlmClient, LlmOutcome, LlmRequest};
use cairn_protocol::{Message, TokenUsage, ToolCall, ToolSchema};
use cairn_providers::{ApiMode, OpenAiClient, OpenAiConfig};
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

pub const KEY: &str = "sk-test-0123456789abcdefSECRET";

pub fn config(base_url: &str, mode: ApiMode) -> OpenAiConfig {
    OpenAiConfig {
        base_url: base_url.to_string(),
        api_key: Some(KEY.to_string()),
        api_mode: mode,
        request_timeout: Duration::from_secs(5),
        stream_idle_timeout: Duration::from_secs(5),
        extra_headers: Vec::new(),
    }
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
pub async fn collect(client: &OpenAiClient, req: LlmRequest) -> Collected {
    collect_with(client, req, CancellationToken::new()).await
}

pub async fn collect_with(
    client: &OpenAiClient,
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
