//! Chat Completions streaming against the mock server.

use crate::common;

use cairn_engine::{OutcomeStatus, ReasoningEffort};
use cairn_protocol::{ContentPart, Message, TokenUsage, ToolCall, ToolResult, ToolStatus};
use cairn_providers::ApiMode;
use cairn_testkit::{Fault, MockLlmServer, Reply};
use common::{client, collect, request, tool, KEY};
use serde_json::json;

#[tokio::test]
async fn streams_text_in_many_chunks() {
    // Chunks that arrive apart are passed on apart: the answer streams.
    let text = "The quick brown fox jumps over the lazy dog. ".repeat(2);
    let server = MockLlmServer::with_script(vec![Reply::text(&text)
        .chunk_size(3)
        .delay_between_chunks(std::time::Duration::from_millis(3))])
    .await
    .unwrap();
    let got = collect(
        &client(&server.base_url(), ApiMode::Chat),
        request("gpt-4o"),
    )
    .await;
    assert_eq!(got.outcome().status, OutcomeStatus::Completed);
    assert_eq!(got.text, text);
    assert!(got.text_chunks >= 20, "{} chunks", got.text_chunks);
    assert!(got.calls.is_empty() && got.usage.is_none());
}

#[tokio::test]
async fn streams_ten_thousand_exact_chunks() {
    let chunks: Vec<String> = (0..10_000).map(|i| format!("t{i} ")).collect();
    let server = MockLlmServer::with_script(vec![Reply::text_chunks(chunks.clone())])
        .await
        .unwrap();
    let got = collect(
        &client(&server.base_url(), ApiMode::Chat),
        request("gpt-4o"),
    )
    .await;
    assert_eq!(got.outcome().status, OutcomeStatus::Completed);
    // Deltas that arrive in one network read travel as one chunk: fewer chunks than
    // events, never more, and every byte in order.
    assert!(
        (1..=10_000).contains(&got.text_chunks),
        "{} chunks",
        got.text_chunks
    );
    assert_eq!(got.text, chunks.concat());
}

#[tokio::test]
async fn streams_reasoning_before_text() {
    let server = MockLlmServer::with_script(vec![
        Reply::text("42").with_reasoning("Let me think step by step.")
    ])
    .await
    .unwrap();
    let got = collect(
        &client(&server.base_url(), ApiMode::Chat),
        request("deepseek-reasoner"),
    )
    .await;
    assert_eq!(got.outcome().status, OutcomeStatus::Completed);
    assert_eq!(got.reasoning, "Let me think step by step.");
    assert_eq!(got.text, "42");
}

#[tokio::test]
async fn assembles_one_tool_call_split_across_chunks() {
    let args = json!({"path": "src/main.rs", "offset": 10, "note": "ünïcödé"});
    let server = MockLlmServer::with_script(vec![Reply::tool_call(
        "call_abc",
        "read_file",
        args.clone(),
    )
    .chunk_size(2)])
    .await
    .unwrap();
    let got = collect(
        &client(&server.base_url(), ApiMode::Chat),
        request("gpt-4o"),
    )
    .await;
    assert_eq!(got.outcome().status, OutcomeStatus::Completed);
    assert_eq!(got.calls.len(), 1);
    assert_eq!(got.calls[0].id, "call_abc");
    assert_eq!(got.calls[0].name, "read_file");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&got.calls[0].arguments).unwrap(),
        args
    );
}

#[tokio::test]
async fn assembles_several_tool_calls_with_text_and_usage() {
    let reply = Reply::text("Reading both.")
        .with_tool_call("call_1", "read_file", json!({"path": "a.rs"}))
        .with_tool_call("call_2", "grep", json!({"pattern": "fn main", "path": "."}))
        .with_tool_call("call_3", "list_files", json!({}))
        .with_usage_details(1200, 80, 1024, 16)
        .chunk_size(3);
    let server = MockLlmServer::with_script(vec![reply]).await.unwrap();
    let got = collect(
        &client(&server.base_url(), ApiMode::Chat),
        request("gpt-4o"),
    )
    .await;
    assert_eq!(got.outcome().status, OutcomeStatus::Completed);
    assert_eq!(got.text, "Reading both.");
    let ids: Vec<&str> = got.calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_1", "call_2", "call_3"]);
    assert_eq!(got.calls[1].name, "grep");
    assert_eq!(
        got.calls[1].arguments,
        json!({"pattern": "fn main", "path": "."}).to_string()
    );
    assert_eq!(got.calls[2].arguments, "{}");
    assert_eq!(
        got.usage,
        Some(TokenUsage {
            input_tokens: 1200,
            output_tokens: 80,
            cached_input_tokens: 1024,
            reasoning_tokens: 16,
            cache_write_tokens: 0
        })
    );
}

