//! Leftover steering runs in the same session and stream, as a turn that says it came from
//! steering; `Session::idle`; the run's typed end; the typed facts on tool events.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_engine::testing::{FakeLlm, FakeReply, FnTool};
use cairn_engine::{EngineHook, EventStream, Session, ToolError, ToolOutput, ToolRegistry};
use cairn_protocol::{
    ContentPart, Event, Message, Mode, RunEnd, ToolKind, ToolMeta, TurnSource, TurnStatus,
};
use futures::FutureExt;
use serde_json::json;

use super::common::*;

/// Queues steering the moment the first turn announces its end (hooks see each event before
/// the stream does): the turn has decided to stop, so these are left over.
struct QueueOnTurnEnd {
    session: Mutex<Option<Session>>,
    texts: Vec<&'static str>,
}

impl EngineHook for QueueOnTurnEnd {
    fn on_event(&self, event: &Event) {
        if let Event::TurnEnd(_) = event {
            // Taken: only the first turn's end queues (and the session is let go).
            if let Some(s) = self.session.lock().unwrap().take() {
                for t in &self.texts {
                    s.queue_steering(*t);
                }
            }
        }
    }
}

fn session_with_hook(
    dir: &TempDir,
    llm: &FakeLlm,
    reg: ToolRegistry,
    texts: Vec<&'static str>,
) -> Session {
    let hook = Arc::new(QueueOnTurnEnd {
        session: Mutex::new(None),
        texts,
    });
    let s = Session::builder(config(dir, Mode::Interactive), Arc::new(llm.clone()))
        .tools(reg)
        .hook(hook.clone())
        .build();
    *hook.session.lock().unwrap() = Some(s.clone());
    s
}

/// Every event of a run, then how it ended.
async fn run_to_end(mut stream: EventStream) -> (Vec<Event>, RunEnd) {
    let mut events = Vec::new();
    let r = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(e) = stream.recv().await {
            events.push(e);
        }
        stream.end().await
    })
    .await;
    let end = r.unwrap_or_else(|_| panic!("run did not end; so far {:?}", types(&events)));
    (events, end)
}

fn starts(events: &[Event]) -> Vec<&cairn_protocol::TurnStart> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::TurnStart(t) => Some(t),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn leftover_steering_runs_next_in_the_same_stream_as_a_steering_turn() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::text("first"), FakeReply::text("second")]);
    let s = session_with_hook(
        &dir,
        &llm,
        ToolRegistry::new(),
        vec!["also add tests", "and a changelog line"],
    );
    let (events, end) = run_to_end(s.run("write the parser")).await;
    assert_eq!(
        end,
        RunEnd::Ended {
            status: TurnStatus::Completed,
            turns: 2,
            steering_turns: 1
        }
    );
    let st = starts(&events);
    assert_eq!(st.len(), 2, "{:?}", types(&events));
    assert_eq!(st[0].source, TurnSource::Input);
    assert_eq!(st[1].source, TurnSource::Steering);
    assert_eq!(st[1].input, "also add tests");
    assert_eq!((st[0].turn, st[1].turn), (1, 2));
    // The second leftover is its own user message, injected as steering: no joined text.
    let second_turn = &events[events
        .iter()
        .position(|e| matches!(e, Event::TurnStart(t) if t.turn == 2))
        .unwrap()..];
    let injected: Vec<&str> = second_turn
        .iter()
        .filter_map(|e| match e {
            Event::QueueSteering(q) => Some(q.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(injected, ["and a changelog line"]);
    assert_eq!(
        types(&events).iter().filter(|t| **t == "turn_end").count(),
        2
    );
    // Same session: the second request carries the first turn and each leftover alone.
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    let texts: Vec<String> = reqs[1].messages.iter().map(Message::text).collect();
    let tail = &texts[texts.len() - 2..];
    assert_eq!(tail, ["also add tests", "and a changelog line"]);
    assert!(texts.iter().any(|t| t == "write the parser"));
    assert!(texts.iter().any(|t| t == "first"));
    assert!(s.pending_steering().is_empty());
    assert_eq!(s.turns().await, 2);
    assert!(!s.is_busy(), "the stream ends once the session let go");
}

#[tokio::test]
async fn after_an_interrupted_turn_leftover_steering_stays_queued() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::Hang(vec![])]);
    let s = session_with_hook(&dir, &llm, ToolRegistry::new(), vec!["later"]);
    let mut stream = s.run("go");
    let mut events = Vec::new();
    while let Some(e) = stream.recv().await {
        if matches!(e, Event::LlmRequest(_)) {
            s.interrupt();
        }
        events.push(e);
    }
    assert_eq!(
        stream.end().await,
        RunEnd::Ended {
            status: TurnStatus::Interrupted,
            turns: 1,
            steering_turns: 0
        }
    );
    assert_eq!(starts(&events).len(), 1);
    assert_eq!(s.pending_steering(), ["later"]);
}

