//! Compaction: thresholds, events, what survives.

use crate::common;

use std::sync::Arc;

use cairn_engine::compaction::estimate_tokens;
use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{CompactionConfig, FailureKind, LlmOutcome, OutcomeStatus, Session};
use cairn_protocol::{
    Event, Message, Mode, TodoItem, TodoStatus, ToolCall, ToolResult, ToolStatus, TurnStatus,
};
use common::*;

fn long_history() -> Vec<Message> {
    let mut h = vec![Message::user("GOAL-7: port the parser to Rust")];
    h.push(Message::Assistant {
        content: vec![],
        tool_calls: vec![ToolCall {
            id: "p1".into(),
            name: "propose_plan".into(),
            arguments: serde_json::json!({"plan": "PLAN-STEP-A then PLAN-STEP-B"}).to_string(),
        }],
        usage: None,
    });
    h.push(Message::Tool(ToolResult {
        call_id: "p1".into(),
        name: "propose_plan".into(),
        content: "accepted".into(),
        status: ToolStatus::Ok,
        images: Vec::new(),
    }));
    for i in 0..12 {
        h.push(Message::Assistant {
            content: vec![],
            tool_calls: vec![ToolCall {
                id: format!("r{i}"),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"f{i}.rs\"}}"),
            }],
            usage: None,
        });
        h.push(Message::Tool(ToolResult {
            call_id: format!("r{i}"),
            name: "read_file".into(),
            content: format!("FILE-{i} ") + &"x".repeat(1600),
            status: ToolStatus::Ok,
            images: Vec::new(),
        }));
        h.push(Message::user(
            format!("instruction {i}: ") + &"keep going ".repeat(40),
        ));
        h.push(Message::assistant_text("y".repeat(600)));
    }
    h
}

fn small_window(dir: &TempDir) -> cairn_engine::EngineConfig {
    let mut cfg = config(dir, Mode::Interactive);
    cfg.compaction = CompactionConfig {
        context_window: 6_000,
        keep_recent_tool_results: 2,
        ..Default::default()
    };
    cfg
}

#[tokio::test]
async fn a_long_session_crosses_both_thresholds_and_keeps_what_matters() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::text("SUMMARY-TEXT of the work"),
        FakeReply::text("done"),
    ]);
    let cfg = small_window(&dir);
    let hard = cfg.compaction.hard_tokens();
    let before_tokens = estimate_tokens(&long_history()).0;
    assert!(
        before_tokens > hard,
        "the fixture is over the hard threshold"
    );
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .messages(long_history())
        .todos(vec![TodoItem {
            content: "TODO-write-tests".into(),
            status: TodoStatus::Pending,
        }])
        .build();
    let ev = collect(s.run("next step please")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let methods: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Compacted(c) => Some(c.method.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(methods, vec!["trimmed", "summarized"]);
    let triggers: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Compacting(c) => Some(c.trigger.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(triggers, vec!["threshold", "threshold"]);
    let phases: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Compacting(c) => c.phase.as_deref(),
            _ => None,
        })
        .collect();
    assert_eq!(phases, vec!["trim", "summary"]);
    // The summary request is logged like any other, marked as compaction's (issue 44).
    let logged: Vec<Option<bool>> = ev
        .iter()
        .filter_map(|e| match e {
            Event::LlmRequest(r) => Some(r.compact),
            _ => None,
        })
        .collect();
    assert_eq!(logged, vec![Some(true), None], "{:?}", types(&ev));
    let reqs = llm.requests();
    assert!(
        reqs[0].tools.is_empty(),
        "the summary request offers no tools"
    );
    let next = &reqs[1].messages;
    let (tokens, _) = estimate_tokens(next);
    assert!(tokens < hard, "{tokens} < {hard}");
    let all: String = next.iter().map(|m| m.text()).collect::<Vec<_>>().join("\n");
    for must in [
        "GOAL-7",
        "PLAN-STEP-A",
        "TODO-write-tests",
        "SUMMARY-TEXT",
        "next step please",
    ] {
        assert!(all.contains(must), "{must} was lost");
    }
    assert!(matches!(next[0], Message::System { .. }));
    // History stays valid: every tool result follows its call.
    for (i, m) in next.iter().enumerate() {
        if let Message::Tool(r) = m {
            let has_call = next[..i].iter().any(|p| {
                matches!(p, Message::Assistant { tool_calls, .. } if tool_calls.iter().any(|c| c.id == r.call_id))
            });
            assert!(has_call, "orphan tool result {}", r.call_id);
        }
    }
}

