//! One process at a time per session: a second `cairn run --session S` (or a `cairn restore`)
//! while a turn runs in S is refused with a clear message and exit 2, and nothing of the
//! running turn is lost; once it ended, the session is free again.

use crate::common;

use std::time::{Duration, Instant};

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::json;

/// A workspace and state dir holding one session after a first turn ("one"), the server's
/// URL and the session id.
async fn first_turn(
    server: &MockLlmServer,
) -> (tempfile::TempDir, tempfile::TempDir, String, String) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let url = server.base_url();
    let first = common::run_auto(&url, ws.path(), state.path(), "k", &[], "one").await;
    assert!(first.status.success(), "{first:?}");
    let id = common::only_session_id(state.path());
    (ws, state, url, id)
}

#[tokio::test]
async fn a_session_in_use_by_another_process_is_refused_and_loses_nothing() {
    let server = MockLlmServer::with_script(vec![
        Reply::text("first answer"),
        Reply::tool_call(
            "c1",
            "run_shell",
            json!({"command": "touch started.txt; sleep 3; echo slow-done > done.txt"}),
        ),
        Reply::text("slow turn finished"),
        Reply::text("third answer"),
    ])
    .await
    .unwrap();
    let (ws, state, url, id) = first_turn(&server).await;

    // Turn 2 runs a slow command in the session…
    let slow = common::spawn_turn(&url, ws.path(), state.path(), &id, "two");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ws.path().join("started.txt").exists() {
        assert!(
            Instant::now() < deadline,
            "the slow turn never ran its command"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // …so another run in the same session is refused, and so is a restore.
    let second =
        common::run_auto(&url, ws.path(), state.path(), "k", &["--session", &id], "x").await;
    let err = String::from_utf8_lossy(&second.stderr);
    assert_eq!(second.status.code(), Some(2), "{err}");
    assert!(
        err.contains("in use by another Cairn process (pid "),
        "{err}"
    );
    let restore = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["restore", "--session", &id, "--to-turn", "0"])
        .arg("--state-dir")
        .arg(state.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&restore.stderr);
    assert_eq!(restore.status.code(), Some(2), "{err}");
    assert!(err.contains("in use by another Cairn process"), "{err}");
    assert_eq!(
        server.requests().len(),
        2,
        "the refused run asked the model nothing"
    );

    // The running turn ends normally and keeps everything.
    let out = tokio::time::timeout(Duration::from_secs(30), slow.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(ws.path().join("done.txt").exists());
    let saved = cairn_runtime::SessionStore::new(state.path())
        .load(&id)
        .unwrap();
    assert_eq!(saved.turns, 2);
    let text: Vec<String> = saved.messages.iter().map(|m| m.text()).collect();
    assert!(
        text.iter().any(|t| t.contains("slow turn finished")),
        "{text:?}"
    );

    // Free again: the next run continues the session.
    let third = common::run_auto(
        &url,
        ws.path(),
        state.path(),
        "k",
        &["--session", &id],
        "three",
    )
    .await;
    assert!(third.status.success(), "{third:?}");
    assert_eq!(
        cairn_runtime::SessionStore::new(state.path())
            .load(&id)
            .unwrap()
            .turns,
        3
    );
}

/// A `cairn run` killed with SIGKILL cannot stop the command it was running; the next
/// process to open the session (a run, or a restore, even a dry run) stops it, so it does not
/// go on writing to the workspace.
#[tokio::test]
async fn commands_a_killed_run_left_behind_are_stopped_by_the_next_one() {
    for next_is_restore in [false, true] {
        killed_run_then_next(next_is_restore).await;
    }
}

async fn killed_run_then_next(next_is_restore: bool) {
    let server = MockLlmServer::with_script(vec![
        Reply::text("first answer"),
        Reply::tool_call(
            "c1",
            "run_shell",
            json!({"command": "echo $$ > pid.txt; sleep 30; touch late.txt"}),
        ),
        Reply::text("after the crash"),
    ])
    .await
    .unwrap();
    let (ws, state, url, id) = first_turn(&server).await;
    let mut doomed = common::spawn_turn(&url, ws.path(), state.path(), &id, "two");
    let pid_file = ws.path().join("pid.txt");
    let deadline = Instant::now() + Duration::from_secs(20);
    let shell: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "the command never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    doomed.start_kill().unwrap();
    doomed.wait().await.unwrap();
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.split_whitespace().nth(2).is_none_or(|st| st != "Z"))
    };
    assert!(alive(shell), "SIGKILL leaves the command running");

    if next_is_restore {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["restore", "--session", &id, "--to-turn", "0", "--dry-run"])
            .arg("--state-dir")
            .arg(state.path())
            .output()
            .unwrap();
        // No change-turn may exist yet (the killed turn wrote nothing): any answer but
        // "in use" will do; what matters is that the lock was taken.
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("in use"), "{err}");
    } else {
        let next = common::run_auto(
            &url,
            ws.path(),
            state.path(),
            "k",
            &["--session", &id],
            "three",
        )
        .await;
        assert!(next.status.success(), "{next:?}");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(shell) {
        assert!(
            Instant::now() < deadline,
            "the left-over command was not stopped (next is restore: {next_is_restore})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
