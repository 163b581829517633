//! `cairn run` without `--json`: what a person reads on the terminal.

use crate::common;

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

/// A reader that goes away (`cairn run … 2>&1 | head -c 5`) must not change the exit status:
/// writing to a closed stderr is no panic (exit 101), the completed turn still exits 0.
#[tokio::test(flavor = "multi_thread")]
async fn a_closed_stderr_does_not_change_the_exit_status() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "list_files", json!({})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut child = common::auto_cmd(
        &server.base_url(),
        ws.path(),
        state.path(),
        "k",
        &[],
        "look",
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    // Close the read end at once: every later write to stderr fails with EPIPE.
    drop(child.stderr.take());
    let status = tokio::time::timeout(std::time::Duration::from_secs(60), child.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));
}

/// A failed tool's reason keeps the lines that explain it (a regex error's caret), not only
/// its first line.
#[tokio::test(flavor = "multi_thread")]
async fn a_multi_line_tool_error_is_shown_below_its_tool_line() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("g", "grep", json!({"pattern": "fn ("})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = common::run_auto(
        &server.base_url(),
        ws.path(),
        state.path(),
        "k",
        &[],
        "search",
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.starts_with("✗ grep"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        lines.get(at + 1).is_some_and(|l| l.starts_with("    ")),
        "the explanation follows, indented: {stderr}"
    );
}

/// Issue 44: the text output shows a subagent's steps (each tool it ran, its end), todo
/// changes in one line, and a command's streamed output, bounded.
#[tokio::test(flavor = "multi_thread")]
async fn a_subagents_steps_todos_and_streamed_output_are_shown() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "x").unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "t",
            "todo_write",
            json!({"todos": [{"content": "look around", "status": "in_progress"}]}),
        ),
        Reply::tool_call("e", "explore", json!({"task": "what files are there?"})),
        // The explore subagent's own turn.
        Reply::tool_call("l", "list_files", json!({"path": "."})),
        Reply::text("There is a.txt."),
        Reply::tool_call("s", "run_shell", json!({"command": "seq 1 30"})),
        Reply::text("done"),
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
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("todo: [~] look around"), "{stderr}");
    assert!(stderr.contains("↳ explore ✓ list_files"), "{stderr}");
    assert!(
        stderr.contains("↳ explore finished (completed)"),
        "{stderr}"
    );
    assert!(stderr.contains("  │ 1\n"), "{stderr}");
    assert!(
        stderr.contains("  │ 20\n") && !stderr.contains("  │ 21\n"),
        "{stderr}"
    );
    assert!(stderr.contains("  │ …"), "{stderr}");
}