#[tokio::test]
async fn a_failed_summary_still_ends_its_compaction_and_the_turn_goes_on() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::outcome(cairn_engine::LlmOutcome::new(
            cairn_engine::OutcomeStatus::Failed,
            Some("HTTP 400".into()),
        )),
        FakeReply::text("done"),
    ]);
    let s = Session::builder(small_window(&dir), Arc::new(llm.clone()))
        .messages(long_history())
        .build();
    let ev = collect(s.run("next step please")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let pairs: Vec<&str> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Compacting(_) => Some("compacting"),
            Event::Compacted(c) => Some(if c.method == "none" {
                "none"
            } else {
                "compacted"
            }),
            _ => None,
        })
        .collect();
    // Every `compacting` is answered by a `compacted` (the hard pass: method `none`).
    assert_eq!(pairs, vec!["compacting", "compacted", "compacting", "none"]);
}

#[tokio::test]
async fn the_summary_request_counts_in_the_turns_usage() {
    use cairn_engine::LlmChunk;
    use cairn_protocol::TokenUsage;
    let dir = TempDir::new();
    let usage = |input: u64| {
        LlmChunk::Usage(TokenUsage {
            input_tokens: input,
            output_tokens: 10,
            ..Default::default()
        })
    };
    let llm = FakeLlm::new(vec![
        FakeReply::Chunks(vec![LlmChunk::Text("SUMMARY".into()), usage(5_000)]),
        FakeReply::Chunks(vec![LlmChunk::Text("done".into()), usage(700)]),
    ]);
    let s = Session::builder(small_window(&dir), Arc::new(llm.clone()))
        .messages(long_history())
        .build();
    let ev = collect(s.run("next step please")).await;
    let end = turn_end(&ev);
    assert_eq!(end.status, TurnStatus::Completed);
    let total = end.usage.expect("usage");
    assert_eq!(
        (total.input_tokens, total.output_tokens),
        (5_700, 20),
        "the summary request and the answer"
    );
}

#[tokio::test]
async fn soft_threshold_elides_old_tool_results_without_an_llm_call() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::text("done")]);
    let mut cfg = small_window(&dir);
    cfg.compaction.context_window = 12_000; // soft 7200, hard 9600
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .messages(long_history())
        .build();
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 1, "no summary call");
    let elided = reqs[0]
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Tool(r) if r.content.starts_with("[elided")))
        .count();
    assert!(elided >= 9, "{elided}");
    // The saved copy is referenced and complete.
    let saved = dir.0.join(".state/tool-results/r0.txt");
    assert!(std::fs::read_to_string(saved)
        .unwrap()
        .starts_with("FILE-0 "));
}

#[tokio::test]
async fn a_provider_overflow_forces_compaction_and_one_retry() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::outcome(
            LlmOutcome::new(OutcomeStatus::Failed, Some("maximum context length".into()))
                .with_kind(FailureKind::ContextOverflow),
        ),
        FakeReply::text("SUMMARY"),
        FakeReply::text("answered"),
    ]);
    let mut cfg = small_window(&dir);
    cfg.compaction.context_window = 1_000_000; // the estimate thinks all is fine
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .messages(long_history())
        .build();
    let ev = collect(s.run("go")).await;
    assert_eq!(
        turn_end(&ev).status,
        TurnStatus::Completed,
        "{:?}",
        types(&ev)
    );
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::Compacting(c) if c.trigger == "overflow")));
    assert_eq!(llm.requests().len(), 3);
}

