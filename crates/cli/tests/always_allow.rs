#![allow(clippy::unwrap_used, clippy::expect_used)]
//! "Always allow this command", answered on the terminal (`--approve ask` in a real pty),
//! persists with the session: a later `cairn run --session ID` in a new process (a restart)
//! runs the same program unasked, but still not a compound line; `cairn permissions revoke
//! PROGRAM --session ID` takes it back, and the next run is refused again.

use std::io::{Read, Write};
use std::path::Path;
use std::time::Duration;

use cairn_testkit::{MockLlmServer, Reply};
use portable_pty::{native_pty_system, CommandBuilder, PtySize};
use serde_json::{json, Value};

/// Runs `cairn run --approve ask …` on a pseudo-terminal, typing `answer` at the prompt.
/// Returns (exit code, everything the terminal showed).
fn run_on_tty(ws: &Path, state: &Path, base_url: &str, answer: &str) -> (u32, String) {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: 40,
            cols: 200,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(["run", "--model", "m", "--approve", "ask", "--vcs", "off"]);
    cmd.arg("--workspace");
    cmd.arg(ws);
    cmd.arg("--state-dir");
    cmd.arg(state);
    cmd.arg("--base-url");
    cmd.arg(base_url);
    cmd.arg("touch one.txt please");
    cmd.env("OPENAI_API_KEY", "k");
    cmd.env("CAIRN_PERMISSIONS_FILE", state.join("no-rules.toml"));
    cmd.env("CAIRN_SANDBOX", "off");
    cmd.cwd(ws);
    let mut child = pair.slave.spawn_command(cmd).unwrap();
    drop(pair.slave);
    let mut reader = pair.master.try_clone_reader().unwrap();
    let mut writer = pair.master.take_writer().unwrap();
    let shown = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = shown.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    // Answer once the prompt is on screen.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !shown.lock().unwrap().contains("always allow this command") {
        assert!(
            std::time::Instant::now() < deadline,
            "no approval prompt; terminal showed: {}",
            shown.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    writer.write_all(answer.as_bytes()).unwrap();
    writer.flush().unwrap();
    let status = child.wait().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let text = shown.lock().unwrap().clone();
    (status.exit_code(), text)
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

    // 1. On the terminal: [c] always allow this command.
    let (ws2, state2, url2) = (ws.clone(), state.clone(), base_url.clone());
    let (code, shown) =
        tokio::task::spawn_blocking(move || run_on_tty(&ws2, &state2, &url2, "c\n"))
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
