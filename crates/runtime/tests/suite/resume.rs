//! Resume after a crash with an approval open (seed §12.4): the files left on disk at that
//! moment are opened as a new process would, and `resume()` asks again.

use crate::common;
use common::opts;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::testing::{FakeLlm, FakeReply, ScriptedApprover};
use cairn_engine::{Approver, EventStream};
use cairn_protocol::{ApprovalDecision, ApprovalRequest, Event, Message, ToolStatus, TurnStatus};
use cairn_runtime::{open_session, Assembled};
use serde_json::json;

/// An approval the user never answers (the process dies while it is open).
struct NeverAnswers;

#[async_trait]
impl Approver for NeverAnswers {
    async fn approve(&self, _request: ApprovalRequest) -> ApprovalDecision {
        std::future::pending().await
    }
}

async fn next_until(stream: &mut EventStream, pred: impl Fn(&Event) -> bool) -> Vec<Event> {
    let mut seen = Vec::new();
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), stream.recv())
            .await
            .expect("event in time")
            .expect("stream open");
        let done = pred(&e);
        seen.push(e);
        if done {
            return seen;
        }
    }
}

async fn drain(mut stream: EventStream) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(e) = tokio::time::timeout(Duration::from_secs(20), stream.recv())
        .await
        .expect("event in time")
    {
        out.push(e);
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Runs a turn whose two write calls wait for an approval, and returns the session id and a
/// copy of the state dir taken while that approval is open (what a SIGKILL would leave).
async fn crash_with_open_approval(ws: &Path, crashed: &Path) -> String {
    let state = tempfile::tempdir().unwrap();
    let llm = FakeLlm::new(vec![FakeReply::tools(&[
        (
            "call_w1",
            "write_file",
            json!({"path": "one.txt", "content": "1"}),
        ),
        (
            "call_w2",
            "write_file",
            json!({"path": "two.txt", "content": "2"}),
        ),
    ])]);
    let a = open_session(
        opts(ws, state.path(), None),
        Some(Arc::new(llm)),
        Arc::new(NeverAnswers),
    )
    .unwrap();
    let id = a.session.id();
    let mut stream = a.session.run("write the two files");
    next_until(&mut stream, |e| matches!(e, Event::PermissionRequired(_))).await;
    copy_dir(state.path(), crashed);
    a.session.interrupt();
    drop(stream);
    id
}

async fn reopen(
    ws: &Path,
    state: &Path,
    id: &str,
    llm: FakeLlm,
    approver: Arc<dyn Approver>,
) -> Assembled {
    open_session(
        opts(ws, state, Some(id.to_string())),
        Some(Arc::new(llm)),
        approver,
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_approval_is_asked_again_on_resume_and_the_turn_continues() {
    let ws = tempfile::tempdir().unwrap();
    let crashed = tempfile::tempdir().unwrap();
    let id = crash_with_open_approval(ws.path(), crashed.path()).await;
    assert!(!ws.path().join("one.txt").exists());

    let llm = FakeLlm::new(vec![FakeReply::text("both written")]);
    let approver = ScriptedApprover::new(Vec::new(), ApprovalDecision::Once);
    let a = reopen(
        ws.path(),
        crashed.path(),
        &id,
        llm.clone(),
        Arc::new(approver.clone()),
    )
    .await;
    let pending: Vec<String> = a
        .session
        .pending_calls()
        .await
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(pending, vec!["call_w1", "call_w2"]);

    let events = drain(a.session.resume()).await;
    let asked: Vec<String> = approver.seen().into_iter().map(|r| r.req_id).collect();
    assert_eq!(asked, vec!["call_w1", "call_w2"]);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("one.txt")).unwrap(),
        "1"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("two.txt")).unwrap(),
        "2"
    );
    assert!(matches!(events.first(), Some(Event::TurnStart(t)) if t.turn == 1));
    assert!(matches!(events.last(), Some(Event::TurnEnd(t)) if t.status == TurnStatus::Completed));
    // The next request carries the original input, the calls and their fresh results.
    let req = &llm.requests()[0];
    let text = serde_json::to_string(&req.messages).unwrap();
    assert!(text.contains("write the two files"));
    let results: Vec<&Message> = req
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Tool(_)))
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results
        .iter()
        .all(|m| matches!(m, Message::Tool(r) if r.status == ToolStatus::Ok)));
    // Nothing is left to resume, and the checkpoint agrees.
    assert!(a.session.pending_calls().await.is_empty());
    assert!(drain(a.session.resume()).await.is_empty());
    let saved = a.store.load(&id).unwrap();
    assert!(!cairn_engine::resume::has_pending_calls(&saved.messages));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_that_had_started_is_closed_not_run_twice() {
    let ws = tempfile::tempdir().unwrap();
    let crashed = tempfile::tempdir().unwrap();
    let id = crash_with_open_approval(ws.path(), crashed.path()).await;
    // The log says the first call had started when the process died.
    let log = crashed
        .path()
        .join("sessions")
        .join(&id)
        .join("events.jsonl");
    let started = json!({"type": "tool_started", "data": {"taskId": "t", "reqId": "call_w1", "name": "write_file"}});
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(&format!("{started}\n"));
    std::fs::write(&log, text).unwrap();

    let llm = FakeLlm::new(vec![FakeReply::text("ok")]);
    let approver = ScriptedApprover::new(Vec::new(), ApprovalDecision::Once);
    let a = reopen(
        ws.path(),
        crashed.path(),
        &id,
        llm.clone(),
        Arc::new(approver.clone()),
    )
    .await;
    let events = drain(a.session.resume()).await;
    // The call closed without running ends in the event stream too, right after turn_start.
    assert!(matches!(&events[0], Event::TurnStart(_)), "{events:?}");
    assert!(
        matches!(&events[1], Event::ToolFinished(f) if f.req_id == "call_w1"
            && f.status == ToolStatus::Interrupted
            && f.reason.as_deref().is_some_and(|r| r.contains("not run again"))),
        "{:?}",
        events[1]
    );
    let asked: Vec<String> = approver.seen().into_iter().map(|r| r.req_id).collect();
    assert_eq!(asked, vec!["call_w2"]);
    assert!(!ws.path().join("one.txt").exists());
    assert!(ws.path().join("two.txt").exists());
    let req = &llm.requests()[0];
    let first = req.messages.iter().find_map(|m| match m {
        Message::Tool(r) if r.call_id == "call_w1" => Some(r.status),
        _ => None,
    });
    assert_eq!(first, Some(ToolStatus::Interrupted));
}

