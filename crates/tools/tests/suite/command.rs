//! exec_command / input_command: real programs on a pseudo-terminal.

use crate::common;

use std::time::{Duration, Instant};

use cairn_engine::ToolError;
use cairn_tools::core_tools;
use common::{gone_within, tool, Ws};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn session_id(text: &str) -> String {
    let at = text
        .find("session cmd-")
        .unwrap_or_else(|| panic!("no session id in {text}"));
    text[at + "session ".len()..]
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .next()
        .unwrap()
        .to_string()
}

fn pid_of(text: &str) -> u32 {
    let at = text
        .find("(pid ")
        .unwrap_or_else(|| panic!("no pid in {text}"));
    text[at + 5..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test]
async fn a_command_that_finishes_returns_its_output_and_exit_code() {
    let ws = Ws::new();
    let tools = core_tools();
    let out = ws
        .call(
            &tool(&tools, "exec_command"),
            json!({"command": "printf '\\033[31mred\\033[0m\\n'; echo plain; exit 3"}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.starts_with("red\nplain\n"), "{out}");
    assert!(out.contains("[exit code: 3 after"), "{out}");
    assert!(!out.contains("still running"), "{out}");
}

#[tokio::test]
async fn a_program_waiting_for_input_is_answered_through_input_command() {
    let ws = Ws::new();
    let tools = core_tools();
    let started = Instant::now();
    let out = ws
        .call(
            &tool(&tools, "exec_command"),
            json!({"command": "read -p 'Name? ' n; echo \"Hello, $n\"", "yield_ms": 20000}),
        )
        .await
        .unwrap()
        .content;
    // It returned because the prompt went quiet, not after the 20 s yield.
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    assert!(out.starts_with("Name?"), "{out}");
    assert!(out.contains("still running"), "{out}");
    assert!(
        out.contains("output quiet for 1."),
        "the real quiet time: {out}"
    );
    let id = session_id(&out);
    let out = ws
        .call(
            &tool(&tools, "input_command"),
            json!({"session_id": id, "input": "Ada\n"}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("Hello, Ada"), "{out}");
    assert!(out.contains("[exit code: 0 after"), "{out}");
    // The session is gone once its end was reported.
    let e = ws
        .call(&tool(&tools, "input_command"), json!({"session_id": id}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e}");
}

#[tokio::test]
async fn a_repl_is_driven_line_by_line() {
    let ws = Ws::new();
    let tools = core_tools();
    let input = tool(&tools, "input_command");
    let out = ws
        .call(
            &tool(&tools, "exec_command"),
            json!({"command": "bash --norc --noprofile", "yield_ms": 5000}),
        )
        .await
        .unwrap()
        .content;
    let id = session_id(&out);
    let out = ws
        .call(
            &input,
            json!({"session_id": id, "input": "echo $((6*7))\n"}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("42"), "{out}");
    assert!(out.contains("still running"), "{out}");
    let out = ws
        .call(
            &input,
            json!({"session_id": id, "input": "cd /tmp && pwd\n"}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("/tmp"), "{out}");
    let out = ws
        .call(&input, json!({"session_id": id, "input": "exit 5\n"}))
        .await
        .unwrap()
        .content;
    assert!(out.contains("[exit code: 5 after"), "{out}");
}

#[tokio::test]
async fn a_command_that_never_ends_yields_then_is_killed() {
    let ws = Ws::new();
    let tools = core_tools();
    let started = Instant::now();
    let out = ws
        .call(
            &tool(&tools, "exec_command"),
            json!({"command": "sleep 1000", "yield_ms": 300}),
        )
        .await
        .unwrap()
        .content;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        out.contains("still running") && out.contains("no new output"),
        "{out}"
    );
    let id = session_id(&out);
    let pid = pid_of(&out);
    assert!(common::alive(pid));
    // Polling without input just waits for output.
    let out = ws
        .call(
            &tool(&tools, "input_command"),
            json!({"session_id": id, "yield_ms": 200}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("still running"), "{out}");
    let out = ws
        .call(
            &tool(&tools, "input_command"),
            json!({"session_id": id, "kill": true}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("killed"), "{out}");
    assert!(
        gone_within(pid, Duration::from_secs(5)).await,
        "pid {pid} survived"
    );
}

#[tokio::test]
async fn sessions_die_with_the_tool_set() {
    let ws = Ws::new();
    let tools = core_tools();
    let out = ws
        .call(
            &tool(&tools, "exec_command"),
            json!({"command": "sleep 1000 & sleep 1000", "yield_ms": 200}),
        )
        .await
        .unwrap()
        .content;
    let pid = pid_of(&out);
    drop(tools);
    assert!(
        gone_within(pid, Duration::from_secs(5)).await,
        "pid {pid} survived the session"
    );
}

#[tokio::test]
async fn interrupting_a_call_kills_its_session() {
    let ws = Ws::new();
    let tools = core_tools();
    let exec = tool(&tools, "exec_command");
    let cancel = CancellationToken::new();
    let ctx = ws.ctx_with(cancel.clone());
    let marker = ws.root.join("pidfile");
    let cmd = format!("echo $$ > {}; sleep 1000", marker.display());
    let call = tokio::spawn(async move {
        exec.execute(json!({"command": cmd, "yield_ms": 60000}), ctx)
            .await
    });
    // The shell wrote its pid (a whole line: the file can exist before `echo` filled it).
    let read_pid = || -> Option<u32> {
        let text = std::fs::read_to_string(&marker).ok()?;
        text.strip_suffix('\n')?.trim().parse().ok()
    };
    assert!(
        cairn_testkit::process::eventually(Duration::from_secs(5), || read_pid().is_some()).await,
        "the command never wrote its pid"
    );
    let pid = read_pid().unwrap();
    cancel.cancel();
    let r = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(r, Err(ToolError::Interrupted)), "{r:?}");
    assert!(gone_within(pid, Duration::from_secs(5)).await);
}

#[tokio::test]
async fn bad_calls_are_clear() {
    let ws = Ws::new();
    let tools = core_tools();
    let e = ws
        .call(
            &tool(&tools, "input_command"),
            json!({"session_id": "cmd-99", "input": "x"}),
        )
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("no command session `cmd-99` (sessions: none)"),
        "{e}"
    );
    let e = ws
        .call(&tool(&tools, "exec_command"), json!({"command": " "}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
    let e = ws
        .call(
            &tool(&tools, "exec_command"),
            json!({"command": "pwd", "cwd": "../.."}),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::OutsideWorkspace(_)), "{e}");
    ws.write("sub/x", "");
    let out = ws
        .call(
            &tool(&tools, "exec_command"),
            json!({"command": "pwd", "cwd": "sub"}),
        )
        .await
        .unwrap()
        .content;
    assert!(
        out.starts_with(&format!("{}\n", ws.root.join("sub").display())),
        "{out}"
    );
}

#[tokio::test]
async fn the_quiet_note_says_how_long_the_output_was_really_quiet() {
    let ws = Ws::new();
    let tools = core_tools();
    let out = ws
        .call(
            &tool(&tools, "exec_command"),
            json!({"command": "echo ready; sleep 30", "yield_ms": 400}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("ready"), "{out}");
    assert!(
        out.contains("output quiet for 0."),
        "returned at the 0.4 s yield: {out}"
    );
    let id = session_id(&out);
    ws.call(
        &tool(&tools, "input_command"),
        json!({"session_id": id, "kill": true}),
    )
    .await
    .unwrap();
}
