//! `cairn run --session ID --resume`: a process killed while its approval prompt was open
//! leaves the call pending; the next process asks that approval again, runs the call and
//! finishes the turn (the follow-up request carries the tool's result).

use std::path::Path;

use crate::common;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

/// Starts `cairn run --approve ask` on a pseudo-terminal and SIGKILLs it once its approval
/// prompt is on screen.
fn kill_at_the_prompt(ws: &Path, state: &Path, base_url: &str) -> String {
    let mut run = common::tty::start(ws, state, base_url, "create one.txt");
    run.wait_for("always allow `touch` commands");
    let pid = run.child.process_id().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let _ = run.child.wait();
    run.text()
}

async fn cairn(state: &Path, ws: &Path, base_url: &str, args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args([
            "run",
            "--model",
            "m",
            "--vcs",
            "off",
            "--base-url",
            base_url,
        ])
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .args(args)
        .env("OPENAI_API_KEY", "k")
        .env("CAIRN_PERMISSIONS_FILE", state.join("no-rules.toml"))
        .env("CAIRN_SANDBOX", "off")
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_open_at_a_crash_is_asked_again_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("a", "run_shell", json!({"command": "touch one.txt"})),
        Reply::text("made it"),
    ])
    .await
    .unwrap();
    let url = server.base_url();

    let (ws2, state2, url2) = (ws.clone(), state.clone(), url.clone());
    let shown = tokio::task::spawn_blocking(move || kill_at_the_prompt(&ws2, &state2, &url2))
        .await
        .unwrap();
    assert!(shown.contains("touch one.txt"), "{shown}");
    assert!(!ws.join("one.txt").exists(), "killed before answering");
    let sessions = cairn_runtime::SessionStore::new(&state).list().unwrap();
    assert_eq!(sessions.len(), 1);
    let id = sessions[0].id.clone();

    // --resume needs --session; without a prompt it is still a valid call.
    let (code, _, err) = cairn(&state, &ws, &url, &["--resume"]).await;
    assert_eq!(code, 2, "{err}");

    let (code, out, err) = cairn(
        &state,
        &ws,
        &url,
        &["--json", "--approve", "allow", "--session", &id, "--resume"],
    )
    .await;
    assert_eq!(code, 0, "{err}\n{out}");
    let evs = events(&out);
    let asked: Vec<&Value> = evs
        .iter()
        .filter(|e| e["type"] == "permission_required")
        .collect();
    assert_eq!(asked.len(), 1, "the open approval is asked again: {out}");
    assert!(asked[0].to_string().contains("touch one.txt"), "{out}");
    let finished: Vec<&Value> = evs
        .iter()
        .filter(|e| e["type"] == "tool_finished")
        .collect();
    assert_eq!(finished.len(), 1, "{out}");
    assert_eq!(finished[0]["data"]["status"], "ok", "{out}");
    assert!(ws.join("one.txt").exists());
    assert_eq!(evs.last().unwrap()["type"], "turn_end", "{out}");
    assert_eq!(evs.last().unwrap()["data"]["status"], "completed", "{out}");
    // The follow-up request carries the call and its result.
    let requests = server.requests();
    let last = requests.last().unwrap().body.to_string();
    assert!(last.contains("touch one.txt"), "{last}");

    // Nothing is open any more: a second --resume has nothing to do.
    let (code, out, err) = cairn(&state, &ws, &url, &["--session", &id, "--resume"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("no tool calls were open"), "{err}");
    assert!(out.is_empty(), "{out}");
}
