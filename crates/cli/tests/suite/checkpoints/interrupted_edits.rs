//! Ctrl-C during a big edit or its slow diff ends the turn at once (exit 130, the process
//! gone), and an edit interrupted after its write is in the turn's change-set and restorable.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use super::{cairn, lines, KEY};

/// How long Ctrl-C may take to end the turn and the process.
const BOUND: Duration = Duration::from_secs(2);

/// What an interrupted `cairn run --json` printed and how it ended.
struct Interrupted {
    events: Vec<Value>,
    code: Option<i32>,
    took: Duration,
}

/// Runs one turn calling `replace_in_file` with `args`; sends SIGINT once `ready` says so
/// (polled between events and file checks), then waits for the process to end.
async fn interrupt_edit(
    ws: &Path,
    state: &Path,
    args: Value,
    envs: &[(&str, &str)],
    ready: impl Fn(&[Value]) -> bool,
) -> Interrupted {
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("e1", "replace_in_file", args),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args(["run", "--mode", "auto", "--json", "--model", "mock-model"])
        .arg("--base-url")
        .arg(server.base_url())
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .arg("edit the big file")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CAIRN_STATE_DIR")
        .env("OPENAI_API_KEY", KEY)
        .env("CAIRN_SANDBOX", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    for (k, v) in envs {
        c.env(k, v);
    }
    let mut child = c.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut events: Vec<Value> = Vec::new();
    let wait_ready = async {
        loop {
            if ready(&events) {
                return;
            }
            // A line when one comes, else look at the condition again (it may be on disk).
            if let Ok(line) = tokio::time::timeout(Duration::from_millis(20), out.next_line()).await
            {
                let line = line
                    .unwrap()
                    .expect("cairn ended before the edit was interrupted");
                events.push(serde_json::from_str(&line).unwrap());
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), wait_ready)
        .await
        .expect("the edit got under way");
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    let t0 = Instant::now();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let status = tokio::time::timeout(Duration::from_secs(120), child.wait())
        .await
        .expect("cairn exited")
        .unwrap();
    let took = t0.elapsed();
    while let Some(line) = out.next_line().await.unwrap() {
        events.push(serde_json::from_str(&line).unwrap());
    }
    Interrupted {
        events,
        code: status.code(),
        took,
    }
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

fn assert_interrupted_quickly(r: &Interrupted) {
    assert!(r.took < BOUND, "cairn took {:?} to exit", r.took);
    assert_eq!(r.code, Some(130), "{:?}", types(&r.events));
    let t = types(&r.events);
    assert_eq!(&t[t.len() - 2..], &["interrupted", "turn_end"], "{t:?}");
    assert_eq!(r.events.last().unwrap()["data"]["status"], "interrupted");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_during_a_big_replace_in_file_ends_the_turn_at_once() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let before: String = (0..4_000_000).map(|i| format!("item {i}\n")).collect();
    assert!(before.len() > 50_000_000);
    std::fs::write(ws.path().join("big.txt"), &before).unwrap();
    let r = interrupt_edit(
        ws.path(),
        st.path(),
        json!({"path": "big.txt", "old_string": "item", "new_string": "entry", "replace_all": true}),
        &[],
        |ev| ev.iter().any(|e| e["type"] == "tool_started"),
    )
    .await;
    assert_interrupted_quickly(&r);
    // All or nothing: the file is either untouched or fully edited, never half written.
    let now = std::fs::read_to_string(ws.path().join("big.txt")).unwrap();
    assert!(
        now == before || now == before.replace("item", "entry"),
        "the file is whole"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sigint_during_a_slow_diff_keeps_the_edit_in_the_turn_and_restorable() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let (w, s) = (ws.path(), st.path());
    // Every line changes: without a deadline this diff runs for about a minute.
    let before: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(w.join("f.txt"), &before).unwrap();
    let file = w.join("f.txt");
    let r = interrupt_edit(
        w,
        s,
        json!({"path": "f.txt", "old_string": "line", "new_string": "row", "replace_all": true}),
        &[("CAIRN_DIFF_TIMEOUT_MS", "120000")],
        // Interrupted once the edit is on disk: the diff is running.
        |_| std::fs::read_to_string(&file).is_ok_and(|t| t.starts_with("row 0\n")),
    )
    .await;
    assert_interrupted_quickly(&r);
    assert_eq!(
        r.events.last().unwrap()["data"]["produced_files"],
        json!(["f.txt"])
    );
    let sid = r.events[0]["data"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let sd = s.to_str().unwrap();
    let turns = cairn(
        &["turns", "--session", &sid, "--state-dir", sd, "--json"],
        &[],
    )
    .await;
    assert_eq!(turns.code, 0, "{}", turns.stderr);
    let t = lines(&turns.stdout);
    assert_eq!(t.len(), 1, "{}", turns.stdout);
    assert_eq!(t[0]["files"], json!(["f.txt"]));
    let restored = cairn(
        &[
            "restore",
            "--session",
            &sid,
            "--to-turn",
            "0",
            "--json",
            "--state-dir",
            sd,
        ],
        &[],
    )
    .await;
    assert_eq!(restored.code, 0, "{} {}", restored.stdout, restored.stderr);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}
