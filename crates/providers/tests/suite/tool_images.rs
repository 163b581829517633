//! A tool result that carries an image (`read_image`) reaches the model in the next request on
//! every protocol: inside the tool result (Anthropic, Responses) or as a user message right
//! after the run of tool results (Chat Completions, whose tool messages are text only).

use crate::common;

use std::time::Duration;

use cairn_engine::testing::FnTool;
use cairn_engine::{RetryPolicy, ToolOutput, ToolRegistry};
use cairn_protocol::{ContentPart, Event, ToolMeta, TurnStatus};
use cairn_providers::build_client;
use cairn_testkit::Reply;
use common::*;
use serde_json::{json, Value};

const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn tools() -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "read_image",
        ToolMeta::read_only("media"),
        |_, _| async {
            Ok(ToolOutput::with_images(
                "shot.png (1×1 px)",
                vec![ContentPart::Image {
                    mime_type: "image/png".into(),
                    data: PNG_B64.into(),
                }],
            ))
        },
    ));
    reg.register(FnTool::new(
        "list_files",
        ToolMeta::read_only("file"),
        |_, _| async { Ok(ToolOutput::text("shot.png")) },
    ));
    reg
}

fn script() -> Vec<Reply> {
    vec![
        Reply::text("Looking.")
            .with_tool_call("call_img", "read_image", json!({"path": "shot.png"}))
            .with_tool_call("call_ls", "list_files", json!({})),
        Reply::text("A single pixel."),
    ]
}

fn check(protocol: Protocol, body: &Value) {
    let url = format!("data:image/png;base64,{PNG_B64}");
    match protocol {
        Protocol::Chat => {
            let msgs = body["messages"].as_array().unwrap();
            let tools: Vec<usize> = msgs
                .iter()
                .enumerate()
                .filter(|(_, m)| m["role"] == "tool")
                .map(|(i, _)| i)
                .collect();
            assert_eq!(tools.len(), 2, "{body}");
            assert_eq!(msgs[tools[0]]["content"], "shot.png (1×1 px)");
            // The images follow the whole run of tool messages, not in between.
            let after = &msgs[tools[1] + 1];
            assert_eq!(after["role"], "user", "{body}");
            assert_eq!(
                after["content"][0]["text"],
                "[images returned by the read_image call call_img]"
            );
            assert_eq!(after["content"][1]["image_url"]["url"], url.as_str());
        }
        Protocol::Responses => {
            let input = body["input"].as_array().unwrap();
            let out = input
                .iter()
                .find(|i| i["type"] == "function_call_output" && i["call_id"] == "call_img")
                .unwrap();
            assert_eq!(
                out["output"],
                json!([{"type": "input_text", "text": "shot.png (1×1 px)"},
                       {"type": "input_image", "image_url": url}])
            );
            let plain = input
                .iter()
                .find(|i| i["type"] == "function_call_output" && i["call_id"] == "call_ls")
                .unwrap();
            assert_eq!(plain["output"], "shot.png");
        }
        Protocol::Anthropic => {
            let msgs = body["messages"].as_array().unwrap();
            let results = msgs[2]["content"].as_array().unwrap();
            assert_eq!(results[0]["tool_use_id"], "call_img");
            assert_eq!(
                results[0]["content"],
                json!([{"type": "text", "text": "shot.png (1×1 px)"},
                       {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}}])
            );
            assert_eq!(results[1]["content"], "shot.png");
        }
    }
}

async fn image_turn(protocol: Protocol) {
    let server = mock(script()).await;
    let s = spec(protocol, &server.base_url());
    let model = s.model.clone();
    let llm = build_client(&s).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = session(llm, &model, tools(), RetryPolicy::default(), dir.path());
    let events = run_turn(&session, "what is in shot.png?").await;
    match events.last() {
        Some(Event::TurnEnd(t)) => assert_eq!(t.status, TurnStatus::Completed, "{events:#?}"),
        other => panic!("{protocol:?}: last event {other:?}"),
    }
    let reqs = server.wait_for_requests(2, Duration::from_secs(5)).await;
    assert_eq!(reqs.len(), 2, "{protocol:?}");
    check(protocol, &reqs[1].body);
}

#[tokio::test]
async fn chat_sends_tool_images_as_a_following_user_message() {
    image_turn(Protocol::Chat).await;
}

#[tokio::test]
async fn responses_sends_tool_images_in_the_call_output() {
    image_turn(Protocol::Responses).await;
}

#[tokio::test]
async fn anthropic_sends_tool_images_inside_the_tool_result() {
    image_turn(Protocol::Anthropic).await;
}
