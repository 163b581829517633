//! run_shell, shell_task_output and shell_task_kill through the `Tool` trait.

use crate::common;

use std::time::{Duration, Instant};

use cairn_engine::{ToolError, ToolHandle};
use cairn_tools::core_tools;
use common::{first_pid, gone_within, tool, Ws};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn shell() -> ToolHandle {
    tool(&core_tools(), "run_shell")
}

async fn run(ws: &Ws, command: &str) -> Result<String, ToolError> {
    ws.call(&shell(), json!({"command": command}))
        .await
        .map(|o| o.content)
}

/// Waits until the command under test wrote its grandchild's pid to `file`.
async fn pid_from_file(ws: &Ws, file: &str) -> u32 {
    let path = ws.root.join(file);
    for _ in 0..250 {
        if let Ok(s) = std::fs::read_to_string(&path) {
            if s.ends_with('\n') {
                return first_pid(&s);
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{file} never appeared");
}

#[tokio::test]
async fn output_and_exit_code() {
    let ws = Ws::new();
    assert_eq!(
        run(&ws, "echo hello").await.unwrap(),
        "hello\n[exit code: 0]"
    );
    assert_eq!(
        run(&ws, "printf 'no newline'").await.unwrap(),
        "no newline\n[exit code: 0]"
    );
    assert_eq!(run(&ws, "true").await.unwrap(), "[exit code: 0]");
}

#[tokio::test]
async fn stdout_and_stderr_interleave_in_order() {
    let ws = Ws::new();
    let out = run(&ws, "echo out1; echo err1 >&2; echo out2; echo err2 >&2")
        .await
        .unwrap();
    assert_eq!(out, "out1\nerr1\nout2\nerr2\n[exit code: 0]");
}

#[tokio::test]
async fn non_zero_exit_and_signals_are_reported() {
    let ws = Ws::new();
    assert_eq!(
        run(&ws, "echo oops; exit 3").await.unwrap(),
        "oops\n[exit code: 3]"
    );
    let out = run(&ws, "kill -9 $$").await.unwrap();
    assert!(out.ends_with("[killed by signal 9 (SIGKILL)]"), "{out}");
}

#[tokio::test]
async fn runs_in_the_workspace_with_empty_stdin() {
    let ws = Ws::new();
    let out = run(&ws, "pwd; cat; echo after-cat").await.unwrap();
    assert_eq!(
        out,
        format!("{}\nafter-cat\n[exit code: 0]", ws.root.display())
    );
}

#[tokio::test]
async fn large_output_comes_back_whole() {
    let ws = Ws::new();
    let out = run(&ws, "head -c 2600000 /dev/zero | tr '\\0' 'a'")
        .await
        .unwrap();
    let body = out.strip_suffix("\n[exit code: 0]").unwrap();
    assert_eq!(body.len(), 2_600_000);
    assert!(body.bytes().all(|b| b == b'a'));
}

#[tokio::test]
async fn timeout_kills_the_whole_tree_and_keeps_partial_output() {
    let ws = Ws::new();
    let started = Instant::now();
    let e = ws
        .call(
            &shell(),
            json!({"command": "echo before; sleep 300 & echo $!; wait", "timeout_ms": 400}),
        )
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(e.error_type(), "timeout");
    let msg = e.to_string();
    assert!(
        msg.starts_with("timed out after 400 ms") && msg.contains("before\n"),
        "{msg}"
    );
    let grandchild = first_pid(msg.split_once("before\n").unwrap().1);
    assert!(
        gone_within(grandchild, Duration::from_secs(2)).await,
        "sleep {grandchild} survived"
    );
}

#[tokio::test]
async fn timeout_fires_even_when_output_floods() {
    let ws = Ws::new();
    let started = Instant::now();
    let e = ws
        .call(&shell(), json!({"command": "yes", "timeout_ms": 300}))
        .await
        .unwrap_err();
    assert!(
        e.to_string().starts_with("timed out after 300 ms"),
        "{}",
        &e.to_string()[..100]
    );
    assert!(
        e.to_string().len() < 64 * 1024,
        "the error keeps only head and tail"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_works_on_a_multi_thread_runtime() {
    let ws = Ws::new();
    let cancel = CancellationToken::new();
    let ctx = ws.ctx_with(cancel.clone());
    let call = tokio::spawn(async move {
        shell()
            .execute(
                json!({"command": "yes > /dev/null & echo $! > pid.txt; yes"}),
                ctx,
            )
            .await
    });
    let grandchild = pid_from_file(&ws, "pid.txt").await;
    cancel.cancel();
    let r = call.await.unwrap();
    assert!(matches!(r, Err(ToolError::Interrupted)), "{r:?}");
    assert!(gone_within(grandchild, Duration::from_secs(2)).await);
}

#[tokio::test]
async fn cancel_kills_the_whole_tree_promptly() {
    let ws = Ws::new();
    let cancel = CancellationToken::new();
    let ctx = ws.ctx_with(cancel.clone());
    let call = tokio::spawn(async move {
        shell()
            .execute(
                json!({"command": "sleep 300 & echo $! > pid.txt; wait"}),
                ctx,
            )
            .await
    });
    let grandchild = pid_from_file(&ws, "pid.txt").await;
    assert!(common::alive(grandchild));
    let t = Instant::now();
    cancel.cancel();
    let r = call.await.unwrap();
    assert!(matches!(r, Err(ToolError::Interrupted)), "{r:?}");
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());
    assert!(
        gone_within(grandchild, Duration::from_secs(2)).await,
        "sleep {grandchild} survived"
    );
}

#[tokio::test]
async fn cancel_escalates_to_sigkill_when_sigterm_is_ignored() {
    let ws = Ws::new();
    let cancel = CancellationToken::new();
    let ctx = ws.ctx_with(cancel.clone());
    let call = tokio::spawn(async move {
        shell()
            .execute(
                json!({"command": "trap '' TERM; sleep 300 & echo $! > pid.txt; wait"}),
                ctx,
            )
            .await
    });
    let grandchild = pid_from_file(&ws, "pid.txt").await;
    let t = Instant::now();
    cancel.cancel();
    let r = call.await.unwrap();
    assert!(matches!(r, Err(ToolError::Interrupted)), "{r:?}");
    assert!(
        t.elapsed() < Duration::from_millis(1500),
        "{:?}",
        t.elapsed()
    );
    assert!(
        gone_within(grandchild, Duration::from_secs(2)).await,
        "sleep {grandchild} survived"
    );
}

#[tokio::test]
async fn dropping_the_call_kills_the_tree() {
    let ws = Ws::new();
    let sh = shell();
    let mut fut = sh.execute(
        json!({"command": "sleep 300 & echo $! > pid.txt; wait"}),
        ws.ctx(),
    );
    let grandchild = tokio::select! {
        _ = &mut fut => panic!("finished early"),
        pid = pid_from_file(&ws, "pid.txt") => pid,
    };
    drop(fut);
    assert!(
        gone_within(grandchild, Duration::from_secs(2)).await,
        "sleep {grandchild} survived"
    );
}

#[tokio::test]
async fn leftover_background_processes_are_stopped_with_a_note() {
    let ws = Ws::new();
    let out = run(&ws, "sleep 300 & echo $!").await.unwrap();
    assert!(
        out.contains("background: true") && out.ends_with("[exit code: 0]"),
        "{out}"
    );
    let grandchild = first_pid(&out);
    assert!(gone_within(grandchild, Duration::from_secs(2)).await);
}

#[tokio::test]
async fn invalid_shell_arguments() {
    let ws = Ws::new();
    for args in [
        json!({}),
        json!({"command": ""}),
        json!({"command": "true", "timeout_ms": 0}),
        json!({"command": ["ls"]}),
    ] {
        let e = ws.call(&shell(), args.clone()).await.unwrap_err();
        assert!(matches!(e, ToolError::InvalidArguments(_)), "{args}: {e}");
    }
}

async fn wait_output(ws: &Ws, out_tool: &ToolHandle, id: &str, needle: &str) -> String {
    for _ in 0..250 {
        let s = ws
            .call(out_tool, json!({"task_id": id}))
            .await
            .unwrap()
            .content;
        if s.contains(needle) {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never showed {needle:?}");
}

fn task_id(start_message: &str) -> String {
    start_message
        .split_whitespace()
        .find(|w| w.starts_with("shell-"))
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn background_task_start_output_kill() {
    let ws = Ws::new();
    let tools = core_tools();
    let (run_t, out_t, kill_t) = (
        tool(&tools, "run_shell"),
        tool(&tools, "shell_task_output"),
        tool(&tools, "shell_task_kill"),
    );
    let t = Instant::now();
    let started = ws
        .call(
            &run_t,
            json!({"command": "echo started; sleep 300 & echo $!; wait", "background": true}),
        )
        .await
        .unwrap()
        .content;
    assert!(t.elapsed() < Duration::from_secs(1));
    let id = task_id(&started);
    assert_eq!(id, "shell-1");
    // The pid line follows "started" a moment later: wait for both.
    let deadline = Instant::now() + Duration::from_secs(10);
    let snap = loop {
        let s = wait_output(&ws, &out_t, &id, "started\n").await;
        let has_pid = s
            .split_once("started\n")
            .is_some_and(|(_, rest)| rest.lines().any(|l| l.trim().parse::<u32>().is_ok()));
        if has_pid || Instant::now() > deadline {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(snap.starts_with("[task shell-1: running"), "{snap}");
    let grandchild = first_pid(snap.split_once("started\n").unwrap().1);

    let tail = ws
        .call(&out_t, json!({"task_id": id, "tail_lines": 1}))
        .await
        .unwrap()
        .content;
    let body = tail.split_once("]\n").unwrap().1;
    assert_eq!(body, format!("{grandchild}\n"), "{tail}");

    let killed = ws
        .call(&kill_t, json!({"task_id": id}))
        .await
        .unwrap()
        .content;
    assert!(killed.contains("killed by shell_task_kill"), "{killed}");
    assert!(gone_within(grandchild, Duration::from_secs(2)).await);
    let again = ws
        .call(&kill_t, json!({"task_id": id}))
        .await
        .unwrap()
        .content;
    assert!(
        again.starts_with("Task shell-1 had already ended"),
        "{again}"
    );
}

#[tokio::test]
async fn background_task_that_exits_reports_its_code() {
    let ws = Ws::new();
    let tools = core_tools();
    let started = ws
        .call(
            &tool(&tools, "run_shell"),
            json!({"command": "echo done; exit 4", "background": true}),
        )
        .await
        .unwrap()
        .content;
    let snap = wait_output(
        &ws,
        &tool(&tools, "shell_task_output"),
        &task_id(&started),
        "exited",
    )
    .await;
    assert!(
        snap.contains("exited [exit code: 4]") && snap.ends_with("done\n"),
        "{snap}"
    );
}

#[tokio::test]
async fn unknown_task_ids_are_not_found() {
    let ws = Ws::new();
    let tools = core_tools();
    for name in ["shell_task_output", "shell_task_kill"] {
        let e = ws
            .call(&tool(&tools, name), json!({"task_id": "shell-99"}))
            .await
            .unwrap_err();
        assert!(
            matches!(&e, ToolError::NotFound(m) if m.contains("shell-99")),
            "{e}"
        );
    }
}

#[tokio::test]
async fn dropping_the_tools_kills_background_tasks() {
    let ws = Ws::new();
    let tools = core_tools();
    ws.call(
        &tool(&tools, "run_shell"),
        json!({"command": "sleep 300 & echo $! > pid.txt; wait", "background": true}),
    )
    .await
    .unwrap();
    let grandchild = pid_from_file(&ws, "pid.txt").await;
    drop(tools);
    assert!(
        gone_within(grandchild, Duration::from_secs(2)).await,
        "sleep {grandchild} survived"
    );
}

#[tokio::test]
async fn output_reaches_the_model_as_a_terminal_would_show_it() {
    let ws = Ws::new();
    let out = ws
        .call(
            &shell(),
            json!({"command": "printf '\\033[32mGREEN\\033[0m\\n'; printf 'progress 10%%\\rprogress 100%%\\n'; printf 'nul\\000byte\\007bell\\n'; printf 'crlf\\r\\n'"}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("GREEN\n"), "{out:?}");
    assert!(!out.contains('\u{1b}'), "no escape sequences: {out:?}");
    assert!(
        out.contains("progress 100%\n") && !out.contains("progress 10%"),
        "{out:?}"
    );
    assert!(
        out.contains("nulbytebell\n"),
        "control bytes dropped: {out:?}"
    );
    assert!(out.contains("crlf\n") && !out.contains('\r'), "{out:?}");
    assert!(out.contains("[exit code: 0]"), "{out:?}");
}
