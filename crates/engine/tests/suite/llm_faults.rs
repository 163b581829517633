//! How the loop handles LLM outcomes: retry policy, auth, interrupts, retry().

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_engine::testing::{FakeLlm, FakeReply, FnTool};
use cairn_engine::{FailureKind, LlmChunk, LlmOutcome, OutcomeStatus, ToolError, ToolRegistry};
use cairn_protocol::{Event, Message, Mode, ToolMeta, ToolStatus, TurnStatus};
use common::*;
use serde_json::json;

fn retries(ev: &[Event]) -> Vec<&cairn_protocol::LlmRetry> {
    ev.iter()
        .filter_map(|e| match e {
            Event::LlmRetry(r) => Some(r),
            _ => None,
        })
        .collect()
}

fn error(ev: &[Event]) -> &cairn_protocol::ErrorEvent {
    ev.iter()
        .find_map(|e| match e {
            Event::Error(x) => Some(x),
            _ => None,
        })
        .expect("an error event")
}

#[tokio::test]
async fn transient_failures_are_retried_with_llm_retry_events() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::Chunks(vec![
            LlmChunk::Text("partial".into()),
            LlmChunk::End(LlmOutcome::new(
                OutcomeStatus::Timeout,
                Some("stream dropped".into()),
            )),
        ]),
        FakeReply::outcome(LlmOutcome::new(
            OutcomeStatus::Malformed,
            Some("bad json".into()),
        )),
        FakeReply::text("finally"),
    ]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let ev = collect(s.run("x")).await;
    let r = retries(&ev);
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].attempt, r[0].max), (1, 2));
    assert!(r[0].reason.contains("stream dropped"));
    assert!(r[1].reason.contains("malformed"));
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    // Partial text of a failed attempt never lands in history.
    let msgs = s.messages().await;
    assert_eq!(msgs.last().map(|m| m.text()).as_deref(), Some("finally"));
    assert_eq!(msgs.len(), 3);
}

#[tokio::test]
async fn rate_limit_honours_retry_after() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::outcome(
            LlmOutcome::new(OutcomeStatus::Failed, Some("slow down".into()))
                .with_kind(FailureKind::RateLimited)
                .with_http_status(429)
                .with_retry_after(Some(Duration::from_millis(300))),
        ),
        FakeReply::text("ok"),
    ]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let t0 = Instant::now();
    let ev = collect(s.run("x")).await;
    assert!(t0.elapsed() >= Duration::from_millis(300));
    assert_eq!(retries(&ev)[0].wait_ms, 300);
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
}

#[tokio::test]
async fn auth_failure_ends_the_turn_at_once_without_retry() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::outcome(
        LlmOutcome::new(OutcomeStatus::Auth, Some("invalid api key".into())).with_http_status(401),
    )]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let ev = collect(s.run("x")).await;
    assert!(retries(&ev).is_empty());
    let e = error(&ev);
    assert_eq!(e.error_type, "auth");
    assert!(!e.retriable);
    assert_eq!(
        e.error, "Invalid api key (HTTP 401). Set a valid API key and try again.",
        "the provider's words once, no nested parentheses"
    );
    assert_eq!(turn_end(&ev).status, TurnStatus::Error);
    assert_eq!(llm.requests().len(), 1);
}

#[tokio::test]
async fn exhausted_retries_end_with_a_retriable_error_and_retry_resumes() {
    let dir = TempDir::new();
    let fail = || {
        FakeReply::outcome(
            LlmOutcome::new(OutcomeStatus::Failed, Some("upstream 500".into()))
                .with_kind(FailureKind::Server)
                .with_http_status(500),
        )
    };
    let llm = FakeLlm::new(vec![fail(), fail(), fail()]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let ev = collect(s.run("x")).await;
    assert_eq!(retries(&ev).len(), 2);
    let e = error(&ev);
    assert_eq!(e.error_type, "server_error");
    assert!(e.retriable);
    assert!(e.error.contains("3 attempts"));
    // In words: what happened, the endpoint's message, what to do; no "failed: failed".
    assert!(
        e.error.starts_with("The model's server had an error (HTTP 500). It said: upstream 500. Try again in a moment."),
        "{}",
        e.error
    );
    assert_eq!(turn_end(&ev).status, TurnStatus::Error);

    llm.push(FakeReply::text("recovered"));
    let ev = collect(s.retry()).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let msgs = s.messages().await;
    // system, user, assistant: the retry did not duplicate the user message.
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[1].text(), "x");
    // Nothing left to retry: an empty stream.
    let ev = collect(s.retry()).await;
    assert!(ev.is_empty());
}

