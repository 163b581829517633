#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use serde_json::json;

fn parser(cache: Arc<ReasoningCache<Cached>>) -> AnthropicParser {
    AnthropicParser::new(
        "r1",
        Redactor::new(["sk-ant-secret-123"]),
        cache,
        json!({"thinking": {"type": "enabled", "budget_tokens": 2048}}),
    )
}

fn feed_all(
    p: &mut AnthropicParser,
    events: &[Value],
) -> (Vec<LlmChunk>, Result<Flow, LlmOutcome>) {
    let mut out = VecDeque::new();
    let mut last = Ok(Flow::Continue);
    for e in events {
        last = p.feed("", &e.to_string(), &mut out);
        if !matches!(last, Ok(Flow::Continue)) {
            break;
        }
    }
    (out.into_iter().collect(), last)
}

#[test]
fn thinking_text_and_split_tool_input() {
    let cache = Arc::new(ReasoningCache::default());
    let mut p = parser(cache.clone());
    let (chunks, flow) = feed_all(
        &mut p,
        &[
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "hm"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "SIG"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hi"}}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"pa"}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "th\": \".\"}"}}),
            json!({"type": "ping"}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 42}}),
            json!({"type": "message_stop"}),
        ],
    );
    assert_eq!(flow.unwrap(), Flow::Done);
    assert_eq!(
        chunks,
        vec![
            LlmChunk::Reasoning("hm".into()),
            LlmChunk::Text("Hi".into())
        ]
    );
    let mut out = VecDeque::new();
    assert_eq!(p.finish(&mut out), LlmOutcome::completed());
    let out: Vec<LlmChunk> = out.into_iter().collect();
    assert_eq!(
        out[0],
        LlmChunk::ToolCall(ToolCall {
            id: "toolu_1".into(),
            name: "ls".into(),
            arguments: "{\"path\": \".\"}".into()
        })
    );
    assert_eq!(
        out[1],
        LlmChunk::Usage(TokenUsage {
            input_tokens: 1110,
            output_tokens: 42,
            cached_input_tokens: 1000,
            reasoning_tokens: 0,
            cache_write_tokens: 100
        })
    );
    let key = anchor("hm", "Hi", [("ls", "{\"path\": \".\"}")]);
    let cached = cache.get(key).unwrap();
    assert_eq!(
        cached.blocks,
        vec![
            Block::Thinking {
                text: "hm".into(),
                signature: "SIG".into()
            },
            Block::Text("Hi".into()),
            Block::ToolUse(0)
        ]
    );
    assert_eq!(cached.thinking["thinking"]["budget_tokens"], 2048);
}

#[test]
fn stop_reasons_map_to_outcomes() {
    let cases = [
        ("end_turn", OutcomeStatus::Completed, None),
        ("max_tokens", OutcomeStatus::Completed, None),
        ("pause_turn", OutcomeStatus::Completed, None),
        (
            "refusal",
            OutcomeStatus::Failed,
            Some(FailureKind::BadRequest),
        ),
        (
            "model_context_window_exceeded",
            OutcomeStatus::Failed,
            Some(FailureKind::ContextOverflow),
        ),
    ];
    for (reason, status, kind) in cases {
        let mut p = parser(Arc::default());
        let (_, flow) = feed_all(
            &mut p,
            &[json!({"type": "message_delta", "delta": {"stop_reason": reason}})],
        );
        assert_eq!(flow.unwrap(), Flow::Continue);
        assert!(p.is_complete(), "{reason}");
        let o = p.finish(&mut VecDeque::new());
        assert_eq!((o.status, o.kind), (status, kind), "{reason}");
    }
}

#[test]
fn error_events_are_classified_and_scrubbed() {
    let cases = [
        (
            "overloaded_error",
            OutcomeStatus::Failed,
            Some(FailureKind::Server),
        ),
        (
            "api_error",
            OutcomeStatus::Failed,
            Some(FailureKind::Server),
        ),
        (
            "rate_limit_error",
            OutcomeStatus::Failed,
            Some(FailureKind::RateLimited),
        ),
        (
            "invalid_request_error",
            OutcomeStatus::Failed,
            Some(FailureKind::BadRequest),
        ),
        ("authentication_error", OutcomeStatus::Auth, None),
    ];
    for (kind, status, fkind) in cases {
        let mut p = parser(Arc::default());
        let (_, r) = feed_all(
            &mut p,
            &[
                json!({"type": "error", "error": {"type": kind, "message": "bad key sk-ant-secret-123"}}),
            ],
        );
        let o = r.unwrap_err();
        assert_eq!((o.status, o.kind), (status, fkind), "{kind}");
        assert!(!o.message.unwrap().contains("secret"), "{kind}");
    }
    let mut p = parser(Arc::default());
    let (_, r) = feed_all(&mut p, &[json!("not an object")]);
    assert!(r.is_ok(), "unknown events are ignored");
    let mut out = VecDeque::new();
    assert_eq!(
        p.feed("", "{broken", &mut out).unwrap_err().status,
        OutcomeStatus::Malformed
    );
    assert!(!p.is_complete());
}

#[test]
fn a_non_streamed_message_is_understood() {
    let mut p = parser(Arc::default());
    let (chunks, flow) = feed_all(
        &mut p,
        &[
            json!({"type": "message", "role": "assistant", "stop_reason": "tool_use",
                 "content": [{"type": "text", "text": "hi"},
                             {"type": "tool_use", "id": "toolu_2", "name": "ls", "input": {"a": 1}}],
                 "usage": {"input_tokens": 3, "output_tokens": 4}}),
        ],
    );
    assert_eq!(flow.unwrap(), Flow::Done);
    assert_eq!(chunks, vec![LlmChunk::Text("hi".into())]);
    let mut out = VecDeque::new();
    p.finish(&mut out);
    match &out[0] {
        LlmChunk::ToolCall(c) => assert_eq!(c.arguments, r#"{"a":1}"#),
        other => panic!("{other:?}"),
    }
}

#[test]
fn consecutive_thinking_blocks_are_separated() {
    let mut p = parser(Arc::default());
    let start = |i: u64| json!({"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": "", "signature": ""}});
    let delta = |i: u64, t: &str| json!({"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": t}});
    let (chunks, _) = feed_all(&mut p, &[start(0), delta(0, "a"), start(1), delta(1, "b")]);
    let text: String = chunks
        .iter()
        .map(|c| match c {
            LlmChunk::Reasoning(t) => t.clone(),
            _ => String::new(),
        })
        .collect();
    assert_eq!(text, "a\n\nb");
}
