#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::catalog::model_info;
use crate::reasoning_cache::anchor;
use cairn_protocol::{ToolCall, ToolResult, ToolSchema};

fn req(messages: Vec<Message>, tools: Vec<ToolSchema>) -> LlmRequest {
    LlmRequest {
        model: "claude-sonnet-4-5".into(),
        messages,
        tools,
        reasoning_effort: None,
        req_id: "r".into(),
    }
}

fn call(id: &str, args: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "read_file".into(),
        arguments: args.into(),
    }
}

fn assistant(reasoning: &str, text: &str, calls: Vec<ToolCall>) -> Message {
    let mut content = Vec::new();
    if !reasoning.is_empty() {
        content.push(ContentPart::Reasoning {
            text: reasoning.into(),
        });
    }
    if !text.is_empty() {
        content.push(ContentPart::Text { text: text.into() });
    }
    Message::Assistant {
        content,
        tool_calls: calls,
        usage: None,
    }
}

fn result(id: &str, status: ToolStatus) -> Message {
    Message::Tool(ToolResult {
        call_id: id.into(),
        name: "read_file".into(),
        content: "file text".into(),
        status,
        images: Vec::new(),
    })
}

fn build(r: &LlmRequest, level: Option<ThinkingLevel>, cache: &ReasoningCache<Cached>) -> Built {
    request_body(r, &model_info(&r.model), level, true, cache)
}

