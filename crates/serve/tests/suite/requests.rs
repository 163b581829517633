//! Suspended approvals and questions: listed, answered by requestId, timed out.

use std::time::Duration;

use cairn_testkit::Reply;
use serde_json::{json, Value};

use super::harness::{eventually, read_all, Server};

fn shell(id: &str, command: &str) -> Reply {
    Reply::tool_call(id, "run_shell", json!({"command": command}))
}

#[tokio::test]
async fn an_approval_waits_for_a_client_and_is_answered_by_its_request_id() {
    let s = Server::start(|_| {}).await;
    s.mock.push(shell("c1", "echo hi > made.txt"));
    s.mock.push(Reply::text("done"));
    let id = s.session("interactive").await;
    let run = s.message(&id, "make it").await;
    let path = format!("/v1/sessions/{id}/approvals");
    assert!(
        eventually(|| async {
            s.get_json(&path).await["approvals"]
                .as_array()
                .unwrap()
                .len()
                == 1
        })
        .await
    );
    let list = s.get_json(&path).await;
    let a = &list["approvals"][0];
    assert_eq!(a["name"], "run_shell");
    assert_eq!(a["reqId"], "c1");
    assert!(a["askedAt"].as_str().unwrap().ends_with('Z'));
    assert!(a["expiresAt"].is_string());
    let request_id = a["requestId"].as_str().unwrap().to_string();
    assert_eq!(
        s.get_json(&format!("/v1/sessions/{id}")).await["state"],
        "waiting"
    );
    let pending = s.get_json("/v1/pending").await;
    assert_eq!(pending["approvals"][0]["sessionId"], id.as_str());
    assert_eq!(pending["approvals"][0]["requestId"], request_id.as_str());
    // Unknown ids and kinds.
    let r = s
        .post(
            &format!("/v1/sessions/{id}/approvals/rq_nope"),
            json!({"decision": "once"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "not_pending"
    );
    let r = s
        .post(
            &format!("/v1/sessions/{id}/approvals/{request_id}"),
            json!({"decision": "maybe"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = s
        .post(
            &format!("/v1/sessions/{id}/approvals/{request_id}"),
            json!({"decision": "once"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap(), json!({"answered": true}));
    let events = read_all(run).await;
    let asked = events
        .iter()
        .find(|e| e.event == "permission_required")
        .unwrap();
    assert_eq!(asked.data["data"]["requestId"], request_id.as_str());
    let fin = events.iter().find(|e| e.event == "tool_finished").unwrap();
    assert_eq!(fin.data["data"]["status"], "ok", "{:?}", fin.data);
    assert!(s.ws.path().join("made.txt").exists());
    // Answered: no longer pending.
    let r = s
        .post(
            &format!("/v1/sessions/{id}/approvals/{request_id}"),
            json!({"decision": "once"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test]
async fn an_unanswered_approval_is_denied_at_the_timeout_and_the_turn_goes_on() {
    let s = Server::start(|c| c.approval_timeout = Duration::from_secs(1)).await;
    s.mock.push(shell("c2", "echo hi > nope.txt"));
    s.mock.push(Reply::text("ok, not done"));
    let id = s.session("interactive").await;
    let r = s
        .post(
            &format!("/v1/sessions/{id}/messages"),
            json!({"text": "try", "detach": true}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let events = s
        .get(&format!("/v1/sessions/{id}/events?from=start"))
        .send()
        .await
        .unwrap();
    let seen =
        super::harness::read_until(events, |got| got.iter().any(|e| e.event == "run_end")).await;
    let fin = seen.iter().find(|e| e.event == "tool_finished").unwrap();
    assert_eq!(fin.data["data"]["status"], "denied");
    assert!(
        fin.data["data"]["reason"]
            .as_str()
            .unwrap()
            .contains("no answer within 1 s"),
        "{:?}",
        fin.data
    );
    let end = seen.iter().find(|e| e.event == "turn_end").unwrap();
    assert_eq!(end.data["data"]["status"], "completed");
    assert!(!s.ws.path().join("nope.txt").exists());
}

#[tokio::test]
async fn always_grants_only_a_session_allowance_and_deny_sessions_never_wait() {
    let s = Server::start(|_| {}).await;
    // A command with operators offers no allowance.
    s.mock.push(shell("c3", "echo a && echo b"));
    s.mock.push(Reply::text("done"));
    let id = s.session("interactive").await;
    let run = s.message(&id, "go").await;
    let path = format!("/v1/sessions/{id}/approvals");
    assert!(
        eventually(|| async {
            !s.get_json(&path).await["approvals"]
                .as_array()
                .unwrap()
                .is_empty()
        })
        .await
    );
    let rid = s.get_json(&path).await["approvals"][0]["requestId"]
        .as_str()
        .unwrap()
        .to_string();
    let r = s
        .post(&format!("{path}/{rid}"), json!({"decision": "always"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "no_allowance"
    );
    let r = s
        .post(&format!("{path}/{rid}"), json!({"decision": "deny"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = read_all(run).await;
    let fin = events.iter().find(|e| e.event == "tool_finished").unwrap();
    assert_eq!(fin.data["data"]["status"], "denied");

    // approve: deny: nothing waits, allow rules still pass.
    s.mock.push(shell("c4", "touch denied.txt"));
    s.mock.push(shell("c5", "touch allowed.txt"));
    s.mock.push(Reply::text("done"));
    let r = s
        .post(
            "/v1/sessions",
            json!({"workspace": s.ws.path(), "approve": "deny", "allowCommands": ["touch allowed.txt"]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let worker = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let events = s.turn(&worker, "work").await;
    let fins: Vec<_> = events
        .iter()
        .filter(|e| e.event == "tool_finished")
        .collect();
    assert_eq!(fins[0].data["data"]["status"], "denied");
    assert_eq!(fins[1].data["data"]["status"], "ok");
    assert!(s.ws.path().join("allowed.txt").exists());
    assert!(!s.ws.path().join("denied.txt").exists());
}

#[tokio::test]
async fn a_question_is_answered_by_its_request_id_with_its_kinds_type() {
    let s = Server::start(|_| {}).await;
    s.mock.push(Reply::tool_call(
        "q1",
        "ask_user",
        json!({"question": "which?", "options": ["a", "b"]}),
    ));
    s.mock.push(Reply::text("thanks"));
    let id = s.session("interactive").await;
    let run = s.message(&id, "ask me").await;
    let path = format!("/v1/sessions/{id}/questions");
    let q = s.first_pending(&path, "questions").await;
    assert_eq!(q["kind"], "question");
    assert_eq!(q["question"], "which?");
    let rid = q["requestId"].as_str().unwrap().to_string();
    assert_eq!(
        s.get_json("/v1/pending").await["questions"][0]["sessionId"],
        id.as_str()
    );
    let r = s
        .post(&format!("{path}/{rid}"), json!({"kind": "accepted"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "another kind's body");
    let r = s
        .post(
            &format!("{path}/{rid}"),
            json!({"kind": "answered", "selected": ["b"], "text": ""}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = read_all(run).await;
    let fin = events.iter().find(|e| e.event == "tool_finished").unwrap();
    assert_eq!(fin.data["data"]["status"], "ok");
    let sent = s.mock.requests().last().unwrap().body.to_string();
    assert!(sent.contains('b'), "{sent}");
}

#[tokio::test]
async fn a_plan_review_is_a_question_of_kind_plan_and_attachments_reach_the_model() {
    let s = Server::start(|_| {}).await;
    std::fs::write(s.ws.path().join("notes.txt"), "the notes say 7").unwrap();
    s.mock.push(Reply::tool_call(
        "p1",
        "propose_plan",
        json!({"plan": "1. do it"}),
    ));
    s.mock.push(Reply::text("planned"));
    let id = s.session("plan").await;
    let run = s
        .post(
            &format!("/v1/sessions/{id}/messages"),
            json!({"text": "plan it", "attachments": [{"path": "notes.txt"}]}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(run.status(), 200);
    let path = format!("/v1/sessions/{id}/questions");
    let q = s.first_pending(&path, "questions").await;
    assert_eq!(q["kind"], "plan");
    assert_eq!(q["plan"], "1. do it");
    let rid = q["requestId"].as_str().unwrap().to_string();
    let r = s
        .post(
            &format!("{path}/{rid}"),
            json!({"kind": "answered", "selected": []}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400, "a question's answer for a plan");
    let r = s
        .post(&format!("{path}/{rid}"), json!({"kind": "accepted"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let events = read_all(run).await;
    assert_eq!(events.last().unwrap().event, "run_end");
    let first = s.mock.requests()[0].body.to_string();
    assert!(
        first.contains("the notes say 7"),
        "the attached file was sent: {first}"
    );
}

#[tokio::test]
async fn always_is_this_sessions_allowance_only_and_outlives_a_restart() {
    let mut s = Server::start(|_| {}).await;
    s.mock.push(shell("c1", "touch one.txt"));
    s.mock.push(Reply::text("done"));
    let id = s.session("interactive").await;
    let run = s.message(&id, "one").await;
    let path = format!("/v1/sessions/{id}/approvals");
    let a = s.first_pending(&path, "approvals").await;
    assert_eq!(
        a["alwaysAllow"],
        json!({"kind": "command", "program": "touch"}),
        "{a}"
    );
    let rid = a["requestId"].as_str().unwrap();
    let r = s
        .post(&format!("{path}/{rid}"), json!({"decision": "always"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    read_all(run).await;
    assert!(s.ws.path().join("one.txt").exists());
    // Another session still asks: the allowance is this session's.
    // (Its run is still waiting when the server stops: the stop denies and interrupts it.)
    s.mock.push(shell("c2", "touch other.txt"));
    let other = s.session("interactive").await;
    let r = s
        .post(
            &format!("/v1/sessions/{other}/messages"),
            json!({"text": "other", "detach": true}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
    let other_path = format!("/v1/sessions/{other}/approvals");
    assert!(
        eventually(|| async {
            !s.get_json(&other_path).await["approvals"]
                .as_array()
                .unwrap()
                .is_empty()
        })
        .await,
        "the other session asks"
    );
    s.stop().await;
    // After a restart the session keeps its allowance: touch runs unasked.
    let cfg = super::harness::config(&s.mock, s.dir.path(), s.state.path());
    let running = cairn_serve::start(cfg).await.unwrap();
    s.base = format!("http://{}", running.listen);
    s.running = Some(running);
    s.mock.push(shell("c3", "touch two.txt"));
    s.mock.push(Reply::text("done"));
    let events = s.turn(&id, "two").await;
    assert!(!events.iter().any(|e| e.event == "permission_required"));
    let fin = events
        .iter()
        .find(|e| e.event == "tool_finished")
        .unwrap_or_else(|| {
            panic!(
                "{:?}",
                events
                    .iter()
                    .map(|e| e.data.to_string())
                    .collect::<Vec<_>>()
            )
        });
    assert_eq!(fin.data["data"]["status"], "ok");
    assert!(s.ws.path().join("two.txt").exists());
    s.stop().await;
}