#[tokio::test]
async fn a_run_with_nothing_to_do_ends_not_started() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let (events, end) = run_to_end(s.retry()).await;
    assert!(events.is_empty());
    assert_eq!(end, RunEnd::NotStarted);
    let (events, end) = run_to_end(s.resume()).await;
    assert!(events.is_empty());
    assert_eq!(end, RunEnd::NotStarted);
}

#[tokio::test]
async fn idle_resolves_only_when_no_turn_runs_or_waits() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "wait", json!({})),
        FakeReply::text("one"),
        FakeReply::tool("b", "wait", json!({})),
        FakeReply::text("two"),
    ]);
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let g = gate.clone();
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "wait",
        ToolMeta::read_only("t"),
        move |_, _| {
            let g = g.clone();
            async move {
                g.acquire().await.unwrap().forget();
                Ok(ToolOutput::text("waited"))
            }
        },
    ));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    assert!(s.idle().now_or_never().is_some(), "a new session is idle");
    let mut first = s.run("first");
    let second = s.run("second");
    while let Some(e) = first.recv().await {
        if matches!(e, Event::ToolStarted(_)) {
            assert!(s.idle().now_or_never().is_none(), "busy while a tool runs");
            gate.add_permits(1);
        }
    }
    // The first run is over; the second one (queued behind it) still keeps the session busy.
    let mut second = second;
    let mut idle = Box::pin(s.idle());
    while let Some(e) = second.recv().await {
        if matches!(e, Event::ToolStarted(_)) {
            assert!((&mut idle).now_or_never().is_none(), "the queued turn runs");
            gate.add_permits(1);
        }
    }
    tokio::time::timeout(Duration::from_secs(20), idle)
        .await
        .expect("idle once both runs ended");
    assert!(!s.is_busy());
}

#[tokio::test]
async fn tool_events_carry_kind_truncation_and_attachments() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tools(&[
            ("e", "edit", json!({"path": "a.txt"})),
            ("p", "plain", json!({})),
            ("u", "nonexistent", json!({})),
        ]),
        FakeReply::text("done"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::of_kind(
        "edit",
        ToolKind::Edit,
        ToolMeta::read_only("file"),
        |_, _| async {
            Ok(ToolOutput::with_images(
                "x".repeat(1_000),
                vec![ContentPart::Image {
                    mime_type: "image/png".into(),
                    data: "aGk=".into(),
                }],
            ))
        },
    ));
    reg.register(FnTool::new(
        "plain",
        ToolMeta::read_only("t"),
        |_, _| async { Ok::<_, ToolError>(ToolOutput::text("short")) },
    ));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let events = collect(s.run("go")).await;
    let proposed: Vec<(&str, ToolKind)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolProposed(p) => Some((p.name.as_str(), p.kind)),
            _ => None,
        })
        .collect();
    assert_eq!(
        proposed,
        [
            ("edit", ToolKind::Edit),
            ("plain", ToolKind::Other),
            ("nonexistent", ToolKind::Other)
        ]
    );
    let f = finished(&events);
    assert_eq!(f[0].kind, ToolKind::Edit);
    assert!(f[0].truncated);
    assert_eq!(f[0].attachments.len(), 1);
    assert_eq!(f[0].attachments[0].mime_type, "image/png");
    assert_eq!(f[0].attachments[0].kind, "image");
    assert!(!f[1].truncated);
    assert!(f[1].attachments.is_empty());
    assert_eq!(f[1].result_preview.as_deref(), Some("short"));
    let plain = serde_json::to_value(Event::ToolFinished(f[1].clone())).unwrap();
    assert_eq!(plain["data"]["kind"], "other");
    assert_eq!(plain["data"]["truncated"], false);
    assert!(plain["data"].get("attachments").is_none());
    let edit = serde_json::to_value(Event::ToolFinished(f[0].clone())).unwrap();
    assert_eq!(edit["data"]["kind"], "edit");
    assert_eq!(edit["data"]["truncated"], true);
}
