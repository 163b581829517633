//! A hook that cannot save the session: no tool runs after the failed save, the turn ends
//! with one `error` event (`save_failed`) and status `error`, and the next turn starts clean.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{EngineHook, Session, StateSnapshot, ToolRegistry};
use cairn_protocol::{Event, Mode, TurnStatus};
use serde_json::json;

use crate::common::*;

/// Saves fail from the `fail_from`-th state on (1-based), until `heal` says otherwise.
struct FailingStore {
    states: AtomicUsize,
    fail_from: usize,
    failure: Mutex<Option<String>>,
    heal_at: usize,
    ended: AtomicUsize,
}

impl FailingStore {
    fn new(fail_from: usize, heal_at: usize) -> Arc<Self> {
        Arc::new(FailingStore {
            states: AtomicUsize::new(0),
            fail_from,
            failure: Mutex::new(None),
            heal_at,
            ended: AtomicUsize::new(0),
        })
    }
}

impl EngineHook for FailingStore {
    fn on_event(&self, _: &Event) {}
    fn on_state(&self, _: &StateSnapshot<'_>) {
        let n = self.states.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.fail_from && n < self.heal_at {
            let mut f = self.failure.lock().unwrap();
            f.get_or_insert_with(|| format!("could not save the session: disk full (save {n})"));
        }
    }
    fn failure(&self) -> Option<String> {
        self.failure.lock().unwrap().clone()
    }
    fn end_turn(&self) -> Result<(), String> {
        self.ended.fetch_add(1, Ordering::SeqCst);
        match self.failure.lock().unwrap().take() {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }
}

fn session(dir: &TempDir, llm: &FakeLlm, hook: Arc<FailingStore>) -> Session {
    let mut reg = ToolRegistry::new();
    reg.register(write_tool());
    Session::builder(config(dir, Mode::Auto), Arc::new(llm.clone()))
        .tools(reg)
        .hook(hook)
        .build()
}

fn errors(ev: &[Event]) -> Vec<&cairn_protocol::ErrorEvent> {
    ev.iter()
        .filter_map(|e| match e {
            Event::Error(x) => Some(x),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn no_tool_runs_after_a_failed_save_and_the_turn_ends_with_error() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("w", "write_file", json!({"path": "a.txt", "content": "x"})),
        FakeReply::text("written"),
        FakeReply::text("next turn"),
    ]);
    // The input is saved; the save of the tool calls (before they run) fails.
    let hook = FailingStore::new(2, usize::MAX);
    let s = session(&dir, &llm, hook.clone());
    let ev = collect(s.run("write a")).await;
    assert!(!types(&ev).contains(&"tool_started"), "{:?}", types(&ev));
    assert!(!dir.0.join("a.txt").exists());
    assert_eq!(llm.requests().len(), 1, "no LLM call after the failed save");
    let errs = errors(&ev);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].error_type, "save_failed");
    assert!(
        errs[0].error.contains("disk full (save 2)"),
        "{}",
        errs[0].error
    );
    assert_eq!(turn_end(&ev).status, TurnStatus::Error);
    assert_eq!(types(&ev).last(), Some(&"turn_end"));
}

#[tokio::test]
async fn a_failed_save_is_sticky_for_its_turn_only() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::text("one"), FakeReply::text("two")]);
    // Only the input save of turn 1 fails; every later save works.
    let hook = FailingStore::new(1, 2);
    let s = session(&dir, &llm, hook.clone());
    let first = collect(s.run("first")).await;
    assert_eq!(turn_end(&first).status, TurnStatus::Error);
    assert_eq!(errors(&first).len(), 1);
    let second = collect(s.run("second")).await;
    assert_eq!(turn_end(&second).status, TurnStatus::Completed);
    assert!(errors(&second).is_empty());
    assert_eq!(hook.ended.load(Ordering::SeqCst), 2);
}
