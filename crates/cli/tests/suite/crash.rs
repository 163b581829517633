//! SIGKILL at random points of scripted turns: every session loads afterwards, its history is
//! valid for the next request, and no event the process printed before dying is lost.

pub(crate) mod disk_full;

use std::collections::BTreeSet;
use std::process::Stdio;
use std::time::Duration;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;
use tokio::process::Command;

const RUNS: u64 = 50;

fn script() -> Vec<Reply> {
    vec![
        Reply::tool_call("c1", "list_files", json!({})),
        Reply::tool_call(
            "c2",
            "write_file",
            json!({"path": "a.txt", "content": "one"}),
        ),
        Reply::tool_call(
            "c3",
            "run_shell",
            json!({"command": "sleep 0.05; echo shell-done"}),
        ),
        Reply::tool_call("c4", "read_file", json!({"path": "a.txt"})).with_tool_call(
            "c5",
            "list_files",
            json!({"path": "."}),
        ),
        Reply::text("finished the work").delay_between_chunks(Duration::from_millis(5)),
    ]
}

fn cairn(state: &std::path::Path, ws: &std::path::Path, server: &MockLlmServer) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args(["run", "--mode", "auto", "--json", "--model", "m"])
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .arg("--base-url")
        .arg(server.base_url())
        .env("OPENAI_API_KEY", "k")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    c
}

/// Deterministic pseudo-random delays (no extra dependency).
fn delay_ms(i: u64) -> u64 {
    let x = i
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (x >> 33) % 350
}

#[tokio::test(flavor = "multi_thread")]
async fn sigkill_at_random_points_never_breaks_a_session() {
    let mut loaded = 0;
    for i in 0..RUNS {
        let ws = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let server = MockLlmServer::with_script(script()).await.unwrap();
        let mut child = cairn(state.path(), ws.path(), &server)
            .arg("do the work")
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
        let reader = tokio::spawn(async move {
            let mut buf = Vec::new();
            let mut first = Some(first_tx);
            let mut chunk = [0u8; 4096];
            loop {
                match stdout.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        buf.extend_from_slice(&chunk[..n]);
                        if let Some(tx) = first.take() {
                            let _ = tx.send(());
                        }
                    }
                }
            }
            buf
        });
        // One run in five is killed at a time counted from the spawn (possibly before it printed
        // anything); the others at a random point after the turn started, whatever the load.
        if i % 5 != 0 {
            let _ = tokio::time::timeout(Duration::from_secs(20), first_rx).await;
        }
        tokio::time::sleep(Duration::from_millis(delay_ms(i))).await;
        let _ = child.start_kill();
        let _ = child.wait().await;
        let printed = String::from_utf8_lossy(&reader.await.unwrap()).to_string();

        // Which session? Only complete lines count (the last one may be cut by the kill).
        let printed_events: Vec<Value> = printed
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let sessions_dir = state.path().join("sessions");
        let Ok(mut entries) = std::fs::read_dir(&sessions_dir) else {
            assert!(
                printed_events.is_empty(),
                "run {i}: events printed but no session dir"
            );
            continue;
        };
        // Killed after the sessions folder was made but before the session's own folder.
        let Some(entry) = entries.next() else {
            assert!(
                printed_events.is_empty(),
                "run {i}: events printed but no session folder"
            );
            continue;
        };
        let id = entry.unwrap().file_name().to_string_lossy().to_string();
        let dir = sessions_dir.join(&id);
        if !dir.join("state.json").exists() && !dir.join("state.json.bak").exists() {
            assert!(
                printed_events.is_empty(),
                "run {i}: events were printed before any checkpoint existed"
            );
            continue;
        }

        // No event printed before the kill is missing from the log.
        let logged: BTreeSet<String> =
            std::fs::read_to_string(sessions_dir.join(&id).join("events.jsonl"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .map(|v| v.to_string())
                .collect();
        for e in &printed_events {
            if e["type"] == "assistant_delta" || e["type"] == "reasoning_delta" {
                continue;
            }
            assert!(
                logged.contains(&e.to_string()),
                "run {i}: printed but not logged: {e}"
            );
        }

        // The session resumes, and the request it sends is a valid history.
        let server2 = MockLlmServer::with_script(vec![Reply::text("resumed")])
            .await
            .unwrap();
        let out = cairn(state.path(), ws.path(), &server2)
            .args(["--session", &id, "continue"])
            .output()
            .await
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "run {i}: resume failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let req = &server2.requests()[0].body;
        assert_valid_history(req["messages"].as_array().unwrap(), i);
        loaded += 1;
    }
    assert!(
        loaded >= RUNS / 2,
        "most runs got far enough to save a session: {loaded}"
    );
}

fn assert_valid_history(messages: &[Value], run: u64) {
    let mut open: BTreeSet<String> = BTreeSet::new();
    for m in messages {
        match m["role"].as_str().unwrap() {
            "assistant" => {
                assert!(
                    open.is_empty(),
                    "run {run}: calls {open:?} left without results"
                );
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    open.insert(c["id"].as_str().unwrap().to_string());
                }
            }
            "tool" => {
                let id = m["tool_call_id"].as_str().unwrap();
                assert!(open.remove(id), "run {run}: result {id} without its call");
            }
            _ => assert!(
                open.is_empty(),
                "run {run}: calls {open:?} left without results"
            ),
        }
    }
}
