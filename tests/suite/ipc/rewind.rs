//! `rewind_conversation` through IPC: bad turn numbers are clear errors that change nothing,
//! a running turn refuses it, and a rewind keeps turn 1 only (view, saved session, and the
//! next request the mock LLM receives).

use super::*;

fn starts(view: &Value) -> Vec<u64> {
    view["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "turn_start")
        .map(|e| e["data"]["turn"].as_u64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewinding_the_conversation_refuses_bad_turns_and_running_turns_and_keeps_turn_one() {
    let server = MockLlmServer::with_script(vec![
        Reply::text("Answer ONE."),
        Reply::text("Answer TWO."),
        // A command that writes: read-only ones run unasked inside the sandbox.
        Reply::tool_call("call_s1", "run_shell", json!({"command": "touch hi.txt"})),
        Reply::text("Answer THREE."),
        Reply::text("Answer FOUR."),
    ])
    .await
    .unwrap();
    let env = env_for(&server);
    tokio::task::block_in_place(|| {
        let h = harness(&refs(&env), ApprovalHost::Ui);
        let none = invoke(&h.window, "rewind_conversation", json!({"turn": 1})).unwrap_err();
        assert!(none.contains("No session"), "{none}");
        let id = open_new_session(&h);
        for (i, text) in ["Question one", "Question two"].iter().enumerate() {
            let end = ok(
                &h.window,
                "run_turn",
                json!({"text": text, "onEvent": format!("__CHANNEL__:{}", 20 + i)}),
            );
            assert_eq!(end["status"], "completed", "{end}");
        }

        // Bad turn numbers: clear errors, nothing changes.
        for (body, needle) in [
            (json!({"turn": 0}), "no turn 0"),
            (json!({"turn": 3}), "no turn 3"),
            (json!({"turn": 4294967295u64}), "no turn 4294967295"),
            (json!({"turn": -1}), "turn"),
            (json!({"turn": 4294967296u64}), "turn"),
            (json!({"turn": "one"}), "turn"),
            (json!({}), "turn"),
        ] {
            let err = invoke(&h.window, "rewind_conversation", body.clone()).unwrap_err();
            assert!(err.contains(needle), "{body}: {err}");
        }
        let store = cairn_runtime::SessionStore::new(h.state_dir.path());
        assert_eq!(
            store.load(&id).unwrap().messages.len(),
            5,
            "nothing changed"
        );

        // While a turn runs (waiting for an approval) a rewind is refused.
        let w = h.window.clone();
        let run = std::thread::spawn(move || {
            invoke(
                &w,
                "run_turn",
                json!({"text": "Question three", "onEvent": "__CHANNEL__:30"}),
            )
        });
        wait_for("the approval", || !pending_approvals(&h).is_empty());
        let busy = invoke(&h.window, "rewind_conversation", json!({"turn": 1})).unwrap_err();
        assert!(busy.contains("A turn is running"), "{busy}");
        ok(
            &h.window,
            "answer_approval",
            json!({"reqId": "call_s1", "decision": "deny"}),
        );
        run.join().unwrap().unwrap();

        // Rewind to turn 1: the view's transcript, the saved session and the next request
        // hold turn 1 only; the removed turns are archived.
        let r = ok(&h.window, "rewind_conversation", json!({"turn": 1}));
        assert_eq!(r["turn"], 1);
        assert_eq!(r["removedTurns"], json!([2, 3]));
        let archive = r["archive"].as_str().unwrap();
        let kept = std::fs::read_to_string(archive).unwrap();
        assert!(kept.contains("Question two") && kept.contains("Answer TWO."));
        assert_eq!(starts(&r["session"]), vec![1]);
        // The timeline lists what the rewind removed, each turn with its input and answer.
        let timeline = ok(&h.window, "session_timeline", json!({}));
        let rewinds = timeline["rewinds"].as_array().unwrap();
        assert_eq!(rewinds.len(), 1, "{timeline}");
        assert_eq!(rewinds[0]["rewoundToTurn"], 1);
        assert!(archive.ends_with(rewinds[0]["file"].as_str().unwrap()));
        let removed = rewinds[0]["turns"].as_array().unwrap();
        assert_eq!(
            removed
                .iter()
                .map(|t| t["turn"].clone())
                .collect::<Vec<_>>(),
            [json!(2), json!(3)]
        );
        assert_eq!(removed[0]["input"], "Question two");
        assert!(
            removed[0]["reply"]
                .as_str()
                .unwrap()
                .contains("Answer TWO."),
            "{timeline}"
        );
        let saved = store.load(&id).unwrap();
        assert!(!serde_json::to_string(&saved.messages)
            .unwrap()
            .contains("Question two"));
        let end = ok(
            &h.window,
            "run_turn",
            json!({"text": "Question four", "onEvent": "__CHANNEL__:31"}),
        );
        assert_eq!(end["status"], "completed", "{end}");
        let last = server.requests().last().unwrap().body.to_string();
        assert!(
            last.contains("Question one") && last.contains("Answer ONE."),
            "{last}"
        );
        assert!(
            !last.contains("Question two") && !last.contains("Answer TWO."),
            "{last}"
        );
        assert!(!last.contains("Question three"), "{last}");
        let reopened = ok(&h.window, "open_session", json!({"id": id}));
        assert_eq!(starts(&reopened), vec![1, 4]);
    });
}
