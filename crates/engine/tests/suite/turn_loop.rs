//! The turn loop: event order, tool pairing, permissions, iteration cap, steering.

use crate::common;
mod layering;
mod save_failures;
mod steering;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cairn_engine::testing::{FakeLlm, FakeReply, FnTool, ScriptedApprover};
use cairn_engine::{
    LlmChunk, LlmOutcome, OutcomeStatus, Session, ToolError, ToolOutput, ToolRegistry,
};
use cairn_protocol::{ApprovalDecision, Event, Message, Mode, ToolMeta, ToolStatus, TurnStatus};
use common::*;
use serde_json::json;

#[tokio::test]
async fn text_only_turn_has_the_reference_event_order() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::Chunks(vec![
        LlmChunk::Reasoning("think".into()),
        LlmChunk::Text("Hel".into()),
        LlmChunk::Text("lo".into()),
    ])]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let ev = collect(s.run("hi")).await;
    assert_eq!(
        types(&ev),
        vec![
            "turn_start",
            "llm_request",
            "reasoning_delta",
            "assistant_delta",
            "assistant_message",
            "iteration_end",
            "turn_end"
        ]
    );
    match &ev[0] {
        Event::TurnStart(t) => {
            assert_eq!(t.turn, 1);
            assert_eq!(t.input, "hi");
            assert_eq!(t.session_id, s.id());
        }
        _ => unreachable!(),
    }
    // Increments that arrived together are merged into one delta.
    match &ev[3] {
        Event::AssistantDelta(d) => assert_eq!(d.text, "Hello"),
        _ => unreachable!(),
    }
    match &ev[4] {
        Event::AssistantMessage(m) => {
            assert_eq!(m.text, "Hello");
            assert_eq!(m.reasoning, "think");
        }
        _ => unreachable!(),
    }
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    // History: system, user, assistant; a second turn carries it along.
    llm.push(FakeReply::text("again"));
    let ev2 = collect(s.run("second")).await;
    match &ev2[0] {
        Event::TurnStart(t) => assert_eq!(t.turn, 2),
        _ => unreachable!(),
    }
    let reqs = llm.requests();
    assert_eq!(
        reqs[1].messages.len(),
        4,
        "system + user + assistant + user"
    );
    assert!(matches!(reqs[1].messages[0], Message::System { .. }));
}

#[tokio::test]
async fn every_tool_call_is_paired_with_a_result() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::Chunks(vec![
            LlmChunk::ToolCall(cairn_protocol::ToolCall {
                id: "a".into(),
                name: "echo".into(),
                arguments: "{\"x\":1}".into(),
            }),
            LlmChunk::ToolCall(cairn_protocol::ToolCall {
                id: "b".into(),
                name: "nope".into(),
                arguments: "{}".into(),
            }),
            LlmChunk::ToolCall(cairn_protocol::ToolCall {
                id: "c".into(),
                name: "echo".into(),
                arguments: "{not json".into(),
            }),
        ]),
        FakeReply::text("done"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(echo_tool("echo"));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let f = finished(&ev);
    assert_eq!(f.len(), 3);
    assert_eq!(f[0].status, ToolStatus::Ok);
    assert_eq!(f[1].status, ToolStatus::Error);
    assert_eq!(f[2].status, ToolStatus::Error);
    let second = &llm.requests()[1].messages;
    let results: Vec<_> = second
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0].call_id, "a");
    assert!(results[0].content.contains("echo"));
    assert_eq!(results[1].call_id, "b");
    let err: serde_json::Value = serde_json::from_str(&results[1].content).unwrap();
    assert_eq!(err["error_type"], "unknown_tool");
    let err: serde_json::Value = serde_json::from_str(&results[2].content).unwrap();
    assert_eq!(err["error_type"], "invalid_arguments");
}

#[tokio::test]
async fn tool_errors_reach_the_model_as_error_and_type() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "boom", json!({})),
        FakeReply::text("ok"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "boom",
        ToolMeta::read_only("t"),
        |_a, _c| async { Err(ToolError::NotFound("missing.txt".into())) },
    ));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let msgs = &llm.requests()[1].messages;
    let Some(Message::Tool(r)) = msgs.last() else {
        panic!("no tool result")
    };
    let v: serde_json::Value = serde_json::from_str(&r.content).unwrap();
    assert_eq!(v["error_type"], "not_found");
    assert!(v["error"].as_str().unwrap().contains("missing.txt"));
}