/// Issue 44's breaker: a conversation compaction cannot bring under its budget (here the
/// current message alone is over it) is compacted at most twice in a row; then the turn ends
/// with `compaction_stalled` and a suggestion instead of compacting on every step.
#[tokio::test]
async fn a_history_compaction_cannot_shrink_trips_the_breaker_after_two_compactions() {
    let dir = TempDir::new();
    let cfg = small_window(&dir);
    let hard = cfg.compaction.hard_tokens();
    let huge = "pasted log line that will not go away ".repeat(1_000);
    assert!(estimate_tokens(&[Message::user(huge.clone())]).0 > hard);
    // The model keeps calling a tool, so the turn would go on iterating.
    let script: Vec<FakeReply> = (0..6)
        .map(|i| FakeReply::tool(&format!("c{i}"), "echo", serde_json::json!({})))
        .collect();
    let llm = FakeLlm::new(script);
    let mut registry = cairn_engine::ToolRegistry::new();
    registry.register(echo_tool("echo"));
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(registry)
        .build();
    let ev = collect(s.run(&huge)).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Error);
    let stalled: Vec<&cairn_protocol::ErrorEvent> = ev
        .iter()
        .filter_map(|e| match e {
            Event::Error(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(stalled.len(), 1, "{stalled:?}");
    assert_eq!(stalled[0].error_type, "compaction_stalled");
    assert!(
        stalled[0].error.contains("new session"),
        "{}",
        stalled[0].error
    );
    let passes = ev
        .iter()
        .filter(|e| matches!(e, Event::Compacting(c) if c.phase.as_deref() == Some("trim")))
        .count();
    assert_eq!(passes, 2, "{:?}", types(&ev));
    // One model request between the two compactions, none after the breaker tripped.
    assert_eq!(llm.requests().len(), 1);
}

/// Issue 44: the summary uses the compaction settings (its own model, low effort by default,
/// the session's language), and two reads of one file are de-duplicated before it.
#[tokio::test]
async fn the_summary_uses_the_compaction_model_at_low_effort_in_the_sessions_language() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::text("摘要：移植解析器"),
        FakeReply::text("done"),
    ]);
    let mut cfg = small_window(&dir);
    cfg.compaction.model = Some("summary-model".into());
    cfg.compaction.lang = cairn_engine::prompt::Lang::ZhTw;
    let session_model = cfg.model.clone();
    let read = |id: &str| {
        vec![
            Message::Assistant {
                content: vec![],
                tool_calls: vec![ToolCall {
                    id: id.into(),
                    name: "read_file".into(),
                    arguments: serde_json::json!({"path": "same.rs"}).to_string(),
                }],
                usage: None,
            },
            Message::Tool(ToolResult {
                call_id: id.into(),
                name: "read_file".into(),
                content: "SAME-FILE-CONTENT ".to_string() + &"z".repeat(1_600),
                status: ToolStatus::Ok,
                images: Vec::new(),
            }),
        ]
    };
    let mut history = long_history();
    // Two reads of one file early on (both old enough to be summarised).
    let tail = history.split_off(1);
    history.extend(read("same-1"));
    history.extend(read("same-2"));
    history.extend(tail);
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .messages(history)
        .build();
    let ev = collect(s.run("next step please")).await;
    assert_eq!(
        turn_end(&ev).status,
        TurnStatus::Completed,
        "{:?}",
        types(&ev)
    );
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    let summary = &reqs[0];
    assert_eq!(summary.model, "summary-model");
    assert_eq!(
        summary.reasoning_effort,
        Some(cairn_engine::ReasoningEffort::Low)
    );
    assert!(
        summary.messages[0].text().contains("Traditional Chinese"),
        "{}",
        summary.messages[0].text()
    );
    assert_eq!(
        reqs[1].model, session_model,
        "the turn keeps the session's model"
    );
    // The summary request saw the file once: the earlier read points to the later one.
    let text: String = summary
        .messages
        .iter()
        .map(|m| m.text())
        .collect::<Vec<_>>()
        .join("\n");
    // (The later copy itself may be elided and cut to fit the summary's input.)
    assert!(text.matches("SAME-FILE-CONTENT").count() <= 1, "{text}");
    assert_eq!(
        text.matches(cairn_engine::compaction::SUPERSEDED_MARKER)
            .count(),
        1
    );
    // The summary request is logged with its own model.
    assert!(ev.iter().any(|e| matches!(e,
        Event::LlmRequest(r) if r.compact == Some(true) && r.model == "summary-model")));
    // The session's compaction state, on the event and from the session.
    let last = ev
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Compacted(c) => c.state.clone(),
            _ => None,
        })
        .expect("a compacted event with the state");
    assert_eq!((last.compactions, last.summaries), (2, 1));
    assert!(last.trimmed >= 1);
    assert_eq!(last.summary_model, "summary-model");
    assert_eq!(last.summary_effort.as_deref(), Some("low"));
    assert!(last.tokens_after < last.tokens_before);
    assert_eq!(last.stalled, 0);
    assert_eq!(s.compaction_state(), last);
}

/// A model that rejects the reasoning effort (a local server) gets the summary request once
/// more without it.
#[tokio::test]
async fn a_summary_request_rejected_for_its_effort_is_sent_again_without_it() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::outcome(
            LlmOutcome::new(
                OutcomeStatus::Failed,
                Some("model does not support thinking".into()),
            )
            .with_kind(FailureKind::BadRequest),
        ),
        FakeReply::text("SUMMARY"),
        FakeReply::text("done"),
    ]);
    let s = Session::builder(small_window(&dir), Arc::new(llm.clone()))
        .messages(long_history())
        .build();
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let efforts: Vec<_> = llm.requests().iter().map(|r| r.reasoning_effort).collect();
    assert_eq!(
        efforts,
        vec![Some(cairn_engine::ReasoningEffort::Low), None, None]
    );
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::Compacted(c) if c.method == "summarized")));
}
