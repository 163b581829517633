//! The Responses API path and the Auto-mode fallback to Chat Completions.

use crate::common;

use cairn_engine::{FailureKind, OutcomeStatus, ReasoningEffort};
use cairn_protocol::{ContentPart, Message, TokenUsage, ToolCall, ToolResult, ToolStatus};
use cairn_providers::ApiMode;
use cairn_testkit::{openai_error, Fault, MockLlmServer, Reply};
use common::{client, collect, request, tool};
use serde_json::json;

fn paths(server: &MockLlmServer) -> Vec<String> {
    server.requests().into_iter().map(|r| r.path).collect()
}

#[tokio::test]
async fn streams_text_reasoning_tool_calls_and_usage() {
    let reply = Reply::text("Let me look.")
        .with_reasoning("The user wants a file.")
        .with_tool_call("call_1", "read_file", json!({"path": "README.md"}))
        .with_tool_call("call_2", "grep", json!({"pattern": "todo"}))
        .with_usage_details(500, 40, 128, 12)
        .chunk_size(2);
    let server = MockLlmServer::with_script(vec![reply]).await.unwrap();
    server.enable_responses_api(true);
    let got = collect(
        &client(&server.base_url(), ApiMode::Responses),
        request("gpt-5"),
    )
    .await;
    assert_eq!(
        got.outcome().status,
        OutcomeStatus::Completed,
        "{:?}",
        got.outcome()
    );
    assert_eq!(got.text, "Let me look.");
    // Deltas of one network read travel together; never more chunks than deltas.
    assert!((1..=6).contains(&got.text_chunks), "{}", got.text_chunks);
    assert_eq!(got.reasoning, "The user wants a file.");
    assert_eq!(
        got.calls,
        vec![
            ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                arguments: json!({"path": "README.md"}).to_string()
            },
            ToolCall {
                id: "call_2".into(),
                name: "grep".into(),
                arguments: json!({"pattern": "todo"}).to_string()
            },
        ]
    );
    assert_eq!(
        got.usage,
        Some(TokenUsage {
            input_tokens: 500,
            output_tokens: 40,
            cached_input_tokens: 128,
            reasoning_tokens: 12,
            cache_write_tokens: 0
        })
    );
    assert_eq!(paths(&server), ["/v1/responses"]);
}

