//! Conversation rewind through the session store: the truncated history is saved, survives
//! reopening, the removed turns are archived in `rewind-*.json`, and the event log (what the
//! desktop transcript is rebuilt from) keeps only the kept turns.

use crate::common;
use common::opts;

use std::path::Path;
use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{EventStream, FixedApprover, RewindError};
use cairn_protocol::{ApprovalDecision, Event, Message};
use cairn_runtime::{open_session, Assembled, SessionStore};

fn open(ws: &Path, state: &Path, id: Option<String>, llm: &FakeLlm) -> Assembled {
    open_session(
        opts(ws, state, id),
        Some(Arc::new(llm.clone())),
        Arc::new(FixedApprover(ApprovalDecision::Deny)),
    )
    .unwrap()
}

async fn drain(mut s: EventStream) {
    while s.recv().await.is_some() {}
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages.iter().skip(1).map(|m| m.text()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rewind_is_saved_archived_and_survives_reopening() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let llm = FakeLlm::new(vec![
        FakeReply::text("reply one"),
        FakeReply::text("reply two"),
        FakeReply::text("reply three"),
    ]);
    let a = open(ws.path(), state.path(), None, &llm);
    let id = a.session.id();
    drain(a.session.run("first")).await;
    drain(a.session.run("second")).await;
    let r = a.session.rewind_to_turn(1).unwrap();
    assert_eq!(r.removed_turns, vec![2]);

    let store = SessionStore::new(state.path());
    let saved = store.load(&id).unwrap();
    assert_eq!(texts(&saved.messages), vec!["first", "reply one"]);
    assert_eq!(saved.turn_marks.len(), 1);
    // The log holds turn 1 only; turn 2's events are in the archive with its messages.
    let starts: Vec<u32> = store
        .read_events(&id)
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::TurnStart(t) => Some(t.turn),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![1]);
    let dir = store.session_dir(&id).unwrap();
    let archives = cairn_runtime::rewind::archives(&dir);
    assert_eq!(archives.len(), 1);
    let archive: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&archives[0]).unwrap()).unwrap();
    assert_eq!(archive["rewoundToTurn"], 1);
    let kept: Vec<Message> = serde_json::from_value(archive["messages"].clone()).unwrap();
    assert_eq!(
        kept.iter().map(|m| m.text()).collect::<Vec<_>>(),
        vec!["second", "reply two"]
    );
    assert!(archive["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["type"] == "turn_start" && e["data"]["turn"] == 2));
    a.close_mcp().await;
    drop(a);

    // Reopened as a new process would: the kept history, and the next turn builds on it.
    let b = open(ws.path(), state.path(), Some(id.clone()), &llm);
    assert_eq!(
        texts(&b.session.messages().await),
        vec!["first", "reply one"]
    );
    drain(b.session.run("third")).await;
    let last = llm.requests().pop().unwrap();
    assert_eq!(texts(&last.messages), vec!["first", "reply one", "third"]);
    // The event log keeps appending after the cut.
    let starts: Vec<u32> = store
        .read_events(&id)
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            Event::TurnStart(t) => Some(t.turn),
            _ => None,
        })
        .collect();
    assert_eq!(starts, vec![1, 3]);
    assert_eq!(
        b.session.rewind_to_turn(2),
        Err(RewindError::Unavailable { turn: 2 })
    );
    b.close_mcp().await;
}
