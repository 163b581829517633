//! Typed-ahead approval (issue 35): commands Cairn starts, sandboxed or not, run in a
//! session of their own with no controlling terminal, and input typed before a prompt never
//! answers it. On a real terminal (a PTY this test starts): `y⏎` is typed while the model
//! is still thinking, then the model asks for an unsandboxed command — the prompt must
//! discard the `y` and wait (the test answers `n`: the command never ran). This holds on
//! kernels where TIOCSTI is off too, since the test types the bytes itself. A second
//! unsandboxed command (answered `y`) and a sandboxed one each record their session and
//! controlling terminal: neither has one, nor shares Cairn's session.

use std::io::Write;
use std::time::Duration;

use cairn_policy::sandbox::{bwrap_path, bwrap_works};
use cairn_testkit::{MockLlmServer, Reply};
use serde_json::json;

use crate::common;

/// Writes the session id of the shell's child (python3, same session) and whether
/// `/dev/tty` (the controlling terminal) opens.
fn probe(file: &str) -> String {
    format!(
        "echo ran > {file}.ran; python3 -c 'import os; print(os.getsid(0))' > {file}; \
         if (exec 3</dev/tty) 2>/dev/null; then echo tty-opens >> {file}; \
         else echo no-tty >> {file}; fi"
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn typed_ahead_input_never_answers_a_prompt_and_commands_have_no_terminal() {
    let sandbox_here = bwrap_path().is_some() && bwrap_works();
    if !sandbox_here {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
    }
    let dir = tempfile::tempdir_in("/var/tmp").unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (ws, state) = (base.join("ws"), base.join("state"));
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&state).unwrap();
    let server = MockLlmServer::start().await.unwrap();
    server.hold_when_empty(true);
    let sandbox = if sandbox_here { "auto" } else { "off" };
    let mut run = common::tty::start_with(
        &ws,
        &state,
        &server.base_url(),
        "go",
        sandbox,
        &["--mode", "auto"],
    );
    let cairn_pid = run.child.process_id().unwrap() as i32;
    // The model is thinking (its request is held): the user types `y⏎` ahead.
    server.wait_for_requests(1, Duration::from_secs(60)).await;
    let mut keys = run.master.take_writer().unwrap();
    keys.write_all(b"y\n").unwrap();
    keys.flush().unwrap();
    server.push(
        Reply::tool_call(
            "a",
            "run_shell",
            json!({"command": "touch typed-ahead-ran", "sandbox": false}),
        )
        .with_tool_call(
            "b",
            "run_shell",
            json!({"command": probe("outside.txt"), "sandbox": false}),
        )
        .with_tool_call("c", "run_shell", json!({"command": probe("inside.txt")})),
    );
    server.push(Reply::text("all-finished"));
    run.wait_for("touch typed-ahead-ran");
    // Only now, with the prompt shown: the typed-ahead `y` must have been discarded.
    keys.write_all(b"n\n").unwrap();
    keys.flush().unwrap();
    run.wait_for("outside.txt.ran");
    keys.write_all(b"y\n").unwrap();
    keys.flush().unwrap();
    run.wait_for("all-finished");
    let code = run.wait_exit();
    let shown = run.text();
    assert_eq!(code, 0, "{shown}");
    assert!(
        !ws.join("typed-ahead-ran").exists(),
        "input typed before the prompt answered it: {shown}"
    );
    let cairn_sid = nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(cairn_pid)));
    let checks = [("outside.txt", false), ("inside.txt", sandbox_here)];
    for (file, in_pid_namespace) in checks {
        assert!(ws.join(format!("{file}.ran")).exists(), "{file}: {shown}");
        let text = std::fs::read_to_string(ws.join(file)).unwrap();
        let mut lines = text.lines();
        let sid: i32 = lines.next().unwrap().trim().parse().unwrap();
        assert_eq!(
            lines.next(),
            Some("no-tty"),
            "{file}: has a controlling terminal: {text}"
        );
        if !in_pid_namespace {
            assert_ne!(Ok(sid), cairn_sid.map(|s| s.as_raw()), "{file}: {text}");
        }
    }
}