#[tokio::test]
async fn interactive_deny_blocks_the_write_and_the_turn_completes() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("w", "write_file", json!({"path": "a.txt", "content": "x"})),
        FakeReply::text("ok, not written"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(write_tool());
    let approver = ScriptedApprover::new(vec![], ApprovalDecision::Deny);
    let s = Session::builder(config(&dir, Mode::Interactive), Arc::new(llm.clone()))
        .tools(reg)
        .approver(Arc::new(approver.clone()))
        .build();
    let ev = collect(s.run("write")).await;
    let t = types(&ev);
    let pr = t.iter().position(|x| *x == "permission_required").unwrap();
    let tf = t.iter().position(|x| *x == "tool_finished").unwrap();
    assert!(pr < tf);
    assert!(!t.contains(&"tool_started"), "a denied tool never starts");
    assert_eq!(finished(&ev)[0].status, ToolStatus::Denied);
    assert!(!dir.0.join("a.txt").exists());
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    assert_eq!(approver.seen()[0].name, "write_file");
}

#[tokio::test]
async fn always_allow_tool_is_remembered_for_the_session() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("w1", "write_file", json!({"path": "a.txt", "content": "1"})),
        FakeReply::tool("w2", "write_file", json!({"path": "b.txt", "content": "2"})),
        FakeReply::text("done"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(write_tool());
    let approver =
        ScriptedApprover::new(vec![ApprovalDecision::AlwaysTool], ApprovalDecision::Deny);
    let s = Session::builder(config(&dir, Mode::Interactive), Arc::new(llm.clone()))
        .tools(reg)
        .approver(Arc::new(approver.clone()))
        .build();
    let ev = collect(s.run("write two")).await;
    assert_eq!(approver.seen().len(), 1);
    assert!(dir.0.join("a.txt").exists() && dir.0.join("b.txt").exists());
    assert_eq!(
        turn_end(&ev).produced_files,
        vec!["a.txt".to_string(), "b.txt".to_string()]
    );
    assert!(s.permission_state().allow_tools.contains("write_file"));
}

#[tokio::test]
async fn auto_mode_runs_without_asking_and_plan_mode_refuses() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("w", "write_file", json!({"path": "a.txt", "content": "x"})),
        FakeReply::text("ok"),
        FakeReply::tool("w2", "write_file", json!({"path": "b.txt", "content": "x"})),
        FakeReply::text("ok"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(write_tool());
    let s = session(&dir, Mode::Auto, &llm, reg);
    let ev = collect(s.run("w")).await;
    assert!(!types(&ev).contains(&"permission_required"));
    assert!(dir.0.join("a.txt").exists());
    s.set_mode(Mode::Plan);
    let ev = collect(s.run("w2")).await;
    assert_eq!(finished(&ev)[0].status, ToolStatus::Denied);
    assert!(!dir.0.join("b.txt").exists());
}

#[tokio::test]
async fn max_iterations_stops_the_turn_and_finalize_runs_without_tools() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "echo", json!({})),
        FakeReply::tool("b", "echo", json!({})),
        FakeReply::text("summary"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(echo_tool("echo"));
    let mut cfg = config(&dir, Mode::Interactive);
    cfg.max_iterations = 2;
    let s = Session::builder(cfg.clone(), Arc::new(llm.clone()))
        .tools(reg.clone())
        .build();
    let ev = collect(s.run("loop")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::MaxIterationsExceeded);
    assert_eq!(turn_end(&ev).iterations, 2);
    assert_eq!(llm.requests().len(), 2);

    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "echo", json!({})),
        FakeReply::text("summary"),
    ]);
    cfg.max_iterations = 1;
    cfg.finalize_on_max_iterations = true;
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .build();
    let ev = collect(s.run("loop")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::MaxIterationsExceeded);
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    assert!(
        reqs[1].tools.is_empty(),
        "the finalize call offers no tools"
    );
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::AssistantMessage(m) if m.text == "summary")));
}

