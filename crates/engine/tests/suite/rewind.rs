//! Conversation rewind: the history goes back to right after a turn, the next request sends
//! only that, hooks see what is removed (and can cancel), and a running turn refuses it.

use crate::common;

use std::sync::{Arc, Mutex};

use cairn_engine::rewind::RewindSnapshot;
use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{EngineHook, RewindError, Session, StateSnapshot, ToolRegistry, TurnMark};
use cairn_protocol::{Event, Message, Mode};
use common::*;

/// A saved state: history and turn marks.
type Saved = (Vec<Message>, Vec<TurnMark>);
/// A rewind seen by the hook: turn, removed texts, removed turns.
type Seen = (u32, Vec<String>, Vec<u32>);

/// Records the saved states and rewinds; refuses rewinds when `refuse` is set.
#[derive(Default)]
struct Recorder {
    states: Mutex<Vec<Saved>>,
    rewinds: Mutex<Vec<Seen>>,
    refuse: bool,
}

impl EngineHook for Recorder {
    fn on_event(&self, _: &Event) {}
    fn on_state(&self, s: &StateSnapshot<'_>) {
        let mut states = self.states.lock().unwrap();
        states.push((s.messages.to_vec(), s.turn_marks.to_vec()));
    }
    fn on_rewind(&self, r: &RewindSnapshot<'_>) -> Result<(), String> {
        if self.refuse {
            return Err("disk full".into());
        }
        let texts = r.removed.iter().map(|m| m.text()).collect();
        let mut rewinds = self.rewinds.lock().unwrap();
        rewinds.push((r.turn, texts, r.removed_turns.to_vec()));
        Ok(())
    }
}

fn with_hook(dir: &TempDir, llm: &FakeLlm, hook: Arc<Recorder>) -> Session {
    Session::builder(config(dir, Mode::Interactive), Arc::new(llm.clone()))
        .tools(ToolRegistry::new())
        .hook(hook)
        .build()
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages.iter().skip(1).map(|m| m.text()).collect()
}

#[tokio::test]
async fn rewinding_keeps_turn_one_and_the_next_request_sends_only_that() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::text("reply one"),
        FakeReply::text("reply two"),
        FakeReply::text("reply three"),
    ]);
    let hook = Arc::new(Recorder::default());
    let s = with_hook(&dir, &llm, hook.clone());
    collect(s.run("first")).await;
    collect(s.run("second")).await;
    assert_eq!(s.turn_marks().await.len(), 2);

    let r = s.rewind_to_turn(1).unwrap();
    assert_eq!(r.turn, 1);
    assert_eq!(
        texts(&[vec![Message::system("")], r.removed.clone()].concat()),
        vec!["second", "reply two"]
    );
    assert_eq!(r.removed_turns, vec![2]);
    assert_eq!(texts(&s.messages().await), vec!["first", "reply one"]);
    // The hook saw the removed turns first, then the truncated state was saved.
    let rewinds = hook.rewinds.lock().unwrap().clone();
    assert_eq!(
        rewinds,
        vec![(
            1,
            vec!["second".to_string(), "reply two".to_string()],
            vec![2]
        )]
    );
    let (saved, marks) = hook.states.lock().unwrap().last().cloned().unwrap();
    assert_eq!(texts(&saved), vec!["first", "reply one"]);
    assert_eq!(marks.iter().map(|m| m.turn).collect::<Vec<_>>(), vec![1]);

    // Turn numbers are not reused; the model sees only turn 1 and the new input.
    let ev = collect(s.run("third")).await;
    match &ev[0] {
        Event::TurnStart(t) => assert_eq!(t.turn, 3),
        _ => unreachable!(),
    }
    let reqs = llm.requests();
    let last = reqs.last().unwrap();
    assert_eq!(texts(&last.messages), vec!["first", "reply one", "third"]);
    // Turn 2 is gone for good from this history: rewinding to it is refused.
    assert_eq!(
        s.rewind_to_turn(2),
        Err(RewindError::Unavailable { turn: 2 })
    );
    assert_eq!(
        s.rewind_to_turn(4),
        Err(RewindError::UnknownTurn { turn: 4, turns: 3 })
    );
    assert_eq!(
        s.rewind_to_turn(0),
        Err(RewindError::UnknownTurn { turn: 0, turns: 3 })
    );
}

#[tokio::test]
async fn a_hook_error_cancels_the_rewind_and_keeps_the_history() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::text("a"), FakeReply::text("b")]);
    let hook = Arc::new(Recorder {
        refuse: true,
        ..Recorder::default()
    });
    let s = with_hook(&dir, &llm, hook);
    collect(s.run("first")).await;
    collect(s.run("second")).await;
    let before = s.messages().await;
    match s.rewind_to_turn(1) {
        Err(RewindError::Hook(msg)) => assert!(msg.contains("disk full")),
        other => panic!("expected a hook error, got {other:?}"),
    }
    assert_eq!(s.messages().await, before);
    assert_eq!(s.turn_marks().await.len(), 2);
}

#[tokio::test]
async fn a_running_turn_refuses_a_rewind() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::text("a"), FakeReply::Hang(vec![])]);
    let hook = Arc::new(Recorder::default());
    let s = with_hook(&dir, &llm, hook.clone());
    collect(s.run("first")).await;
    let running = s.run("second");
    // The hanging turn has started once its request reached the model.
    for _ in 0..200 {
        if llm.requests().len() == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(s.rewind_to_turn(1), Err(RewindError::Busy));
    assert!(hook.rewinds.lock().unwrap().is_empty());
    s.interrupt();
    collect(running).await;
    assert!(s.rewind_to_turn(1).is_ok());
}

#[tokio::test]
async fn restored_marks_survive_a_rebuild_and_shift_with_an_inserted_system_prompt() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::text("a"), FakeReply::text("b")]);
    let s = with_hook(&dir, &llm, Arc::new(Recorder::default()));
    collect(s.run("first")).await;
    collect(s.run("second")).await;
    // A saved history without its system prompt gets one inserted: marks move with it.
    let messages: Vec<Message> = s.messages().await.into_iter().skip(1).collect();
    let marks: Vec<TurnMark> = s
        .turn_marks()
        .await
        .into_iter()
        .map(|m| TurnMark {
            messages: m.messages - 1,
            ..m
        })
        .collect();
    let again = Session::builder(config(&dir, Mode::Interactive), Arc::new(llm.clone()))
        .messages(messages)
        .turns(2)
        .turn_marks(marks)
        .build();
    again.rewind_to_turn(1).unwrap();
    assert_eq!(texts(&again.messages().await), vec!["first", "a"]);
}
