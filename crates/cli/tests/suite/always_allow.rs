//! "Always allow `touch` commands", answered on the terminal (`--approve ask` in a real pty),
//! persists with the session: a later `cairn run --session ID` in a new process (a restart)
//! runs the same program unasked, but still not a compound line; `cairn permissions revoke
//! PROGRAM --session ID` takes it back, and the next run is refused again.

use std::io::Write;
use std::path::Path;

use crate::common;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

/// Runs `cairn run --approve ask …` on a pseudo-terminal, typing `answer` at the prompt.
/// Returns (exit code, everything the terminal showed).
fn run_on_tty(ws: &Path, state: &Path, base_url: &str, answer: &str) -> (u32, String) {
    let mut run = common::tty::start(ws, state, base_url, "touch one.txt please");
    run.wait_for("always allow `touch` commands");
    let mut writer = run.master.take_writer().unwrap();
    writer.write_all(answer.as_bytes()).unwrap();
    writer.flush().unwrap();
    let code = run.wait_exit();
    (code, run.text())
}

async fn run_json(ws: &Path, state: &Path, base_url: &str, session: &str) -> Vec<Value> {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "run",
            "--json",
            "--model",
            "m",
            "--approve",
            "deny",
            "--vcs",
            "off",
        ])
        .arg("--session")
        .arg(session)
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .arg("--base-url")
        .arg(base_url)
        .arg("again")
        .env("OPENAI_API_KEY", "k")
        .env("CAIRN_PERMISSIONS_FILE", state.join("no-rules.toml"))
        .env("CAIRN_SANDBOX", "off")
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn statuses(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_finished")
        .map(|e| e["data"]["status"].as_str().unwrap().to_string())
        .collect()
}

fn asked(events: &[Value]) -> usize {
    events
        .iter()
        .filter(|e| e["type"] == "permission_required")
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn always_allow_persists_across_restarts_and_can_be_revoked() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "run_shell", json!({"command": "touch one.txt"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let base_url = server.base_url();

    // 1. On the terminal: [a] always allow `touch` commands.
    let (ws2, state2, url2) = (ws.clone(), state.clone(), base_url.clone());
    let (code, shown) =
        tokio::task::spawn_blocking(move || run_on_tty(&ws2, &state2, &url2, "a\n"))
            .await
            .unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(
        shown.contains("touch one.txt"),
        "the prompt shows the command: {shown}"
    );
    assert!(ws.join("one.txt").exists());
    let sessions = cairn_runtime::SessionStore::new(&state).list().unwrap();
    assert_eq!(sessions.len(), 1);
    let id = sessions[0].id.clone();

    // 2. A new process restores the session: `touch` runs unasked even with --approve deny;
    //    a compound line starting with it still asks (and is denied).
    server.push(Reply::tool_call(
        "b",
        "run_shell",
        json!({"command": "touch two.txt"}),
    ));
    server.push(Reply::tool_call(
        "c",
        "run_shell",
        json!({"command": "touch x.txt; touch y.txt"}),
    ));
    server.push(Reply::text("done"));
    let events = run_json(&ws, &state, &base_url, &id).await;
    assert_eq!(statuses(&events), ["ok", "denied"]);
    assert_eq!(asked(&events), 1, "only the compound line asks");
    assert!(ws.join("two.txt").exists());
    assert!(!ws.join("x.txt").exists() && !ws.join("y.txt").exists());

    // 3. Revoke it from the CLI.
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["permissions", "revoke", "touch", "--session", &id])
        .arg("--state-dir")
        .arg(&state)
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // 4. The next run asks again (and --approve deny refuses).
    server.push(Reply::tool_call(
        "d",
        "run_shell",
        json!({"command": "touch three.txt"}),
    ));
    server.push(Reply::text("done"));
    let events = run_json(&ws, &state, &base_url, &id).await;
    assert_eq!(statuses(&events), ["denied"]);
    assert_eq!(asked(&events), 1);
    assert!(!ws.join("three.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_with_operators_is_offered_no_always_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, state) = (tmp.path().join("ws"), tmp.path().join("state"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "run_shell", json!({"command": "echo hi > out.txt"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let url = server.base_url();
    let (ws2, state2) = (ws.clone(), state.clone());
    let (code, shown) = tokio::task::spawn_blocking(move || {
        let mut run = common::tty::start(&ws2, &state2, &url, "write it");
        run.wait_for("[y] allow once  [n] deny");
        let mut writer = run.master.take_writer().unwrap();
        // "a" is not on offer: asked again; then denied.
        writer.write_all(b"a\n").unwrap();
        writer.flush().unwrap();
        run.wait_for("please answer y, n");
        writer.write_all(b"n\n").unwrap();
        writer.flush().unwrap();
        let code = run.wait_exit();
        (code, run.text())
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{shown}");
    assert!(!shown.contains("always allow"), "{shown}");
    assert!(!ws.join("out.txt").exists(), "denied: {shown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn escape_sequences_in_a_request_cannot_redraw_the_approval_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, state) = (tmp.path().join("ws"), tmp.path().join("state"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    // Erases the real line and draws a harmless-looking one in its place.
    let spoof = "touch SPOOFED \u{1b}[2K\r\u{1b}[1A\u{1b}[2K? run_shell wants to run: ls";
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "run_shell", json!({ "command": spoof })),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let url = server.base_url();
    let (ws2, state2) = (ws.clone(), state.clone());
    let shown = tokio::task::spawn_blocking(move || {
        let mut run = common::tty::start(&ws2, &state2, &url, "go");
        run.wait_for("[n] deny");
        let mut writer = run.master.take_writer().unwrap();
        writer.write_all(b"n\n").unwrap();
        writer.flush().unwrap();
        run.wait_exit();
        run.text()
    })
    .await
    .unwrap();
    assert!(
        !shown.contains("\u{1b}[2K"),
        "no erase-line reached the terminal: {shown:?}"
    );
    assert!(
        !shown.contains("\u{1b}[1A"),
        "no cursor-up either: {shown:?}"
    );
    assert!(
        shown.contains("touch SPOOFED \\u{1b}[2K\\u{d}"),
        "shown, escaped: {shown:?}"
    );
    assert!(!ws.join("SPOOFED").exists());
}
