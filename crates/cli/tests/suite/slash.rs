//! Slash commands through `cairn run`: /undo, user commands with $ARGUMENTS, /mode's ceiling,
//! and prompts that only look like commands.

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use super::checkpoints::{cairn, Out};

async fn run(
    ws: &str,
    state: &str,
    server: &MockLlmServer,
    extra: &[&str],
    prompt: &str,
) -> (Out, Vec<Value>) {
    let base = server.base_url();
    let mut args = vec![
        "run",
        "-w",
        ws,
        "--state-dir",
        state,
        "--base-url",
        &base,
        "--model",
        "m",
        "--json",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    let out = cairn(&args, &[("CAIRN_MCP", "0")]).await;
    let events = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, events)
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_restores_the_last_change_and_commands_expand_or_stay_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".agent/commands")).unwrap();
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    std::fs::write(
        ws.join(".agent/commands/fix-issue.md"),
        "---\ndescription: Fix a numbered issue\n---\nFix issue #$ARGUMENTS with a test.\n",
    )
    .unwrap();
    let (w, s) = (
        ws.display().to_string(),
        dir.path().join("state").display().to_string(),
    );

    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "two\n"}),
        ),
        Reply::text("changed"),
    ])
    .await
    .unwrap();
    let (out, events) = run(&w, &s, &server, &["--mode", "auto"], "/fix-issue 42").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sid = events[0]["data"]["sessionId"].as_str().unwrap().to_string();
    let body = server.requests()[0].body.to_string();
    assert!(body.contains("Fix issue #42 with a test."), "{body}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "two\n");

    // /undo: no model request, turn_start/turn_end, the file back.
    let idle = MockLlmServer::with_script(vec![]).await.unwrap();
    let (out, events) = run(&w, &s, &idle, &["--session", &sid], "/undo").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
    assert!(idle.requests().is_empty());
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, vec!["turn_start", "turn_end"]);
    assert_eq!(events[1]["data"]["status"], "completed");

    // /mode above the run's --mode is refused; within it, it switches.
    let (out, _) = run(
        &w,
        &s,
        &idle,
        &["--session", &sid, "--mode", "interactive"],
        "/mode auto",
    )
    .await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    let (out, _) = run(
        &w,
        &s,
        &idle,
        &["--session", &sid, "--mode", "interactive"],
        "/mode plan",
    )
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);

    // Not commands: an unknown name, a path, an escaped slash reach the model as prompts.
    let echo = MockLlmServer::with_script(vec![Reply::text("a"), Reply::text("b")])
        .await
        .unwrap();
    let (out, _) = run(&w, &s, &echo, &[], "/usr/lib/libfoo is missing").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (out, _) = run(&w, &s, &echo, &[], "//undo is a command").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let r = echo.requests();
    assert!(r[0].body.to_string().contains("/usr/lib/libfoo is missing"));
    assert!(
        r[1].body.to_string().contains("\"/undo is a command"),
        "{}",
        r[1].body
    );

    let listed = cairn(&["commands", "list", "-w", &w, "--json"], &[]).await;
    let names: Vec<String> = listed
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        names.contains(&"undo".to_string()) && names.contains(&"fix-issue".to_string()),
        "{names:?}"
    );
}
