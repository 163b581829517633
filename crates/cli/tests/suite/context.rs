//! What reaches the model's context through `cairn run`: compaction under a small window,
//! AGENTS.md in the system prompt, and `@file` mentions.

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use crate::common::json_run::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_small_context_window_triggers_visible_compaction() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("big.txt"), "lorem ipsum dolor\n".repeat(600)).unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("r", "read_file", json!({"path": "big.txt"})),
        Reply::text("SUMMARY: read big.txt"),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let r = run_ok(cmd(
        ws.path(),
        state.path(),
        &server,
        &["--context-window", "2000", "--json", "GOAL: read big.txt"],
    ))
    .await;
    let compacting = of_type(&r.events, "compacting");
    assert!(!compacting.is_empty());
    assert_eq!(compacting[0]["data"]["contextWindow"], 2000);
    assert!(!of_type(&r.events, "compacted").is_empty());
    last_is_turn_end(&r, "completed");
    let last = server.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("GOAL: read big.txt"),
        "the goal survives compaction"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn agents_md_reaches_the_system_prompt() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("AGENTS.md"),
        "PROJECT-RULE-42: always use tabs",
    )
    .unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    run_ok(cmd(ws.path(), state.path(), &server, &["--json", "hi"])).await;
    let body = &server.requests()[0].body;
    let system = body["messages"][0].clone();
    assert_eq!(system["role"], "system");
    let text = system["content"].to_string();
    assert!(text.contains("PROJECT-RULE-42"), "{text}");
    assert!(text.contains("AGENTS.md"));
    assert!(text.contains("Workspace"));
}

/// Every string inside a JSON value (request bodies carry the prompt in nested strings).
fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().flat_map(strings).collect(),
        Value::Object(o) => o.values().flat_map(strings).collect(),
        _ => Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mentioned_workspace_files_reach_the_model_as_file_blocks() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir(ws.path().join("src")).unwrap();
    std::fs::write(ws.path().join("src/app.txt"), "the app's secret sauce\n").unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("explained")])
        .await
        .unwrap();
    let r = run_ok(cmd(
        ws.path(),
        state.path(),
        &server,
        &["--json", "explain @src/app.txt, thanks @team"],
    ))
    .await;
    last_is_turn_end(&r, "completed");
    let texts = strings(&server.requests()[0].body);
    assert!(
        texts
            .iter()
            .any(|t| t.contains("<file path=\"src/app.txt\">\nthe app's secret sauce\n</file>")),
        "{texts:?}"
    );
    // The prompt itself is sent as written; a word that names no file gets no note.
    assert!(texts
        .iter()
        .any(|t| t.contains("explain @src/app.txt, thanks @team")));
    assert!(!r.stderr.contains("note: "), "stderr: {}", r.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn mentions_that_cannot_be_attached_stay_text_with_a_note_and_are_never_read() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("hosts.txt");
    std::fs::write(&secret, "OUTSIDE-CONTENT-4711\n").unwrap();
    std::fs::write(ws.path().join("big.txt"), "B".repeat(256 * 1024 + 1)).unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("compared")])
        .await
        .unwrap();
    let prompt = format!(
        "compare with @{} and @big.txt and @docs/none.md",
        secret.display()
    );
    let r = run_ok(cmd(ws.path(), state.path(), &server, &["--json", &prompt])).await;
    last_is_turn_end(&r, "completed");
    let requests = server.requests();
    assert!(!requests.is_empty());
    for req in &requests {
        let body = req.body.to_string();
        assert!(!body.contains("OUTSIDE-CONTENT-4711"), "read: {body}");
        assert!(!body.contains("BBBB"), "a file over 256 KB was sent");
        assert!(!body.contains("<file path="), "nothing is attached: {body}");
    }
    assert!(strings(&requests[0].body)
        .iter()
        .any(|t| t.contains(&prompt)));
    let notes: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("note: "))
        .collect();
    assert_eq!(notes.len(), 3, "stderr: {}", r.stderr);
    assert!(
        notes[0].contains("only paths inside the workspace"),
        "{notes:?}"
    );
    assert!(notes[1].contains("limited to 256 KB"), "{notes:?}");
    assert!(
        notes[2].contains("@docs/none.md names no file"),
        "{notes:?}"
    );
}