#[tokio::test]
async fn read_only_tools_of_one_message_run_in_parallel_results_in_call_order() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tools(&[
            ("1", "slow", json!({"n": 1})),
            ("2", "slow", json!({"n": 2})),
        ]),
        FakeReply::text("done"),
    ]);
    // Each call waits until both have started: sequential execution would time out.
    let running = Arc::new(AtomicUsize::new(0));
    let r = running.clone();
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "slow",
        ToolMeta::read_only("t"),
        move |args, _| {
            let r = r.clone();
            async move {
                r.fetch_add(1, Ordering::SeqCst);
                let waited = tokio::time::timeout(Duration::from_secs(5), async {
                    while r.load(Ordering::SeqCst) < 2 {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                })
                .await;
                if waited.is_err() {
                    return Err(ToolError::Failed("ran sequentially".into()));
                }
                if args["n"] == 1 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Ok(ToolOutput::text(format!("n={}", args["n"])))
            }
        },
    ));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let ev = collect(s.run("go")).await;
    let f = finished(&ev);
    assert_eq!(f[0].req_id, "1");
    assert_eq!(f[1].req_id, "2");
    assert!(f.iter().all(|f| f.status == ToolStatus::Ok), "{f:?}");
    let msgs = &llm.requests()[1].messages;
    let ids: Vec<_> = msgs
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, vec!["1", "2"]);
}

#[tokio::test]
async fn steering_is_injected_between_iterations_and_can_be_withdrawn() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "wait", json!({})),
        FakeReply::text("done"),
    ]);
    let (wait, gate) = gated_wait_tool();
    let mut reg = ToolRegistry::new();
    reg.register(wait);
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let mut stream = s.run("start");
    let mut events = Vec::new();
    while let Some(e) = stream.recv().await {
        let started = matches!(e, Event::ToolStarted(_));
        events.push(e);
        if started {
            s.queue_steering("also run the tests");
            s.queue_steering("never mind this one");
            assert!(s.remove_steering("never mind this one"));
            gate.notify_one();
        }
    }
    let qs: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::QueueSteering(q) => Some(q.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(qs, vec!["also run the tests"]);
    assert!(!s.remove_steering("also run the tests"), "already injected");
    let second = &llm.requests()[1].messages;
    assert_eq!(
        second.last().map(|m| m.text()).as_deref(),
        Some("also run the tests")
    );
    assert_eq!(turn_end(&events).status, TurnStatus::Completed);
}

#[tokio::test]
async fn steering_queued_when_the_model_stops_keeps_the_turn_going() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::Delayed(
            Duration::from_millis(200),
            vec![LlmChunk::Text("first".into())],
        ),
        FakeReply::text("second"),
    ]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let mut stream = s.run("start");
    let mut ev = Vec::new();
    let mut queued = false;
    while let Some(e) = stream.recv().await {
        let requested = matches!(e, Event::LlmRequest(_));
        ev.push(e);
        if requested && !queued {
            queued = true;
            s.queue_steering("one more thing");
        }
    }
    assert_eq!(llm.requests().len(), 2);
    assert!(types(&ev).contains(&"queue_steering"));
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
}

#[tokio::test]
async fn large_tool_results_are_budgeted() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("big", "big", json!({})),
        FakeReply::text("ok"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new("big", ToolMeta::read_only("t"), |_, _| async {
        let mut s = String::from("HEAD-MARK");
        s.push_str(&"x".repeat(2_600_000));
        s.push_str("TAIL-MARK");
        Ok(ToolOutput::text(s))
    }));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    collect(s.run("go")).await;
    let msgs = &llm.requests()[1].messages;
    let Some(Message::Tool(r)) = msgs.last() else {
        panic!()
    };
    assert!(r.content.len() < 40_000, "{}", r.content.len());
    assert!(r.content.starts_with("HEAD-MARK"));
    assert!(r.content.contains("TAIL-MARK"));
    let saved = dir.0.join(".state/tool-results/big.txt");
    assert!(r.content.contains(&saved.display().to_string()));
    assert_eq!(std::fs::metadata(saved).unwrap().len(), 2_600_018);
}

