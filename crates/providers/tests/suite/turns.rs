//! One scripted multi-tool turn through the real engine against each protocol (Chat
//! Completions, Responses, Anthropic Messages): reasoning round-trips, tool calls split over
//! many chunks, results paired with their calls.

use crate::common;

use std::time::Duration;

use cairn_engine::testing::FnTool;
use cairn_engine::{RetryPolicy, ToolOutput, ToolRegistry};
use cairn_protocol::{Event, ToolMeta, ToolStatus, TurnStatus};
use cairn_providers::build_client;
use cairn_testkit::Reply;
use common::*;
use serde_json::{json, Value};

fn tools() -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "read_file",
        ToolMeta::read_only("file"),
        |args, _| async move {
            Ok(ToolOutput::text(format!(
                "contents of {}",
                args["path"].as_str().unwrap_or("?")
            )))
        },
    ));
    reg.register(FnTool::new(
        "list_files",
        ToolMeta::read_only("file"),
        |_, _| async { Ok(ToolOutput::text("Cargo.toml\nsrc/")) },
    ));
    reg
}

fn script() -> Vec<Reply> {
    vec![
        Reply::text("Let me look at both.")
            .with_reasoning("I need the file and the listing.")
            .with_signature("sig-round-trip-1")
            .with_tool_call(
                "call_a",
                "read_file",
                json!({"path": "src/lib.rs", "why": "a fairly long argument so it splits"}),
            )
            .with_tool_call("call_b", "list_files", json!({"path": "."}))
            .with_usage_details(1200, 80, 1000, 30)
            .chunk_size(3),
        Reply::text("Both done.").with_usage(1400, 12),
    ]
}

/// What the second request carried back for the first reply.
fn check_round_trip(protocol: Protocol, body: &Value) {
    let args_a =
        json!({"path": "src/lib.rs", "why": "a fairly long argument so it splits"}).to_string();
    match protocol {
        Protocol::Chat => {
            let msgs = body["messages"].as_array().unwrap();
            let a = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
            assert_eq!(a["tool_calls"][0]["id"], "call_a");
            assert_eq!(a["tool_calls"][0]["function"]["arguments"], args_a.as_str());
            assert_eq!(a["tool_calls"][1]["id"], "call_b");
            assert_eq!(a["reasoning_content"], "I need the file and the listing.");
            let results: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "tool").collect();
            assert_eq!(results[0]["tool_call_id"], "call_a");
            assert_eq!(results[0]["content"], "contents of src/lib.rs");
            assert_eq!(results[1]["tool_call_id"], "call_b");
        }
        Protocol::Responses => {
            let input = body["input"].as_array().unwrap();
            let pos = |pred: &dyn Fn(&Value) -> bool| input.iter().position(pred).unwrap();
            let r = pos(&|i| i["type"] == "reasoning");
            assert_eq!(input[r]["encrypted_content"], "sig-round-trip-1");
            assert!(
                input[r].get("id").is_none(),
                "nothing is stored server-side to refer to"
            );
            assert_eq!(
                input[r]["summary"][0]["text"],
                "I need the file and the listing."
            );
            let fa = pos(&|i| i["type"] == "function_call" && i["call_id"] == "call_a");
            assert!(r < fa, "reasoning precedes its calls");
            assert_eq!(input[fa]["arguments"], args_a.as_str());
            let out = pos(&|i| i["type"] == "function_call_output" && i["call_id"] == "call_b");
            assert_eq!(input[out]["output"], "Cargo.toml\nsrc/");
            assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        }
        Protocol::Anthropic => {
            let msgs = body["messages"].as_array().unwrap();
            let a = &msgs[1]["content"];
            assert_eq!(
                a[0],
                json!({"type": "thinking", "thinking": "I need the file and the listing.", "signature": "sig-round-trip-1"})
            );
            assert_eq!(a[1]["text"], "Let me look at both.");
            assert_eq!(a[2]["id"], "call_a");
            assert_eq!(a[2]["input"]["why"], "a fairly long argument so it splits");
            assert_eq!(a[3]["id"], "call_b");
            let results = msgs[2]["content"].as_array().unwrap();
            assert_eq!(results[0]["tool_use_id"], "call_a");
            assert_eq!(results[1]["tool_use_id"], "call_b");
            assert_eq!(results[1]["content"], "Cargo.toml\nsrc/");
        }
    }
}

async fn multi_tool_turn(protocol: Protocol) {
    let server = mock(script()).await;
    let mut s = spec(protocol, &server.base_url());
    if protocol == Protocol::Chat {
        // DeepSeek's reasoning_content is the chat protocol's reasoning round trip.
        s = cairn_providers::ProviderSpec {
            provider: "deepseek".into(),
            model: "deepseek-reasoner".into(),
            ..s
        };
    }
    let model = s.model.clone();
    let llm = build_client(&s).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = session(llm, &model, tools(), RetryPolicy::default(), dir.path());
    let events = run_turn(&session, "read the file and list the folder").await;

    match events.last() {
        Some(Event::TurnEnd(t)) => {
            assert_eq!(t.status, TurnStatus::Completed, "{protocol:?}: {events:#?}")
        }
        other => panic!("{protocol:?}: last event {other:?}"),
    }
    let finished: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished(f) => Some((f.name.clone(), f.status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        vec![
            ("read_file".to_string(), ToolStatus::Ok),
            ("list_files".to_string(), ToolStatus::Ok)
        ],
        "{protocol:?}"
    );
    let messages: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::AssistantMessage(m) => Some(m.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(messages.len(), 2);
    assert_eq!(
        messages[0].reasoning, "I need the file and the listing.",
        "{protocol:?}"
    );
    assert_eq!(messages[0].text, "Let me look at both.");
    let u = messages[0].usage.unwrap();
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cached_input_tokens),
        (1200, 80, 1000),
        "{protocol:?}"
    );
    assert_eq!(messages[1].text, "Both done.");

    let reqs = server.wait_for_requests(2, Duration::from_secs(5)).await;
    assert_eq!(reqs.len(), 2, "{protocol:?}");
    match protocol {
        Protocol::Chat => assert!(reqs[0].is_chat()),
        Protocol::Responses => assert!(reqs[0].is_responses()),
        Protocol::Anthropic => {
            assert!(reqs[0].is_anthropic());
            assert_eq!(reqs[0].header("x-api-key"), Some(KEY));
            assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(reqs[0].header("authorization"), None);
        }
    }
    check_round_trip(protocol, &reqs[1].body);
}

#[tokio::test]
async fn chat_completions_multi_tool_turn() {
    multi_tool_turn(Protocol::Chat).await;
}

#[tokio::test]
async fn responses_multi_tool_turn() {
    multi_tool_turn(Protocol::Responses).await;
}

#[tokio::test]
async fn anthropic_multi_tool_turn() {
    multi_tool_turn(Protocol::Anthropic).await;
}
