//! Sessions name themselves after their first completed turn with one request to their own
//! provider and model (`session_named`, before `turn_end`); `--name` wins, and
//! `CAIRN_SESSION_NAMING=off` names them after their first message without a request.

use std::path::Path;

use cairn_testkit::{MockLlmServer, Reply};
use tokio::process::Command;

use crate::common::json_run::{cmd, last_is_turn_end, of_type, run_ok};

fn run_cmd(ws: &Path, state: &Path, server: &MockLlmServer, extra: &[&str]) -> Command {
    let args: Vec<&str> = ["--vcs", "off", "--json"]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    cmd(ws, state, server, &args)
}

async fn listed_name(state: &Path, id: &str) -> String {
    let (code, listed) = crate::suite::sessions_index::sessions(state, &[]).await;
    assert_eq!(code, 0);
    listed
        .iter()
        .find(|s| s["id"] == id)
        .map(|s| s["name"].as_str().unwrap_or_default().to_string())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_names_itself_once_after_its_first_turn() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("done"), Reply::text("again")])
        .await
        .unwrap();
    let r = run_ok(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["Port the parser to Rust\nwith tests"],
    ))
    .await;
    last_is_turn_end(&r, "completed");
    let named = of_type(&r.events, "session_named");
    assert_eq!(named.len(), 1, "{:?}", r.events);
    assert_eq!(named[0]["data"]["source"], "auto");
    assert_eq!(named[0]["data"]["name"], "Port the parser to Rust");
    // One request to the session's own endpoint and model, with the naming instruction.
    let asked = server.naming_requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].body["model"], "mock-model");
    assert!(asked[0]
        .body
        .to_string()
        .contains("Give this conversation a short title"));
    let id = r.events[0]["data"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        listed_name(state.path(), &id).await,
        "Port the parser to Rust"
    );

    // The next turn keeps the name: no second request, no second event.
    let r = run_ok(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--session", &id, "and the lexer"],
    ))
    .await;
    assert!(of_type(&r.events, "session_named").is_empty());
    assert_eq!(server.naming_requests().len(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_given_name_wins_and_naming_can_be_turned_off() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("ok"), Reply::text("ok")])
        .await
        .unwrap();
    let r = run_ok(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--name", "Release prep", "bump the version"],
    ))
    .await;
    assert!(of_type(&r.events, "session_named").is_empty());
    let id = r.events[0]["data"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(listed_name(state.path(), &id).await, "Release prep");

    let mut c = run_cmd(ws.path(), state.path(), &server, &["tidy the imports"]);
    c.env("CAIRN_SESSION_NAMING", "off");
    let r = run_ok(c).await;
    let named = of_type(&r.events, "session_named");
    assert_eq!(named.len(), 1, "{:?}", r.events);
    assert_eq!(named[0]["data"]["name"], "tidy the imports");
    assert!(
        server.naming_requests().is_empty(),
        "no naming request was made"
    );
}
