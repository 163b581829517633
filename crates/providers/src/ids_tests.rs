#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_protocol::{ToolCall, ToolResult, ToolStatus};

fn assistant(ids: &[&str]) -> Message {
    Message::Assistant {
        content: Vec::new(),
        tool_calls: ids
            .iter()
            .map(|id| ToolCall {
                id: id.to_string(),
                name: "ls".into(),
                arguments: "{}".into(),
            })
            .collect(),
        usage: None,
    }
}

fn result(id: &str) -> Message {
    Message::Tool(ToolResult {
        call_id: id.into(),
        name: "ls".into(),
        content: "ok".into(),
        status: ToolStatus::Ok,
        images: Vec::new(),
    })
}

fn ids_of(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .flat_map(|m| match m {
            Message::Assistant { tool_calls, .. } => {
                tool_calls.iter().map(|c| c.id.clone()).collect()
            }
            Message::Tool(r) => vec![r.call_id.clone()],
            _ => Vec::new(),
        })
        .collect()
}

#[test]
fn new_ids_pass_repeated_and_missing_ones_are_rewritten() {
    let ids = ToolCallIds::new();
    assert_eq!(ids.allocate("call_abc"), "call_abc");
    let again = ids.allocate("call_abc");
    assert_ne!(again, "call_abc");
    assert!(again.starts_with("call_abc_"));
    let empty1 = ids.allocate("");
    let empty2 = ids.allocate("");
    assert_ne!(empty1, empty2);
    assert!(!empty1.is_empty());
    let weird = ids.allocate("a b/c");
    assert_eq!(weird, "a b/c", "a new id is kept verbatim");
    let weird2 = ids.allocate("a b/c");
    assert!(weird2.starts_with("abc_"), "{weird2}");
}

#[test]
fn restored_history_ids_count_as_used() {
    let ids = ToolCallIds::new();
    ids.observe(&[assistant(&["call_0"]), result("call_0")]);
    assert_ne!(ids.allocate("call_0"), "call_0");
}

#[test]
fn provider_ids_come_back_only_when_unambiguous() {
    let ids = ToolCallIds::new();
    let first = ids.allocate("call_0");
    let second = ids.allocate("call_0");
    assert_eq!(first, "call_0");
    // Both calls in the request: mapping the second back would collide, so both keep ours.
    let both = vec![
        assistant(&[&first]),
        result(&first),
        assistant(&[&second]),
        result(&second),
    ];
    assert_eq!(ids_of(&ids.to_provider(&both)), ids_of(&both));
    // After compaction dropped the first call, the provider gets its own id back.
    let compacted = vec![
        Message::user("summary"),
        assistant(&[&second]),
        result(&second),
    ];
    assert_eq!(
        ids_of(&ids.to_provider(&compacted)),
        vec!["call_0", "call_0"]
    );
}

#[tokio::test]
async fn the_decorator_rewrites_a_server_that_repeats_call_0() {
    let fake = FakeLlm::new(vec![
        FakeReply::tools(&[
            ("call_0", "ls", serde_json::json!({})),
            ("call_0", "ls", serde_json::json!({"a": 1})),
        ]),
        FakeReply::tools(&[("call_0", "ls", serde_json::json!({}))]),
    ]);
    let client = UniqueToolCallIds::new(Arc::new(fake.clone()), ToolCallIds::new());
    let req = |messages: Vec<Message>| LlmRequest {
        model: "m".into(),
        messages,
        tools: Vec::new(),
        reasoning_effort: None,
        req_id: "r".into(),
    };
    let calls = |chunks: Vec<LlmChunk>| -> Vec<String> {
        chunks
            .into_iter()
            .filter_map(|c| match c {
                LlmChunk::ToolCall(c) => Some(c.id),
                _ => None,
            })
            .collect()
    };
    let first: Vec<LlmChunk> = client
        .stream(req(vec![Message::user("go")]), CancellationToken::new())
        .collect()
        .await;
    let first = calls(first);
    assert_eq!(first.len(), 2);
    assert_ne!(first[0], first[1]);
    let history = vec![
        Message::user("go"),
        assistant(&[&first[0], &first[1]]),
        result(&first[0]),
        result(&first[1]),
    ];
    let second: Vec<LlmChunk> = client
        .stream(req(history.clone()), CancellationToken::new())
        .collect()
        .await;
    let second = calls(second);
    assert_eq!(second.len(), 1);
    assert!(!first.contains(&second[0]), "{first:?} {second:?}");
    // What the server saw: consistent pairs, never two different calls under one id.
    let sent = &fake.requests()[1].messages;
    let sent_ids = ids_of(sent);
    assert_eq!(sent_ids[0], sent_ids[2]);
    assert_eq!(sent_ids[1], sent_ids[3]);
    assert_ne!(sent_ids[0], sent_ids[1]);
}