#[tokio::test]
async fn request_body_has_the_responses_shape() {
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    server.enable_responses_api(true);
    let mut req = request("o3");
    req.messages = vec![
        Message::system("be brief"),
        Message::User {
            content: vec![
                ContentPart::Text {
                    text: "look".into(),
                },
                ContentPart::Image {
                    mime_type: "image/jpeg".into(),
                    data: "AAAA".into(),
                },
            ],
        },
        Message::Assistant {
            content: vec![ContentPart::Text {
                text: "calling".into(),
            }],
            tool_calls: vec![ToolCall {
                id: "call_7".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"a\"}".into(),
            }],
            usage: None,
        },
        Message::Tool(ToolResult {
            call_id: "call_7".into(),
            name: "read_file".into(),
            content: "A".into(),
            status: ToolStatus::Ok,
            images: Vec::new(),
        }),
    ];
    req.tools = vec![tool("read_file")];
    req.reasoning_effort = Some(ReasoningEffort::Medium);
    let got = collect(&client(&server.base_url(), ApiMode::Auto), req).await;
    assert_eq!(got.outcome().status, OutcomeStatus::Completed);
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/responses");
    assert_eq!(r.bearer(), Some(common::KEY));
    let b = &r.body;
    assert_eq!(
        (b["stream"].clone(), b["store"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(b["instructions"], "be brief");
    assert_eq!(
        b["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
    assert_eq!(
        b["tools"],
        json!([{"type": "function", "name": "read_file", "description": "the read_file tool", "strict": false,
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}])
    );
    assert_eq!(
        b["input"],
        json!([
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": "data:image/jpeg;base64,AAAA"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "calling"}]},
            {"type": "function_call", "call_id": "call_7", "name": "read_file", "arguments": "{\"path\":\"a\"}"},
            {"type": "function_call_output", "call_id": "call_7", "output": "A"},
        ])
    );
}

#[tokio::test]
async fn not_found_falls_back_to_chat_and_is_cached_per_model() {
    let server = MockLlmServer::with_script(vec![
        Reply::text("one"),
        Reply::text("two"),
        Reply::text("three"),
    ])
    .await
    .unwrap();
    let c = client(&server.base_url(), ApiMode::Auto);
    assert!(!c.falls_back_to_chat("gpt-4o"));
    assert_eq!(collect(&c, request("gpt-4o")).await.text, "one");
    assert!(c.falls_back_to_chat("gpt-4o"));
    assert_eq!(collect(&c, request("gpt-4o")).await.text, "two");
    assert_eq!(collect(&c, request("o4-mini")).await.text, "three");
    assert_eq!(
        paths(&server),
        [
            "/v1/responses",
            "/v1/chat/completions",
            "/v1/chat/completions",
            "/v1/responses",
            "/v1/chat/completions"
        ]
    );
}

#[tokio::test]
async fn parameter_incompatibility_falls_back_for_this_request_only() {
    let incompatible = Fault::Status {
        code: 400,
        retry_after: None,
        body: Some(openai_error(
            "Unsupported parameter: 'store'",
            "invalid_request_error",
            Some("unsupported_parameter"),
            Some("store"),
        )),
    };
    let server = MockLlmServer::with_script(vec![
        Reply::fault(incompatible),
        Reply::text("via chat"),
        Reply::text("via responses"),
    ])
    .await
    .unwrap();
    server.enable_responses_api(true);
    let c = client(&server.base_url(), ApiMode::Auto);
    assert_eq!(collect(&c, request("gpt-4.1")).await.text, "via chat");
    assert!(!c.falls_back_to_chat("gpt-4.1"));
    assert_eq!(collect(&c, request("gpt-4.1")).await.text, "via responses");
    assert_eq!(
        paths(&server),
        ["/v1/responses", "/v1/chat/completions", "/v1/responses"]
    );
}

#[tokio::test]
async fn auth_rate_limit_server_and_context_errors_never_fall_back() {
    let server = MockLlmServer::with_script(vec![
        Reply::fault(Fault::unauthorized()),
        Reply::fault(Fault::rate_limited(2)),
        Reply::fault(Fault::server_error()),
        Reply::fault(Fault::ContextLengthExceeded),
    ])
    .await
    .unwrap();
    server.enable_responses_api(true);
    let c = client(&server.base_url(), ApiMode::Auto);
    let statuses = [
        (OutcomeStatus::Auth, None),
        (OutcomeStatus::Failed, Some(FailureKind::RateLimited)),
        (OutcomeStatus::Failed, Some(FailureKind::Server)),
        (OutcomeStatus::Failed, Some(FailureKind::ContextOverflow)),
    ];
    for want in statuses {
        let got = collect(&c, request("gpt-5")).await;
        assert_eq!((got.outcome().status, got.outcome().kind), want);
    }
    assert!(
        paths(&server).iter().all(|p| p == "/v1/responses"),
        "{:?}",
        paths(&server)
    );
    assert!(!c.falls_back_to_chat("gpt-5"));
}

#[tokio::test]
async fn forced_responses_mode_never_falls_back() {
    let server = MockLlmServer::with_script(vec![Reply::text("unused")])
        .await
        .unwrap();
    let got = collect(
        &client(&server.base_url(), ApiMode::Responses),
        request("my-local-model"),
    )
    .await;
    let o = got.outcome();
    assert_eq!(
        (o.status, o.kind, o.http_status),
        (
            OutcomeStatus::Failed,
            Some(FailureKind::BadRequest),
            Some(404)
        )
    );
    assert_eq!(paths(&server), ["/v1/responses"]);
}

#[tokio::test]
async fn forced_chat_mode_skips_responses_for_openai_models() {
    let server = MockLlmServer::with_script(vec![Reply::text("chat")])
        .await
        .unwrap();
    server.enable_responses_api(true);
    assert_eq!(
        collect(&client(&server.base_url(), ApiMode::Chat), request("gpt-5"))
            .await
            .text,
        "chat"
    );
    assert_eq!(paths(&server), ["/v1/chat/completions"]);
}

#[tokio::test]
async fn responses_stream_faults() {
    let server = MockLlmServer::with_script(vec![
        Reply::text("partial").then_fault(Fault::DropMidStream),
        Reply::text("bad").then_fault(Fault::MalformedChunk),
    ])
    .await
    .unwrap();
    server.enable_responses_api(true);
    let c = client(&server.base_url(), ApiMode::Responses);
    let got = collect(&c, request("gpt-5")).await;
    assert_eq!(got.outcome().status, OutcomeStatus::Timeout);
    assert_eq!(got.text, "partial");
    assert_eq!(
        collect(&c, request("gpt-5")).await.outcome().status,
        OutcomeStatus::Malformed
    );
}
