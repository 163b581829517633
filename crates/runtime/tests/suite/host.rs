//! One host, several sessions: each runs, waits and is answered on its own; closing one
//! leaves the others open.

use crate::common;
use common::opts;

use std::sync::Arc;
use std::time::Duration;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::EventStream;
use cairn_protocol::{ApprovalDecision, Event, TurnStatus};
use cairn_runtime::host::{Answerer, Host, HostError, OpenSession};
use cairn_runtime::llm_setup::LlmSetup;
use serde_json::json;

fn binding(script: Vec<FakeReply>) -> LlmSetup {
    LlmSetup {
        client: Arc::new(FakeLlm::new(script)),
        provider: "openai".into(),
        model: "mock-model".into(),
        blocked: None,
    }
}

fn spec(ws: &std::path::Path, state: &std::path::Path, script: Vec<FakeReply>) -> OpenSession {
    OpenSession {
        options: opts(ws, state, None),
        llm: Some(binding(script)),
        answerer: Answerer::waiting(),
        terminals: None,
    }
}

async fn until(stream: &mut EventStream, pred: impl Fn(&Event) -> bool) -> Event {
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), stream.recv())
            .await
            .expect("an event in time")
            .expect("the stream is open");
        if pred(&e) {
            return e;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_of_one_host_run_wait_and_close_independently() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let host = Host::new();
    // A asks to run a command and waits for its approval; B only answers.
    let a = host
        .open(spec(
            ws.path(),
            state.path(),
            vec![
                FakeReply::tool("c1", "run_shell", json!({"command": "touch made.txt"})),
                FakeReply::text("done"),
            ],
        ))
        .unwrap();
    let b = host
        .open(spec(
            ws.path(),
            state.path(),
            vec![FakeReply::text("hello")],
        ))
        .unwrap();
    assert_ne!(a.id(), b.id());
    assert_eq!(host.sessions().len(), 2);

    let mut a_stream = super::start(&a, "make a file").await;
    let asked = until(&mut a_stream, |e| matches!(e, Event::PermissionRequired(_))).await;
    let Event::PermissionRequired(asked) = asked else {
        unreachable!()
    };
    // The request is parked right after its event.
    a.pending()
        .approvals_waiting()
        .wait_for(|n| *n == 1)
        .await
        .unwrap();
    assert_eq!(
        a.pending().pending_approvals(),
        std::slice::from_ref(&asked.req_id)
    );
    assert!(b.pending().pending_approvals().is_empty());

    // B runs to its end while A still waits: sessions never wait on each other.
    let b_out = b
        .run(
            super::turn(&b, "hi").await,
            Duration::from_millis(5),
            |_| Ok::<(), ()>(()),
        )
        .await
        .unwrap();
    assert!(
        matches!(
            b_out,
            cairn_runtime::host::RunOutcome::Ended {
                status: TurnStatus::Completed,
                ..
            }
        ),
        "{b_out:?}"
    );
    assert!(a.is_busy(), "A is still waiting for its approval");
    // The event's opaque requestId is what the request waits under.
    assert!(asked.request_id.starts_with("rq_"), "{asked:?}");
    assert_eq!(
        a.pending().pending_request_ids(),
        std::slice::from_ref(&asked.request_id)
    );
    // An answer for A's request given to B reaches nothing.
    let once = || cairn_runtime::host::RequestAnswer::Approval(ApprovalDecision::Once);
    assert!(!b.answer(&asked.request_id, once()));
    assert!(!b.answer_approval(&asked.req_id, ApprovalDecision::Once));
    assert!(a.answer(&asked.request_id, once()));
    let end = until(&mut a_stream, |e| matches!(e, Event::TurnEnd(_))).await;
    let Event::TurnEnd(end) = end else {
        unreachable!()
    };
    assert_eq!(end.status, TurnStatus::Completed);
    assert!(ws.path().join("made.txt").exists());
    drop(a_stream);
    a.idle().await;
    // The history API pages what the session's log holds: here its one turn, whole.
    let page = a.history(None, 10).unwrap();
    assert_eq!((page.first, page.total), (0, 1));
    assert!(
        matches!(page.events.first(), Some(Event::TurnStart(t)) if t.input == "make a file"),
        "{:?}",
        page.events.first()
    );
    assert!(matches!(page.events.last(), Some(Event::TurnEnd(_))));

    // Closing A keeps B open; A can be opened again (its lock was let go), once.
    let a_id = a.id();
    assert!(host.close(&a_id).await.unwrap());
    assert!(a.is_closed() && !b.is_closed());
    assert_eq!(host.sessions().len(), 1);
    assert!(matches!(
        a.submit(cairn_runtime::host::Prompt::text("again")).await,
        Err(cairn_runtime::host::SubmitError::Host(HostError::Closed(_)))
    ));
    drop(a);
    let mut again = spec(ws.path(), state.path(), vec![FakeReply::text("back")]);
    again.options.session_id = Some(a_id.clone());
    let reopened = host.open(again).unwrap();
    assert_eq!(reopened.id(), a_id);
    let mut twice = spec(ws.path(), state.path(), vec![]);
    twice.options.session_id = Some(a_id.clone());
    assert!(matches!(host.open(twice), Err(HostError::AlreadyOpen(_))));
    host.shutdown().await;
    assert!(host.sessions().is_empty() && b.is_closed() && reopened.is_closed());
}