#[tokio::test(flavor = "multi_thread")]
async fn new_input_instead_of_resume_closes_the_open_calls() {
    let ws = tempfile::tempdir().unwrap();
    let crashed = tempfile::tempdir().unwrap();
    let id = crash_with_open_approval(ws.path(), crashed.path()).await;
    let llm = FakeLlm::new(vec![FakeReply::text("fine")]);
    let approver = ScriptedApprover::new(Vec::new(), ApprovalDecision::Once);
    let a = reopen(
        ws.path(),
        crashed.path(),
        &id,
        llm.clone(),
        Arc::new(approver.clone()),
    )
    .await;
    let events = drain(a.session.run("never mind")).await;
    assert!(matches!(events.last(), Some(Event::TurnEnd(t)) if t.status == TurnStatus::Completed));
    // Both closed calls end in the event stream, after turn_start.
    assert!(matches!(&events[0], Event::TurnStart(_)), "{events:?}");
    let closed: Vec<(String, ToolStatus)> = events[1..3]
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished(f) => Some((f.req_id.clone(), f.status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        closed,
        vec![
            ("call_w1".to_string(), ToolStatus::Interrupted),
            ("call_w2".to_string(), ToolStatus::Interrupted)
        ]
    );
    assert!(approver.seen().is_empty());
    assert!(!ws.path().join("one.txt").exists());
    let msgs = &llm.requests()[0].messages;
    let mut repaired = msgs.clone();
    assert_eq!(
        cairn_engine::repair_history(&mut repaired),
        0,
        "history sent was valid"
    );
    let statuses: Vec<ToolStatus> = msgs
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.status),
            _ => None,
        })
        .collect();
    assert_eq!(
        statuses,
        vec![ToolStatus::Interrupted, ToolStatus::Interrupted]
    );
    assert!(matches!(msgs.last(), Some(m @ Message::User { .. }) if m.text() == "never mind"));
}
