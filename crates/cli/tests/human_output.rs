#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `cairn run` without `--json`: what a person reads on the terminal.

mod common;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn reasoning_tool_lines_and_the_answer_each_start_on_their_own_line() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "hi\n").unwrap();
    // A broken MCP config: a warning, and the turn still runs.
    std::fs::create_dir_all(ws.path().join(".agent")).unwrap();
    std::fs::write(ws.path().join(".agent/mcp.json"), "{\"mcpServers\": {").unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "list_files", json!({}))
            .with_reasoning("Let me look at the folder."),
        Reply::tool_call("c2", "nope_tool", json!({})),
        Reply::text("Answer text.").with_reasoning("Now answer."),
    ])
    .await
    .unwrap();
    let out = common::run_auto(
        &server.base_url(),
        ws.path(),
        state.path(),
        "k",
        &[],
        "look",
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout.trim_end(), "Answer text.");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines.contains(&"Let me look at the folder."),
        "reasoning ends its line before the tool line: {stderr}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("✓ list_files (")),
        "no empty argument gap in the tool line: {stderr}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("✗ nope_tool — unknown tool `nope_tool`")),
        "{stderr}"
    );
    assert!(lines.contains(&"Now answer."), "{stderr}");
    assert!(
        stderr.contains("mcp.json: not valid JSON"),
        "the broken config is named: {stderr}"
    );
    assert!(
        !stderr.contains('\u{1b}'),
        "no colour codes when stderr is not a terminal: {stderr:?}"
    );
}