/// Issue 44: `/model` re-assembles what depends on the model: a session on a 128k model
/// switched to an 8k one compacts at the new model's threshold.
#[tokio::test(flavor = "multi_thread")]
async fn a_model_switch_brings_the_new_models_context_window() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let host = Host::new();
    let mut s = spec(
        ws.path(),
        state.path(),
        vec![FakeReply::text("summary"), FakeReply::text("fine")],
    );
    s.options.model = Some("gpt-4o".into());
    if let Some(llm) = s.llm.as_mut() {
        llm.model = "gpt-4o".into();
    }
    let h = host.open(s).unwrap();
    assert_eq!(h.context_window(), 128_000);
    let done = h
        .submit(cairn_runtime::host::Prompt::text("/model gpt-4"))
        .await;
    assert!(
        matches!(done, Ok(cairn_runtime::host::Submission::Done(_))),
        "{done:?}"
    );
    assert_eq!(h.model(), "gpt-4");
    assert_eq!(h.context_window(), 8_192);
    // ~7,000 tokens: far under 128k, over the 8k model's thresholds.
    let big = "word ".repeat(7_000);
    let mut stream = super::start(&h, &big).await;
    // The next turn says what changed with the model (issue 44).
    let said = until(&mut stream, |e| matches!(e, Event::ModelSwitched(_))).await;
    let Event::ModelSwitched(m) = said else {
        unreachable!()
    };
    assert_eq!((m.model.as_str(), m.previous.as_str()), ("gpt-4", "gpt-4o"));
    assert_eq!(m.context_window, 8_192);
    assert!(!m.vision, "gpt-4 does not see images");
    assert!(m.tools_removed.contains(&"read_image".to_string()), "{m:?}");
    assert!(!m.task_id.is_empty(), "addressed to the turn");
    assert!(m.message.contains("8192"), "{}", m.message);
    let compacting = until(&mut stream, |e| matches!(e, Event::Compacting(_))).await;
    let Event::Compacting(c) = compacting else {
        unreachable!()
    };
    assert_eq!(c.context_window, 8_192);
    until(&mut stream, |e| matches!(e, Event::TurnEnd(_))).await;
}

/// A reply with `text` that used `tokens` output tokens.
fn costing(text: &str, tokens: u64) -> FakeReply {
    use cairn_engine::llm::{LlmChunk, LlmOutcome};
    FakeReply::Chunks(vec![
        LlmChunk::Text(text.to_string()),
        LlmChunk::Usage(cairn_protocol::TokenUsage {
            output_tokens: tokens,
            ..Default::default()
        }),
        LlmChunk::End(LlmOutcome::completed()),
    ])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_of_a_batch_stop_together_at_the_batchs_cap_and_raising_it_goes_on() {
    use cairn_runtime::host::budget::BudgetLimit;
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let host = Host::new();
    let a = host
        .open(spec(ws.path(), state.path(), vec![costing("a spent", 700)]))
        .unwrap();
    let b = host
        .open(spec(
            ws.path(),
            state.path(),
            vec![
                FakeReply::Chunks(vec![
                    cairn_engine::llm::LlmChunk::ToolCall(cairn_protocol::ToolCall {
                        id: "c1".into(),
                        name: "read_file".into(),
                        arguments: json!({"path": "missing.txt"}).to_string(),
                    }),
                    cairn_engine::llm::LlmChunk::Usage(cairn_protocol::TokenUsage {
                        output_tokens: 400,
                        ..Default::default()
                    }),
                    cairn_engine::llm::LlmChunk::End(cairn_engine::llm::LlmOutcome::completed()),
                ]),
                costing("b after the raise", 10),
            ],
        ))
        .unwrap();
    // One batch, one cap of 1,000 tokens: neither session has a cap of its own.
    let cap = BudgetLimit::Tokens(1_000);
    host.join_batch(&a, "batch-1", cap).unwrap();
    let joined = host
        .join_batch(&b, "batch-1", BudgetLimit::Tokens(5))
        .unwrap();
    assert_eq!(joined.sessions, 2, "{joined:?}");
    assert_eq!(joined.limit, Some(1_000.0), "the first member's cap holds");

    let ended = |out: cairn_runtime::host::RunOutcome| match out {
        cairn_runtime::host::RunOutcome::Ended { status, .. } => status,
        other => panic!("{other:?}"),
    };
    let run = |h: Arc<cairn_runtime::host::SessionHandle>, text: &'static str| async move {
        let mut errors = Vec::new();
        let out = h
            .run(super::turn(&h, text).await, Duration::from_millis(5), |e| {
                if let Event::Error(err) = &e {
                    errors.push(err.clone());
                }
                Ok::<(), ()>(())
            })
            .await
            .unwrap();
        (out, errors)
    };
    // A spends 700 of the batch's 1,000: under the cap.
    let (out, errors) = run(a.clone(), "spend").await;
    assert_eq!(ended(out), TurnStatus::Completed, "{errors:?}");
    // B's first request brings the batch to 1,100: its next request does not go out.
    let (out, errors) = run(b.clone(), "read it").await;
    assert_eq!(ended(out), TurnStatus::Error);
    let stop = errors.last().expect("an error event");
    assert_eq!(stop.error_type, "budget_exceeded", "{stop:?}");
    assert!(stop.error.contains("batch"), "{}", stop.error);
    let seen = b.budget();
    assert_eq!(
        (seen.sessions, seen.spent_tokens),
        (2, Some(1_100)),
        "{seen:?}"
    );

    // Raising the batch's cap from either session lets B go on.
    let raised = b.set_budget(BudgetLimit::Tokens(5_000)).unwrap();
    assert_eq!(raised.limit, Some(5_000.0));
    assert_eq!(a.budget().limit, Some(5_000.0), "one cap for the batch");
    let (out, errors) = run(b.clone(), "go on").await;
    assert_eq!(ended(out), TurnStatus::Completed, "{errors:?}");
}
