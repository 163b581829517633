//! A sandboxed PTY command keeps its terminal (issue 35): the session of its own, the
//! seccomp filter and the explicit environment leave job control alone, so Ctrl-C typed
//! through `input_command` still interrupts the program running inside bubblewrap.

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{EngineConfig, FixedApprover, Session, ShellPolicy, ToolRegistry};
use cairn_policy::sandbox::{bwrap_works, SandboxMode};
use cairn_protocol::{ApprovalDecision, Message, Mode};
use cairn_runtime::sandbox::exec_environment;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_through_input_command_interrupts_a_sandboxed_pty_command() {
    if !bwrap_works() {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED sandbox: bubblewrap cannot run here");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let exec = exec_environment(
        ws.path(),
        state.path(),
        SandboxMode::Required,
        ShellPolicy::Approve,
    )
    .unwrap();
    assert!(exec.wrapper.is_some());
    let program = "trap 'echo got-ctrl-c; exit 7' INT; echo armed; \
                   test -r /dev/tty && echo has-tty; while :; do sleep 0.1; done";
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "a",
            "exec_command",
            json!({"command": program, "yield_ms": 1500}),
        ),
        FakeReply::tool(
            "b",
            "input_command",
            json!({"session_id": "cmd-1", "input": "\u{3}", "yield_ms": 10000}),
        ),
        FakeReply::text("done"),
    ]);
    let mut cfg = EngineConfig::new(ws.path().to_path_buf(), state.path().to_path_buf(), "m");
    cfg.mode = Mode::Auto;
    let mut reg = ToolRegistry::new();
    reg.register_all(cairn_tools::core_tools());
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .approver(Arc::new(FixedApprover(ApprovalDecision::Deny)))
        .permission_rules(Default::default(), ShellPolicy::Approve, true)
        .exec_environment(exec)
        .build();
    let mut stream = s.run("go");
    while stream.recv().await.is_some() {}
    let results: Vec<String> = s
        .messages()
        .await
        .into_iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.content),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].contains("armed") && results[0].contains("has-tty"),
        "the program did not start on its terminal: {}",
        results[0]
    );
    // Ctrl-C ended it: bubblewrap, in the same foreground group, ends by the same SIGINT
    // (the program's own trap may or may not get to print before that).
    assert!(
        results[1].contains("(SIGINT)") || results[1].contains("exit code: 7"),
        "Ctrl-C did not interrupt it: {}",
        results[1]
    );
}