#[tokio::test]
async fn request_body_and_headers_have_the_chat_shape() {
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let mut req = request("gpt-4o");
    req.messages = vec![
        Message::system("sys prompt"),
        Message::User {
            content: vec![
                ContentPart::Text {
                    text: "what is this?".into(),
                },
                ContentPart::Image {
                    mime_type: "image/png".into(),
                    data: "iVBORw0KGgo=".into(),
                },
            ],
        },
        Message::Assistant {
            content: vec![ContentPart::Reasoning { text: "hm".into() }],
            tool_calls: vec![ToolCall {
                id: "call_9".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"x\"}".into(),
            }],
            usage: None,
        },
        Message::Tool(ToolResult {
            call_id: "call_9".into(),
            name: "read_file".into(),
            content: "file body".into(),
            status: ToolStatus::Ok,
            images: Vec::new(),
        }),
        Message::assistant_text("done"),
        Message::user("thanks"),
    ];
    req.tools = vec![tool("read_file")];
    req.reasoning_effort = Some(ReasoningEffort::High);
    let mut cfg = common::config(&server.base_url(), ApiMode::Chat);
    cfg.extra_headers.push(("X-Title".into(), "Cairn".into()));
    let c = cairn_providers::OpenAiClient::new(cfg).unwrap();
    assert_eq!(
        collect(&c, req).await.outcome().status,
        OutcomeStatus::Completed
    );

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(r.header("x-title"), Some("Cairn"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let b = &r.body;
    assert_eq!(b["model"], "gpt-4o");
    assert_eq!(b["stream"], true);
    assert_eq!(b["stream_options"], json!({"include_usage": true}));
    // gpt-4o is not a reasoning model: the effort is not sent (OpenAI would reject it).
    assert!(b.get("reasoning_effort").is_none(), "{b}");
    assert_eq!(
        b["tools"],
        json!([{"type": "function", "function": {"name": "read_file", "description": "the read_file tool",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}])
    );
    let m = &b["messages"];
    assert_eq!(m[0], json!({"role": "system", "content": "sys prompt"}));
    assert_eq!(m[1]["role"], "user");
    assert_eq!(
        m[1]["content"][0],
        json!({"type": "text", "text": "what is this?"})
    );
    assert_eq!(
        m[1]["content"][1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}})
    );
    assert_eq!(m[2]["role"], "assistant");
    assert_eq!(m[2]["content"], serde_json::Value::Null);
    assert_eq!(
        m[2]["tool_calls"],
        json!([{"id": "call_9", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"x\"}"}}])
    );
    assert!(
        m[2].get("reasoning_content").is_none(),
        "reasoning is only echoed to DeepSeek"
    );
    assert_eq!(
        m[3],
        json!({"role": "tool", "tool_call_id": "call_9", "content": "file body"})
    );
    assert_eq!(m[4], json!({"role": "assistant", "content": "done"}));
    assert_eq!(m[5], json!({"role": "user", "content": "thanks"}));
}

#[tokio::test]
async fn tools_omitted_when_empty_and_deepseek_gets_no_reasoning_effort() {
    let server = MockLlmServer::with_script(vec![Reply::text("a"), Reply::text("b")])
        .await
        .unwrap();
    let c = client(&server.base_url(), ApiMode::Auto);
    let mut req = request("deepseek-chat");
    req.reasoning_effort = Some(ReasoningEffort::Low);
    req.messages.push(Message::Assistant {
        content: vec![ContentPart::Reasoning {
            text: "thought".into(),
        }],
        tool_calls: vec![ToolCall {
            id: "c1".into(),
            name: "x".into(),
            arguments: "{}".into(),
        }],
        usage: None,
    });
    assert_eq!(collect(&c, req).await.text, "a");
    let mut req = request("llama3.1:8b");
    req.messages = vec![Message::user("no key needed")];
    let keyless = cairn_providers::OpenAiClient::new(cairn_providers::OpenAiConfig {
        api_key: None,
        ..common::config(&server.base_url(), ApiMode::Auto)
    })
    .unwrap();
    assert_eq!(collect(&keyless, req).await.text, "b");

    let reqs = server.requests();
    assert!(
        reqs.iter().all(|r| r.path == "/v1/chat/completions"),
        "non-OpenAI models use chat in Auto"
    );
    let b = &reqs[0].body;
    assert!(b.get("tools").is_none());
    assert!(b.get("reasoning_effort").is_none());
    assert_eq!(b["messages"][2]["reasoning_content"], "thought");
    assert_eq!(reqs[1].header("authorization"), None);
}

#[tokio::test]
async fn a_non_streamed_json_answer_is_understood() {
    let completion = json!({"id": "x", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": "whole answer"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2}});
    let as_200 = |body: String| Fault::Status {
        code: 200,
        retry_after: None,
        body: Some(body),
    };
    let server = MockLlmServer::with_script(vec![
        Reply::fault(as_200(completion.to_string())),
        Reply::fault(as_200(
            json!({"error": {"message": "upstream failed", "code": "server_error"}}).to_string(),
        )),
    ])
    .await
    .unwrap();
    let c = client(&server.base_url(), ApiMode::Chat);
    let got = collect(&c, request("gpt-4o")).await;
    assert_eq!(got.outcome().status, OutcomeStatus::Completed);
    assert_eq!(got.text, "whole answer");
    assert_eq!(got.usage.unwrap().input_tokens, 5);
    let got = collect(&c, request("gpt-4o")).await;
    assert_eq!(got.outcome().kind, Some(cairn_engine::FailureKind::Server));
    assert!(got
        .outcome()
        .message
        .as_deref()
        .unwrap()
        .contains("upstream failed"));
}