#[tokio::test]
async fn context_overflow_is_not_blindly_retried() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::outcome(
        LlmOutcome::new(OutcomeStatus::Failed, Some("maximum context length".into()))
            .with_kind(FailureKind::ContextOverflow)
            .with_http_status(400),
    )]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let ev = collect(s.run("x")).await;
    assert!(retries(&ev).is_empty());
    assert_eq!(error(&ev).error_type, "context_length_exceeded");
    assert_eq!(turn_end(&ev).status, TurnStatus::Error);
}

#[tokio::test]
async fn interrupt_during_the_llm_stream() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::Hang(vec![LlmChunk::Text(
        "thinking about".into(),
    )])]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let mut stream = s.run("x");
    let mut ev = Vec::new();
    let t0 = Instant::now();
    while let Some(e) = stream.recv().await {
        if matches!(e, Event::AssistantDelta(_)) {
            s.interrupt();
        }
        ev.push(e);
    }
    assert!(t0.elapsed() < Duration::from_secs(5));
    let t = types(&ev);
    assert_eq!(
        &t[t.len() - 3..],
        &["assistant_message", "interrupted", "turn_end"]
    );
    assert_eq!(turn_end(&ev).status, TurnStatus::Interrupted);
    // The partial answer is said as a message (the event log keeps no deltas: a face that
    // reopens the session after quitting mid-stream shows it, issue 45).
    assert!(ev.iter().any(|e| matches!(e,
        Event::AssistantMessage(m) if m.text == "thinking about" && m.usage.is_none())));
    // The partial text is kept; the session stays usable.
    llm.push(FakeReply::text("next"));
    let ev = collect(s.run("again")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
}

#[tokio::test]
async fn interrupt_during_a_tool_pairs_every_call_with_a_result() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::tools(&[
        ("a", "hang", json!({})),
        ("b", "hang", json!({})),
    ])]);
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let sc = saw_cancel.clone();
    let mut meta = ToolMeta::read_only("t");
    meta.mutating = true; // sequential
    meta.requires_approval = false;
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new("hang", meta, move |_, ctx| {
        let sc = sc.clone();
        async move {
            ctx.cancel.cancelled().await;
            sc.store(true, Ordering::SeqCst);
            Err(ToolError::Interrupted)
        }
    }));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let mut stream = s.run("x");
    let mut ev = Vec::new();
    while let Some(e) = stream.recv().await {
        if matches!(e, Event::ToolStarted(_)) {
            s.interrupt();
        }
        ev.push(e);
    }
    assert!(saw_cancel.load(Ordering::SeqCst));
    assert_eq!(finished(&ev)[0].status, ToolStatus::Interrupted);
    assert_eq!(turn_end(&ev).status, TurnStatus::Interrupted);
    let msgs = s.messages().await;
    let results: Vec<_> = msgs
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some((r.call_id.as_str(), r.status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        vec![
            ("a", ToolStatus::Interrupted),
            ("b", ToolStatus::Interrupted)
        ]
    );
}

#[tokio::test]
async fn dropping_the_event_stream_cancels_the_turn() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::Hang(vec![LlmChunk::Text("a".into())])]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let mut stream = s.run("x");
    let _ = stream.recv().await;
    drop(stream);
    tokio::time::timeout(Duration::from_secs(5), async {
        while s.is_busy() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the turn stopped after its consumer went away");
}

#[tokio::test]
async fn turns_of_one_session_never_overlap() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::Delayed(
            Duration::from_millis(100),
            vec![LlmChunk::Text("one".into())],
        ),
        FakeReply::text("two"),
    ]);
    let s = session(&dir, Mode::Interactive, &llm, ToolRegistry::new());
    let a = s.run("first");
    let b = s.run("second");
    let (ea, eb) = tokio::join!(collect(a), collect(b));
    assert_eq!(turn_end(&ea).status, TurnStatus::Completed);
    assert_eq!(turn_end(&eb).status, TurnStatus::Completed);
    let reqs = llm.requests();
    assert_eq!(
        reqs[1].messages.len(),
        4,
        "the second turn saw the first one's reply"
    );
}

/// A sequential tool without approval.
fn blocking_meta() -> ToolMeta {
    let mut meta = ToolMeta::read_only("t");
    meta.mutating = true;
    meta.requires_approval = false;
    meta
}

