//! One tool result larger than the context window: it is cut to fit (head + tail, full text
//! saved), the summary request fits the window, overflow retries make progress, and the
//! session stays usable.

use crate::common;

use std::sync::{Arc, Mutex};

use cairn_engine::compaction::CUT_MARKER;
use cairn_engine::hook::{EngineHook, StateSnapshot};
use cairn_engine::testing::{FakeLlm, FakeReply, FnTool};
use cairn_engine::{repair_history, CompactionConfig, Session, ToolOutput, ToolRegistry};
use cairn_protocol::{Event, Message, Mode, ToolMeta, TurnStatus};
use common::*;
use serde_json::json;

/// About 22 KB in 400 lines, like the defect's `big.txt`.
fn big_text() -> String {
    (0..400)
        .map(|i| format!("line {i:03}: {}\n", "lorem ipsum dolor sit amet ".repeat(2)))
        .collect()
}

/// A read-only `read_file` returning `big_text()`; it sets the fake's context limit once run,
/// so the first request (before the read) always gets through.
fn read_tool(llm: &FakeLlm, limit_after: Option<u64>) -> ToolRegistry {
    let llm = llm.clone();
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "read_file",
        ToolMeta::read_only("file"),
        move |_args, _ctx| {
            llm.set_context_limit(limit_after);
            async move { Ok(ToolOutput::text(big_text())) }
        },
    ));
    reg
}

/// Keeps the last history handed to the hooks (what a session store would save).
#[derive(Default)]
struct Saved(Mutex<Vec<Message>>);
impl EngineHook for Saved {
    fn on_event(&self, _event: &Event) {}
    fn on_state(&self, state: &StateSnapshot<'_>) {
        *self.0.lock().unwrap() = state.messages.to_vec();
    }
}

fn small_window(dir: &TempDir, window: u64) -> cairn_engine::EngineConfig {
    let mut cfg = config(dir, Mode::Auto);
    cfg.compaction = CompactionConfig {
        context_window: window,
        ..Default::default()
    };
    cfg
}

fn build(
    cfg: cairn_engine::EngineConfig,
    llm: &FakeLlm,
    reg: ToolRegistry,
) -> (Session, Arc<Saved>) {
    let saved = Arc::new(Saved::default());
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .hook(saved.clone())
        .build();
    (s, saved)
}

/// The single read_file result in a history, asserting the pairing is valid.
fn the_result(msgs: &[Message]) -> String {
    let mut check = msgs.to_vec();
    assert_eq!(
        repair_history(&mut check),
        0,
        "tool call/result pairing broken"
    );
    let results: Vec<&str> = msgs
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) if r.name == "read_file" => Some(r.content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 1, "the result is kept, never removed");
    results[0].to_string()
}

fn error_text(ev: &[Event]) -> Option<&cairn_protocol::ErrorEvent> {
    ev.iter().find_map(|e| match e {
        Event::Error(e) => Some(e),
        _ => None,
    })
}

#[tokio::test]
async fn a_result_larger_than_the_window_is_cut_and_the_turn_completes() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("c1", "read_file", json!({"path": "big.txt"})),
        FakeReply::text("read it: 400 lines"),
    ]);
    let (s, _) = build(
        small_window(&dir, 4_000),
        &llm,
        read_tool(&llm, Some(4_000)),
    );
    let ev = collect(s.run("read it")).await;
    assert_eq!(
        turn_end(&ev).status,
        TurnStatus::Completed,
        "{:?}",
        error_text(&ev)
    );
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2, "no summary request and no rejected request");
    let sent = the_result(&reqs[1].messages);
    assert!(sent.contains(CUT_MARKER), "{sent}");
    assert!(sent.starts_with("line 000"), "the head is kept");
    assert!(sent.contains("line 399"), "the tail is kept");
    // The full result is on disk where the marker says.
    let file = dir.0.join(".state/tool-results/c1.txt");
    assert!(sent.contains(&file.display().to_string()));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), big_text());
    assert!(FakeLlm::request_tokens(&reqs[1]) < 4_000);
}

