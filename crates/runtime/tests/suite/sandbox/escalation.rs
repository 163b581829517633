//! The escalation, approved: in auto mode a `sandbox: false` call is asked (with no "always
//! allow" on offer) and, once the user approves it, really runs outside the sandbox, while
//! the same command sandboxed cannot write there; a terminal session started outside the
//! sandbox takes no unasked `input_command` in auto mode.

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply, ScriptedApprover};
use cairn_engine::{EngineConfig, Session, ShellPolicy, ToolRegistry};
use cairn_policy::sandbox::{bwrap_works, SandboxMode};
use cairn_protocol::{ApprovalDecision, Event, Message, Mode};
use cairn_runtime::sandbox::exec_environment;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_sandbox_false_call_runs_outside_and_is_asked_every_time() {
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
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let target = outside.path().join("escalated");
    let touch = format!("touch {}", target.display());
    let exec = exec_environment(
        ws.path(),
        state.path(),
        SandboxMode::Auto,
        ShellPolicy::Approve,
    )
    .unwrap();
    assert!(exec.wrapper.is_some());
    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "run_shell", json!({"command": touch})),
        FakeReply::tool(
            "b",
            "run_shell",
            json!({"command": touch, "sandbox": false}),
        ),
        FakeReply::tool(
            "c",
            "run_shell",
            json!({"command": touch, "sandbox": false}),
        ),
        FakeReply::tool(
            "d",
            "exec_command",
            json!({"command": "cat", "sandbox": false, "yield_ms": 1000}),
        ),
        FakeReply::tool(
            "e",
            "input_command",
            json!({"session_id": "cmd-1", "input": "hi\n"}),
        ),
        FakeReply::text("done"),
    ]);
    let mut cfg = EngineConfig::new(ws.path().to_path_buf(), state.path().to_path_buf(), "m");
    cfg.mode = Mode::Auto;
    let mut reg = ToolRegistry::new();
    reg.register_all(cairn_tools::core_tools());
    // The user says "always" to the first escalation: it must not stick.
    let approver = ScriptedApprover::new(
        vec![ApprovalDecision::AlwaysTool, ApprovalDecision::Once],
        ApprovalDecision::Once,
    );
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .approver(Arc::new(approver.clone()))
        .permission_rules(Default::default(), ShellPolicy::Approve, true)
        .exec_environment(exec)
        .build();
    let mut stream = s.run("try it");
    let mut events = Vec::new();
    while let Some(e) = stream.recv().await {
        events.push(e);
    }
    let asked: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::PermissionRequired(p) => Some((p.req_id.clone(), p.always_allow.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        asked,
        vec![
            ("b".to_string(), None),
            ("c".to_string(), None),
            ("d".to_string(), None)
        ],
        "every escalation is asked, none offers always-allow"
    );
    assert!(target.exists(), "the approved call ran outside the sandbox");
    let results: Vec<String> = s
        .messages()
        .await
        .into_iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.content),
            _ => None,
        })
        .collect();
    assert!(results[0].contains("\"sandbox\": false"), "{}", results[0]);
    assert!(results[4].contains("outside the sandbox"), "{}", results[4]);
}