#[test]
fn system_tools_and_prefix_are_cached_and_turns_alternate() {
    let tool = ToolSchema {
        name: "read_file".into(),
        description: "reads".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    };
    let r = req(
        vec![
            Message::system("be brief"),
            Message::user("one"),
            assistant("", "ok", vec![call("toolu_1", r#"{"path":"a"}"#)]),
            result("toolu_1", ToolStatus::Error),
            Message::user("steer"),
        ],
        vec![
            tool.clone(),
            ToolSchema {
                name: "ls".into(),
                ..tool
            },
        ],
    );
    let b = build(&r, None, &ReasoningCache::default()).body;
    assert_eq!(b["max_tokens"], 64_000);
    assert_eq!(b["stream"], true);
    assert_eq!(b["system"][0]["text"], "be brief");
    assert_eq!(
        b["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert!(b["tools"][0].get("cache_control").is_none());
    assert_eq!(b["tools"][1]["cache_control"]["type"], "ephemeral");
    assert_eq!(b["tools"][0]["input_schema"]["type"], "object");
    let msgs = b["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(msgs[1]["content"][1]["input"], json!({"path": "a"}));
    // Tool result first, then the steering text; the last block carries the breakpoint.
    let last = msgs[2]["content"].as_array().unwrap();
    assert_eq!(last[0]["type"], "tool_result");
    assert_eq!(last[0]["is_error"], true);
    assert_eq!(last[1]["text"], "steer");
    assert_eq!(last[1]["cache_control"]["type"], "ephemeral");
    assert_eq!(msgs[0]["content"][0]["cache_control"]["type"], "ephemeral");
    let breakpoints = b.to_string().matches("ephemeral").count();
    assert!(breakpoints <= 4, "{breakpoints}");
    assert!(b.get("thinking").is_none());
}

#[test]
fn images_and_later_system_messages() {
    let r = req(
        vec![
            Message::User {
                content: vec![
                    ContentPart::Text { text: "see".into() },
                    ContentPart::Image {
                        mime_type: "image/png".into(),
                        data: "AAAA".into(),
                    },
                ],
            },
            Message::system("a notice"),
        ],
        Vec::new(),
    );
    let b = build(&r, None, &ReasoningCache::default()).body;
    assert!(b.get("system").is_none());
    let content = b["messages"][0]["content"].as_array().unwrap();
    assert_eq!(
        content[1]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": "AAAA"})
    );
    assert_eq!(content[2]["text"], "[system] a notice");
}

#[test]
fn thinking_blocks_are_replayed_with_signatures_in_their_order() {
    let cache = ReasoningCache::default();
    let calls = vec![call("toolu_9", "{}")];
    let key = anchor("I should look", "Looking.", [("read_file", "{}")]);
    cache.put(
        key,
        Cached {
            blocks: vec![
                Block::Thinking {
                    text: "I should look".into(),
                    signature: "sig-abc".into(),
                },
                Block::Redacted("opaque".into()),
                Block::Text("Looking.".into()),
                Block::ToolUse(0),
            ],
            thinking: json!({"thinking": {"type": "enabled", "budget_tokens": 8192}}),
        },
    );
    let r = req(
        vec![
            Message::user("go"),
            assistant("I should look", "Looking.", calls),
            result("toolu_9", ToolStatus::Ok),
        ],
        Vec::new(),
    );
    // A different level now: the open tool loop keeps the configuration it started with.
    let built = build(&r, Some(ThinkingLevel::High), &cache);
    let b = built.body;
    let blocks = b["messages"][1]["content"].as_array().unwrap();
    assert_eq!(
        blocks[0],
        json!({"type": "thinking", "thinking": "I should look", "signature": "sig-abc"})
    );
    assert_eq!(
        blocks[1],
        json!({"type": "redacted_thinking", "data": "opaque"})
    );
    assert_eq!(blocks[2]["text"], "Looking.");
    assert_eq!(blocks[3]["id"], "toolu_9");
    assert_eq!(b["thinking"]["budget_tokens"], 8192);
    assert_eq!(built.thinking["thinking"]["budget_tokens"], 8192);
}

#[test]
fn an_unknown_tool_loop_turns_thinking_off_and_a_new_turn_uses_the_level() {
    let cache = ReasoningCache::default();
    let looping = req(
        vec![
            Message::user("go"),
            assistant("lost reasoning", "", vec![call("toolu_1", "{}")]),
            result("toolu_1", ToolStatus::Ok),
        ],
        Vec::new(),
    );
    let b = build(&looping, Some(ThinkingLevel::High), &cache).body;
    assert!(b.get("thinking").is_none(), "{b}");
    let blocks = b["messages"][1]["content"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "reasoning without a signature is not sent");
    let fresh = req(vec![Message::user("new question")], Vec::new());
    let built = build(&fresh, Some(ThinkingLevel::High), &cache);
    assert_eq!(
        built.body["thinking"],
        json!({"type": "enabled", "budget_tokens": 16384})
    );
    let mut adaptive = fresh.clone();
    adaptive.model = "claude-opus-4-6".into();
    let b = build(&adaptive, Some(ThinkingLevel::Medium), &cache).body;
    assert_eq!(b["thinking"], json!({"type": "adaptive"}));
    assert_eq!(b["output_config"], json!({"effort": "medium"}));
}

#[test]
fn broken_histories_are_repaired() {
    let r = req(
        vec![
            assistant("", "hello first", vec![call("toolu_a", "not json")]),
            // no result for toolu_a; a stray result for an unknown call
            result("toolu_zzz", ToolStatus::Ok),
            Message::user("next"),
        ],
        Vec::new(),
    );
    let b = build(&r, None, &ReasoningCache::default()).body;
    let msgs = b["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "user", "starts with a user turn");
    assert_eq!(
        msgs[1]["content"][1]["input"],
        json!({"_raw_arguments": "not json"})
    );
    let answer = msgs[2]["content"].as_array().unwrap();
    assert_eq!(answer[0]["type"], "tool_result");
    assert_eq!(answer[0]["tool_use_id"], "toolu_a");
    assert_eq!(answer[0]["is_error"], true);
    assert!(answer[1]["text"]
        .as_str()
        .unwrap()
        .starts_with("[tool result]"));
    assert_eq!(answer.last().unwrap()["text"], "next");
}