#[tokio::test]
async fn tool_timeout_cancels_the_tool_and_reports_an_error() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("t", "hang", json!({})),
        FakeReply::text("ok"),
    ]);
    let cancelled = Arc::new(AtomicUsize::new(0));
    let c = cancelled.clone();
    let mut meta = ToolMeta::read_only("t");
    meta.timeout_ms = Some(100);
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new("hang", meta, move |_, ctx| {
        let c = c.clone();
        async move {
            ctx.cancel.cancelled().await;
            c.fetch_add(1, Ordering::SeqCst);
            Err(ToolError::Interrupted)
        }
    }));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let ev = collect(s.run("go")).await;
    let f = finished(&ev);
    assert_eq!(f[0].status, ToolStatus::Error);
    assert_eq!(
        cancelled.load(Ordering::SeqCst),
        1,
        "the tool saw its cancellation"
    );
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
}

#[tokio::test]
async fn hooks_observe_every_event_and_a_panicking_hook_is_ignored() {
    struct Count(AtomicUsize);
    impl cairn_engine::EngineHook for Count {
        fn on_event(&self, _e: &Event) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    struct Panics;
    impl cairn_engine::EngineHook for Panics {
        fn on_event(&self, _e: &Event) {
            panic!("hook bug");
        }
    }
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::text("hi")]);
    let count = Arc::new(Count(AtomicUsize::new(0)));
    let s = Session::builder(config(&dir, Mode::Interactive), Arc::new(llm))
        .hook(Arc::new(Panics))
        .hook(count.clone())
        .build();
    let ev = collect(s.run("x")).await;
    assert_eq!(count.0.load(Ordering::SeqCst), ev.len());
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
}

#[tokio::test]
async fn missing_model_is_a_clear_error() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![]);
    let mut cfg = config(&dir, Mode::Interactive);
    cfg.model = String::new();
    let s = Session::builder(cfg, Arc::new(llm.clone())).build();
    let ev = collect(s.run("x")).await;
    assert!(
        matches!(&ev[1], Event::Error(e) if e.error_type == "config" && e.error.contains("model"))
    );
    assert_eq!(turn_end(&ev).status, TurnStatus::Error);
    assert!(llm.requests().is_empty());
}

#[tokio::test]
async fn stale_files_reach_the_model_as_a_notice_and_the_face_as_a_typed_list() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("c1", "look", json!({})),
        FakeReply::text("noted"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "look",
        ToolMeta::read_only("test"),
        |_args, _ctx| async move {
            Ok(ToolOutput {
                stale_files: vec!["src/a.rs".into()],
                ..ToolOutput::text("listing")
            })
        },
    ));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let ev = collect(s.run("go")).await;
    let f = finished(&ev);
    assert_eq!(f[0].stale_files, ["src/a.rs"]);
    let preview = f[0].result_preview.clone().unwrap_or_default();
    assert!(
        !preview.contains("[notice:"),
        "the face's preview: {preview}"
    );
    let second = &llm.requests()[1];
    let tool_text: String = second
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Tool(_)))
        .map(|m| m.text())
        .collect();
    assert!(
        tool_text.contains("listing")
            && tool_text.contains("[notice: changed on disk")
            && tool_text.contains("`src/a.rs`"),
        "the model's result: {tool_text}"
    );
}

/// Issue 45: a model the endpoint does not serve (HTTP 404) is its own error type, in words
/// that say what to do (the app offers Settings for it).
#[tokio::test]
async fn a_model_the_endpoint_does_not_serve_is_model_not_found_in_words() {
    let dir = TempDir::new();
    let mut outcome = LlmOutcome::new(OutcomeStatus::Failed, Some("model not found".into()))
        .with_kind(cairn_engine::FailureKind::BadRequest);
    outcome.http_status = Some(404);
    let llm = FakeLlm::new(vec![FakeReply::outcome(outcome)]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let ev = collect(s.run("hello")).await;
    let err = ev
        .iter()
        .find_map(|e| match e {
            Event::Error(e) => Some(e),
            _ => None,
        })
        .expect("an error event");
    assert_eq!(err.error_type, "model_not_found");
    assert!(err.error.contains("Choose another model"), "{}", err.error);
    assert!(!err.error.contains("failed: failed"), "{}", err.error);
}
