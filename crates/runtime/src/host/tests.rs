//! The host's turn slots and live state with real sessions (the engine's fake LLM): two
//! sessions under a limit of one run one after the other, the second visibly queued.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_protocol::{ApprovalDecision, Mode, TurnStatus};
use serde_json::json;

use super::view::{activity, SessionActivity};
use super::{Answerer, Host, OpenSession, Prompt, RunOutcome, SessionHandle, Submission};
use crate::assemble::RunOptions;
use crate::checkpoints::VcsMode;
use crate::llm_setup::LlmSetup;

fn spec(ws: &std::path::Path, state: &std::path::Path, script: Vec<FakeReply>) -> OpenSession {
    OpenSession {
        options: RunOptions {
            workspace: Some(ws.to_path_buf()),
            state_dir: Some(state.to_path_buf()),
            model: Some("mock-model".into()),
            mode: Some(Mode::Interactive),
            vcs: VcsMode::Off,
            ..Default::default()
        },
        llm: Some(LlmSetup {
            client: Arc::new(FakeLlm::new(script)),
            provider: "openai".into(),
            model: "mock-model".into(),
            blocked: None,
        }),
        answerer: Answerer::waiting(),
        terminals: None,
    }
}

fn run(h: &Arc<SessionHandle>, text: &str) -> tokio::task::JoinHandle<RunOutcome> {
    let h = h.clone();
    let text = text.to_string();
    tokio::spawn(async move {
        let Submission::Turn(turn) = h.submit(Prompt::text(text)).await.unwrap() else {
            panic!("not a turn")
        };
        h.run(turn, Duration::from_millis(5), |_| Ok::<(), ()>(()))
            .await
            .unwrap()
    })
}

/// Waits (on the host's change signal) until `f` holds.
async fn until(host: &Host, what: &str, f: impl Fn() -> bool) {
    let mut changes = host.changes();
    let wait = async {
        while !f() {
            changes.changed().await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(20), wait)
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"));
}

fn completed(o: &RunOutcome) -> bool {
    matches!(
        o,
        RunOutcome::Ended {
            status: TurnStatus::Completed,
            ..
        }
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_one_slot_the_second_session_waits_queued_until_the_first_ends() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let host = Host::new();
    host.turn_slots(state.path()).set_limit(1).unwrap();
    let a = host
        .open(spec(
            ws.path(),
            state.path(),
            vec![
                FakeReply::tool("c1", "run_shell", json!({"command": "touch made.txt"})),
                FakeReply::text("a done"),
            ],
        ))
        .unwrap();
    let b = host
        .open(spec(
            ws.path(),
            state.path(),
            vec![FakeReply::text("b done")],
        ))
        .unwrap();

    // A holds the only slot while it waits for its approval.
    let a_run = run(&a, "run something");
    until(&host, "A's approval", || {
        matches!(activity(&a), SessionActivity::Approval { waiting: 1 })
    })
    .await;
    // B waits for the slot, and says so.
    let b_run = run(&b, "hello");
    until(&host, "B queued", || {
        matches!(activity(&b), SessionActivity::Queued { .. })
    })
    .await;
    assert_eq!(
        activity(&b),
        SessionActivity::Queued {
            running: 1,
            limit: 1
        }
    );
    assert!(!b_run.is_finished());

    // A ends: B gets the slot and runs to its end.
    let req = a.pending().pending_approvals().pop().unwrap();
    assert!(a.answer_approval(&req, ApprovalDecision::Once));
    let a_out = a_run.await.unwrap();
    assert!(completed(&a_out), "{a_out:?}");
    let b_out = tokio::time::timeout(Duration::from_secs(20), b_run)
        .await
        .unwrap()
        .unwrap();
    assert!(completed(&b_out), "{b_out:?}");
    assert_eq!(activity(&a), SessionActivity::Idle);
    assert_eq!(activity(&b), SessionActivity::Idle);
    assert_eq!(host.turn_slots(state.path()).running(), 0);
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_a_queued_turn_ends_it_without_running() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let host = Host::new();
    let slots = host.turn_slots(state.path());
    slots.set_limit(1).unwrap();
    let held = slots.try_acquire().unwrap().unwrap();
    let b = host
        .open(spec(
            ws.path(),
            state.path(),
            vec![FakeReply::text("never")],
        ))
        .unwrap();
    let b_run = run(&b, "hello");
    until(&host, "B queued", || b.queued().is_some()).await;
    b.interrupt();
    let out = b_run.await.unwrap();
    assert_eq!(
        out,
        RunOutcome::Ended {
            status: TurnStatus::Interrupted,
            turns: 0,
            steering_turns: 0
        }
    );
    assert!(b.queued().is_none());
    assert_eq!(b.saved().turns, 0);
    drop(held);
    host.shutdown().await;
}

/// The approval timeout is the host's, for every face: a request nobody answers is denied
/// when it passes, saying why, and the call does not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_nobody_answers_is_denied_when_the_timeout_passes() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let host = Host::new();
    let mut open = spec(
        ws.path(),
        state.path(),
        vec![
            cairn_engine::testing::FakeReply::tool(
                "c1",
                "write_file",
                json!({"path": "a.txt", "content": "x"}),
            ),
            FakeReply::text("done"),
        ],
    );
    open.options.approval_timeout = Some(Duration::from_secs(1));
    let h = host.open(open).unwrap();
    let Submission::Turn(turn) = h.submit(Prompt::text("write it")).await.unwrap() else {
        panic!("not a turn")
    };
    let events = std::sync::Mutex::new(Vec::new());
    let out = h
        .run(turn, Duration::from_millis(5), |e| {
            events
                .lock()
                .unwrap()
                .push(serde_json::to_value(&e).unwrap());
            Ok::<(), ()>(())
        })
        .await
        .unwrap();
    assert!(completed(&out), "{out:?}");
    let events = events.into_inner().unwrap();
    assert!(
        events.iter().any(|e| e["type"] == "permission_required"),
        "it asked"
    );
    let finished = events
        .iter()
        .find(|e| e["type"] == "tool_finished")
        .unwrap();
    assert_eq!(finished["data"]["status"], "denied", "{finished}");
    assert!(
        finished.to_string().contains("no answer within 1 s"),
        "{finished}"
    );
    assert!(!ws.path().join("a.txt").exists());
    host.shutdown().await;
}