#[tokio::test]
async fn a_wrong_window_is_recovered_from_by_cutting_harder_on_each_overflow() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("c1", "read_file", json!({"path": "big.txt"})),
        FakeReply::text("SUMMARY or answer"),
        FakeReply::text("SUMMARY or answer"),
        FakeReply::text("SUMMARY or answer"),
        FakeReply::text("SUMMARY or answer"),
    ]);
    // The configured window thinks 22 KB is nothing; the provider accepts ~1 500 tokens.
    let (s, _) = build(
        small_window(&dir, 1_000_000),
        &llm,
        read_tool(&llm, Some(1_500)),
    );
    let ev = collect(s.run("read it")).await;
    assert_eq!(
        turn_end(&ev).status,
        TurnStatus::Completed,
        "{:?}",
        error_text(&ev)
    );
    let reqs = llm.requests();
    // Every request after a rejection is smaller than the one rejected.
    let sizes: Vec<u64> = reqs.iter().skip(1).map(FakeLlm::request_tokens).collect();
    let main: Vec<u64> = reqs
        .iter()
        .skip(1)
        .filter(|r| !r.tools.is_empty())
        .map(FakeLlm::request_tokens)
        .collect();
    assert!(main.windows(2).all(|w| w[1] < w[0]), "{sizes:?}");
    assert!(*main.last().unwrap() <= 1_500, "{sizes:?}");
    // Cutting the result was enough: no summary call, and the result is still there.
    assert!(reqs.iter().all(|r| !r.tools.is_empty()), "{sizes:?}");
    assert!(ev
        .iter()
        .any(|e| matches!(e, Event::Compacting(c) if c.trigger == "overflow")));
    let msgs = s.messages().await;
    assert!(the_result(&msgs).contains(CUT_MARKER));
}

#[tokio::test]
async fn when_nothing_more_can_be_cut_the_error_names_what_is_too_big_and_the_next_turn_works() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::tool(
        "c1",
        "read_file",
        json!({"path": "big.txt"}),
    )]);
    // After the read, the provider rejects everything (as in the defect's repro).
    let (s, saved) = build(small_window(&dir, 4_000), &llm, read_tool(&llm, Some(1)));
    let ev = collect(s.run("read it")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Error);
    let err = error_text(&ev).expect("an error event");
    assert_eq!(err.error_type, "context_length_exceeded");
    assert!(err.error.contains("still too large"), "{}", err.error);
    assert!(err.error.contains("largest part is"), "{}", err.error);
    let n = llm.requests().len();
    assert!(n < 16, "bounded retries, got {n}");
    // Each rejected main request was smaller than the one before.
    let main: Vec<u64> = llm
        .requests()
        .iter()
        .skip(1)
        .filter(|r| !r.tools.is_empty())
        .map(FakeLlm::request_tokens)
        .collect();
    assert!(
        main.len() >= 2 && main.windows(2).all(|w| w[1] <= w[0]),
        "{main:?}"
    );
    // The summary requests fit the window too.
    for r in llm.requests().iter().filter(|r| r.tools.is_empty()) {
        assert!(FakeLlm::request_tokens(r) < 4_000);
    }

    // The saved history holds the cut result; a later turn (a new process) works.
    let history = saved.0.lock().unwrap().clone();
    let kept = the_result(&history);
    assert!(kept.contains(CUT_MARKER));
    assert!(kept.len() < big_text().len() / 4);
    let llm2 = FakeLlm::new(vec![FakeReply::text("hello!")]);
    llm2.set_context_limit(Some(3_000));
    let s2 = Session::builder(small_window(&dir, 4_000), Arc::new(llm2.clone()))
        .tools(read_tool(&llm2, Some(3_000)))
        .messages(history)
        .build();
    let ev = collect(s2.run("hello?")).await;
    assert_eq!(
        turn_end(&ev).status,
        TurnStatus::Completed,
        "{:?}",
        error_text(&ev)
    );
    // And in the same session too, once the provider accepts again.
    llm.set_context_limit(Some(3_000));
    llm.push(FakeReply::text("hello again"));
    let ev = collect(s.run("hello?")).await;
    assert_eq!(
        turn_end(&ev).status,
        TurnStatus::Completed,
        "{:?}",
        error_text(&ev)
    );
}

#[tokio::test]
async fn a_restored_history_with_an_oversized_result_is_cut_before_the_next_request() {
    let dir = TempDir::new();
    let history = vec![
        Message::user("read it"),
        cairn_engine::testing::calls_message(&["c1"]),
        Message::Tool(cairn_protocol::ToolResult {
            call_id: "c1".into(),
            name: "read_file".into(),
            content: big_text(),
            status: cairn_protocol::ToolStatus::Ok,
            images: Vec::new(),
        }),
    ];
    let llm = FakeLlm::new(vec![FakeReply::text("hi")]);
    llm.set_context_limit(Some(4_000));
    let s = Session::builder(small_window(&dir, 4_000), Arc::new(llm.clone()))
        .messages(history)
        .build();
    let ev = collect(s.run("hello?")).await;
    assert_eq!(
        turn_end(&ev).status,
        TurnStatus::Completed,
        "{:?}",
        error_text(&ev)
    );
    assert_eq!(llm.requests().len(), 1);
}
