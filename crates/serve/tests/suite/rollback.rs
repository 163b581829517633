//! History, turns, diff and restore over the API; read-only routes never lock a session.

use cairn_testkit::Reply;
use serde_json::{json, Value};

use super::harness::Server;

#[tokio::test]
async fn history_turns_diff_and_restore_work_and_reads_never_lock_the_session() {
    let s = Server::start(|_| {}).await;
    s.mock.push(Reply::tool_call(
        "w1",
        "write_file",
        json!({"path": "a.txt", "content": "one\n"}),
    ));
    s.mock.push(Reply::text("wrote it"));
    s.mock.push(Reply::text("just talk"));
    let id = s.session("auto").await;
    s.turn(&id, "write a").await;
    s.turn(&id, "say hi").await;
    assert_eq!(
        std::fs::read_to_string(s.ws.path().join("a.txt")).unwrap(),
        "one\n"
    );
    let r = s
        .post(&format!("/v1/sessions/{id}/close"), json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["state"], "closed");

    // Paged history, newest last.
    let page = s
        .get_json(&format!("/v1/sessions/{id}/messages?limit=1"))
        .await;
    let first = &page["messages"][0];
    assert_eq!(first["type"], "turn_start");
    assert_eq!(first["data"]["input"], "say hi");
    let before = page["before"].as_u64().unwrap();
    let older = s
        .get_json(&format!(
            "/v1/sessions/{id}/messages?limit=1&before={before}"
        ))
        .await;
    assert_eq!(older["messages"][0]["data"]["input"], "write a");
    assert_eq!(older["before"], Value::Null);
    let r = s
        .get(&format!("/v1/sessions/{id}/messages?limit=501"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);

    let turns = s.get_json(&format!("/v1/sessions/{id}/turns")).await;
    let rows = turns["turns"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{turns}");
    assert_eq!(rows[0]["turn"], 1);
    assert_eq!(rows[0]["files"], json!(["a.txt"]));
    let r = s
        .get(&format!("/v1/sessions/{id}/turns/1/diff"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(r.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/x-diff"));
    let diff = r.text().await.unwrap();
    assert!(diff.contains("+one"), "{diff}");
    let r = s
        .get(&format!("/v1/sessions/{id}/turns/9/diff"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "turn_not_found"
    );

    // None of these opened or locked the session: the CLI can take it now.
    let store = cairn_runtime::SessionStore::new(s.state.path());
    let lock = store.lock(&id).expect("the session is not locked");
    // While another process holds it, restore says so.
    let r = s
        .post(&format!("/v1/sessions/{id}/restore"), json!({"toTurn": 0}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "session_locked"
    );
    drop(lock);

    let r = s
        .post(
            &format!("/v1/sessions/{id}/restore"),
            json!({"toTurn": 0, "dryRun": true}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.json::<Value>().await.unwrap()["dryRun"], true);
    assert!(s.ws.path().join("a.txt").exists());
    let r = s
        .post(&format!("/v1/sessions/{id}/restore"), json!({"toTurn": 0}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let report: Value = r.json().await.unwrap();
    assert_eq!(report["deleted"], json!(["a.txt"]), "{report}");
    assert!(!s.ws.path().join("a.txt").exists());
    let r = s
        .post(
            &format!("/v1/sessions/{id}/restore"),
            json!({"recover": "finish"}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 409);
    assert_eq!(
        r.json::<Value>().await.unwrap()["error"]["code"],
        "nothing_to_recover"
    );
    let r = s
        .post(&format!("/v1/sessions/{id}/restore"), json!({"toTurn": 7}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}