/// Runs a turn, interrupting it once `ready` fires; returns its events and how long the
/// turn took to end after the interrupt.
async fn interrupt_when(
    s: &cairn_engine::Session,
    ready: tokio::sync::oneshot::Receiver<()>,
) -> (Vec<Event>, Duration) {
    let mut stream = s.run("x");
    let mut ev = Vec::new();
    let mut ready = Some(ready);
    let mut at = None;
    loop {
        tokio::select! {
            e = stream.recv() => match e {
                Some(e) => ev.push(e),
                None => break,
            },
            _ = async { ready.as_mut().unwrap().await }, if ready.is_some() => {
                ready = None;
                at = Some(Instant::now());
                s.interrupt();
            }
        }
    }
    (ev, at.expect("the tool got ready").elapsed())
}

#[tokio::test]
async fn a_tool_stuck_in_blocking_code_cannot_hold_an_interrupted_turn() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::tools(&[("a", "stuck", json!({}))])]);
    let (release, hold) = std::sync::mpsc::channel::<()>();
    let hold = Arc::new(std::sync::Mutex::new(hold));
    let (started_tx, started) = tokio::sync::oneshot::channel();
    let started_tx = Arc::new(std::sync::Mutex::new(Some(started_tx)));
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new("stuck", blocking_meta(), move |_, _ctx| {
        let (hold, started_tx) = (hold.clone(), started_tx.clone());
        async move {
            // Ignores the cancellation: blocking work the runtime cannot stop.
            tokio::task::spawn_blocking(move || {
                if let Some(tx) = started_tx.lock().unwrap().take() {
                    let _ = tx.send(());
                }
                let _ = hold.lock().unwrap().recv_timeout(Duration::from_secs(20));
            })
            .await
            .ok();
            Ok(cairn_engine::ToolOutput::text("finished after all"))
        }
    }));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let (ev, took) = interrupt_when(&s, started).await;
    drop(release);
    assert!(
        took < Duration::from_secs(2),
        "the turn took {took:?} to end"
    );
    assert_eq!(finished(&ev)[0].status, ToolStatus::Interrupted);
    let t = types(&ev);
    assert_eq!(&t[t.len() - 2..], &["interrupted", "turn_end"]);
    assert_eq!(turn_end(&ev).status, TurnStatus::Interrupted);
}

#[tokio::test]
async fn an_edit_interrupted_after_its_write_reports_it_and_a_late_write_is_refused() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::tools(&[("a", "edit", json!({}))])]);
    // The call writes a.txt, then is stuck (building its diff, say) past the interrupt.
    let (release, hold) = std::sync::mpsc::channel::<()>();
    let hold = Arc::new(std::sync::Mutex::new(hold));
    let (written_tx, written) = tokio::sync::oneshot::channel();
    let written_tx = Arc::new(std::sync::Mutex::new(Some(written_tx)));
    let (late_tx, late) = std::sync::mpsc::channel::<Result<(), ToolError>>();
    let late_tx = Arc::new(std::sync::Mutex::new(late_tx));
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new("edit", blocking_meta(), move |_, ctx| {
        let (hold, written_tx, late_tx) = (hold.clone(), written_tx.clone(), late_tx.clone());
        async move {
            tokio::task::spawn_blocking(move || {
                let a = ctx.workspace.join("a.txt");
                ctx.write_files(&["a.txt".to_string()], || {
                    std::fs::write(&a, "edited").map_err(|e| ToolError::io("write", e))
                })?;
                if let Some(tx) = written_tx.lock().unwrap().take() {
                    let _ = tx.send(());
                }
                let _ = hold.lock().unwrap().recv_timeout(Duration::from_secs(20));
                // Too late: the turn gave up on this call.
                let b = ctx.workspace.join("b.txt");
                let r = ctx.write_files(&["b.txt".to_string()], || {
                    std::fs::write(&b, "late").map_err(|e| ToolError::io("write", e))
                });
                let _ = late_tx.lock().unwrap().send(r);
                Ok(cairn_engine::ToolOutput::text("done"))
            })
            .await
            .map_err(|e| ToolError::Failed(e.to_string()))?
        }
    }));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    let (ev, took) = interrupt_when(&s, written).await;
    assert!(
        took < Duration::from_secs(2),
        "the turn took {took:?} to end"
    );
    assert_eq!(finished(&ev)[0].status, ToolStatus::Interrupted);
    assert_eq!(turn_end(&ev).status, TurnStatus::Interrupted);
    assert_eq!(turn_end(&ev).produced_files, ["a.txt"]);
    drop(release);
    let late = tokio::task::spawn_blocking(move || late.recv_timeout(Duration::from_secs(20)))
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(late, Err(ToolError::Interrupted)), "{late:?}");
    assert!(!dir.0.join("b.txt").exists());
    assert_eq!(
        std::fs::read_to_string(dir.0.join("a.txt")).unwrap(),
        "edited"
    );
}
