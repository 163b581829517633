//! The state dir fills up: the turn that cannot be saved ends with `error` and exit 1, runs
//! nothing it could not record, and its history is saved into the reserved space; after
//! freeing space the session continues with every earlier turn restorable.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use crate::common;

/// A tmpfs mounted on a folder for the length of a test.
pub(crate) struct Tmpfs(PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` on `dir`; `None` (with the reason printed) where mounting is
    /// not allowed here. On CI (`CI=true`) that is a failure instead.
    pub(crate) fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output();
        let why = match out {
            Ok(o) if o.status.success() => return Some(Tmpfs(dir.to_path_buf())),
            Ok(o) => String::from_utf8_lossy(&o.stderr).into_owned(),
            Err(e) => e.to_string(),
        };
        let on_ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(!on_ci, "cannot mount a tmpfs on CI: {why}");
        eprintln!("skipped: cannot mount a tmpfs here ({why})");
        None
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Fills the file system holding `dir` with one file until a write fails; returns it.
pub(crate) fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    for size in [1 << 20, 4096, 1] {
        let chunk = vec![7u8; size];
        while f.write_all(&chunk).is_ok() {}
    }
    let _ = f.sync_all();
    path
}

fn events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn cairn(state: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(args)
        .arg("--state-dir")
        .arg(state)
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_that_cannot_be_saved_is_an_error_and_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, state) = (tmp.path().join("ws"), tmp.path().join("state"));
    std::fs::create_dir_all(&ws).unwrap();
    let Some(_mounted) = Tmpfs::mount(&state, "24m") else {
        return;
    };
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "one\n"}),
        ),
        Reply::text("wrote a"),
    ])
    .await
    .unwrap();
    let url = server.base_url();

    let first = common::run_auto(&url, &ws, &state, "k", &["--json"], "first task").await;
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let id = common::only_session_id(&state);

    // The disk is full when the next turn starts.
    let filler = fill(&state);
    server.push(Reply::tool_call(
        "c2",
        "write_file",
        json!({"path": "b.txt", "content": "two\n"}),
    ));
    server.push(Reply::text("wrote b"));
    let second = common::run_auto(
        &url,
        &ws,
        &state,
        "k",
        &["--json", "--session", &id],
        "second task",
    )
    .await;
    let evs = events(&second.stdout);
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(1), "{evs:?}\n{stderr}");
    let error = evs
        .iter()
        .find(|e| e["type"] == "error")
        .unwrap_or_else(|| panic!("an error event: {evs:?}"));
    assert_eq!(error["data"]["error_type"], "save_failed", "{error}");
    let reason = error["data"]["error"].as_str().unwrap();
    assert!(reason.contains("could not save the session"), "{reason}");
    assert!(reason.contains(&format!("--session {id}")), "{reason}");
    let last = evs.last().unwrap();
    assert_eq!(last["type"], "turn_end", "{evs:?}");
    assert_eq!(last["data"]["status"], "error", "{last}");
    // Nothing ran that the session could not record: no tool started, no file written (so
    // nothing the agent changed is left without a checkpoint).
    assert!(!evs.iter().any(|e| e["type"] == "tool_started"), "{evs:?}");
    assert!(!ws.join("b.txt").exists());
    assert_eq!(
        server.requests().len(),
        2,
        "no LLM call after a failed save"
    );
    // The turn's history was saved into the reserve, and its end into the event log.
    let saved = cairn_runtime::SessionStore::new(&state).load(&id).unwrap();
    assert_eq!(saved.turns, 2);
    assert!(
        serde_json::to_string(&saved.messages)
            .unwrap()
            .contains("second task"),
        "{:?}",
        saved.messages
    );
    let logged = cairn_runtime::SessionStore::new(&state)
        .read_events(&id)
        .unwrap();
    assert!(
        matches!(logged.last(), Some(cairn_protocol::Event::TurnEnd(t)) if t.status == cairn_protocol::TurnStatus::Error),
        "{:?}",
        logged.last()
    );

    // Space freed: the session goes on, with the second turn's input in its history.
    std::fs::remove_file(filler).unwrap();
    let third = common::run_auto(
        &url,
        &ws,
        &state,
        "k",
        &["--json", "--session", &id],
        "third task",
    )
    .await;
    assert_eq!(third.status.code(), Some(0), "{third:?}");
    assert_eq!(std::fs::read_to_string(ws.join("b.txt")).unwrap(), "two\n");
    assert!(
        state.join(".space-reserve").is_file(),
        "the reserve is back once there is room"
    );
    let reqs = server.requests();
    let history = reqs[2].body["messages"].to_string();
    assert!(
        history.contains("second task") && history.contains("third task"),
        "{history}"
    );

    // Every earlier turn is restorable.
    let sd = state.to_str().unwrap();
    let turns = cairn(&state, &["turns", "--session", &id, "--json"]);
    let lines: Vec<Value> = events(&turns.stdout);
    assert_eq!(lines.len(), 2, "{lines:?}");
    let restore = |to: &str| cairn(&state, &["restore", "--session", &id, "--to-turn", to]);
    let one = restore("1");
    assert_eq!(one.status.code(), Some(0), "{one:?} {sd}");
    assert!(!ws.join("b.txt").exists());
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
    let zero = restore("0");
    assert_eq!(zero.status.code(), Some(0), "{zero:?}");
    assert!(!ws.join("a.txt").exists());
}
