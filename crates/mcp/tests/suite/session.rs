//! MCP tools inside real engine turns (scripted LLM): progress reaches the event stream,
//! faults end the call with a clear tool error the model sees, and the turn always ends.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use cairn_engine::testing::{FakeLlm, FakeReply, FnTool, ScriptedApprover};
use cairn_engine::{EngineConfig, FixedApprover, Session, ToolOutput, ToolRegistry};
use cairn_mcp::McpManager;
use cairn_protocol::{
    AlwaysAllow, ApprovalDecision, Event, Message, RiskLevel, ToolMeta, ToolStatus, TurnStatus,
};
use common::*;
use serde_json::json;

async fn run_turn(session: &Session, input: &str) -> Vec<Event> {
    let mut stream = session.run(input);
    let mut events = Vec::new();
    let collect = async {
        while let Some(e) = stream.recv().await {
            events.push(e);
        }
    };
    tokio::time::timeout(Duration::from_secs(30), collect)
        .await
        .expect("the turn ended");
    events
}

fn tool_results(llm: &FakeLlm) -> Vec<(String, String, ToolStatus)> {
    llm.requests()
        .last()
        .unwrap()
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some((r.name.clone(), r.content.clone(), r.status)),
            _ => None,
        })
        .collect()
}

fn session(dir: &std::path::Path, llm: FakeLlm, manager: &McpManager) -> Session {
    let config = EngineConfig::new(dir.to_path_buf(), dir.to_path_buf(), "fake-model");
    let s = Session::builder(config, Arc::new(llm))
        .approver(Arc::new(FixedApprover(ApprovalDecision::Once)))
        .build();
    manager.attach(Arc::new(s.clone()));
    s
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_is_streamed_and_the_result_reaches_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let manager = McpManager::new(vec![stdio_server("t", &[], &[])], options(dir.path()));
    manager.connect_all().await;
    let llm = FakeLlm::new(vec![
        FakeReply::tool("c1", "mcp__t__slow", json!({"steps": 3, "delay_ms": 30})),
        FakeReply::text("done"),
    ]);
    let s = session(dir.path(), llm.clone(), &manager);
    let events = run_turn(&s, "go").await;
    let offered: Vec<String> = llm.requests()[0]
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert!(offered.contains(&"mcp__t__slow".to_string()), "{offered:?}");
    let progress: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolOutput(o) => Some(o.text.clone()),
            _ => None,
        })
        .collect();
    assert!(
        progress
            .iter()
            .any(|p| p.contains("progress 3/3: step 3 of 3")),
        "{progress:?}"
    );
    let results = tool_results(&llm);
    assert_eq!(results[0].1, "done after 3 steps");
    assert_eq!(results[0].2, ToolStatus::Ok);
    assert!(matches!(events.last(), Some(Event::TurnEnd(t)) if t.status == TurnStatus::Completed));
    manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn faults_in_a_turn_become_tool_errors_and_the_turn_ends() {
    let dir = tempfile::tempdir().unwrap();
    let m = marker();
    let mut servers = vec![
        stdio_server("t", &[], &[m.as_str()]),
        stdio_server("dup", &["duplicate-tools", "flood-stderr"], &[m.as_str()]),
    ];
    servers[0].call_timeout = Some(Duration::from_millis(400));
    let manager = McpManager::new(servers, options(dir.path()));
    manager.connect_all().await;
    let llm = FakeLlm::new(vec![
        FakeReply::tools(&[
            ("c1", "mcp__t__fail", json!({"message": "quota exceeded"})),
            ("c2", "mcp__t__hang", json!({})),
            ("c3", "mcp__t__crash", json!({})),
            ("c4", "mcp__dup__echo", json!({"text": "still fine"})),
            ("c5", "mcp__dup__big", json!({})),
        ]),
        FakeReply::text("ok"),
    ]);
    let s = session(dir.path(), llm.clone(), &manager);
    let events = run_turn(&s, "break things").await;
    assert!(matches!(events.last(), Some(Event::TurnEnd(t)) if t.status == TurnStatus::Completed));
    let results = tool_results(&llm);
    assert_eq!(results.len(), 5);
    let by = |n: &str| results.iter().find(|r| r.0 == n).unwrap().clone();
    let fail = by("mcp__t__fail");
    assert_eq!(fail.2, ToolStatus::Error);
    assert!(
        fail.1.contains("reported an error: quota exceeded"),
        "{}",
        fail.1
    );
    let hang = by("mcp__t__hang");
    assert_eq!(hang.2, ToolStatus::Error);
    assert!(hang.1.contains("timed out after 400 ms"), "{}", hang.1);
    let crash = by("mcp__t__crash");
    assert_eq!(crash.2, ToolStatus::Error);
    assert!(crash.1.contains("exited during the call"), "{}", crash.1);
    assert_eq!(by("mcp__dup__echo").1, "still fine");
    // A 10 MB result from the flooding server; the engine's budget keeps the model's copy small.
    let big = by("mcp__dup__big");
    assert_eq!(big.2, ToolStatus::Ok, "{}", &big.1[..200.min(big.1.len())]);
    assert!(big.1.len() < 1024 * 1024, "budgeted: {} bytes", big.1.len());
    manager.close_all().await;
    assert!(eventually(Duration::from_secs(3), || processes_with(&m).is_empty()).await);
}

/// An MCP tool that takes a `command` argument does not run commands here: its approval
/// offers the tool, never "always allow this command", and an answer of that kind does not
/// let `run_shell` run the program unasked.
#[tokio::test(flavor = "multi_thread")]
async fn a_command_argument_does_not_make_an_mcp_tool_a_command_runner() {
    let dir = tempfile::tempdir().unwrap();
    let manager = McpManager::new(vec![stdio_server("t", &[], &[])], options(dir.path()));
    manager.connect_all().await;
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "c1",
            "mcp__t__slow",
            json!({"steps": 1, "delay_ms": 1, "command": "cargo test"}),
        ),
        FakeReply::tool("c2", "run_shell", json!({"command": "cargo test"})),
        FakeReply::text("done"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "run_shell",
        ToolMeta::mutating("shell", RiskLevel::High, &["exec"]),
        |_, _| async { Ok(ToolOutput::text("ran")) },
    ));
    let approver = ScriptedApprover::new(vec![], ApprovalDecision::AlwaysCommand);
    let config = EngineConfig::new(
        dir.path().to_path_buf(),
        dir.path().to_path_buf(),
        "fake-model",
    );
    let s = Session::builder(config, Arc::new(llm.clone()))
        .tools(reg)
        .approver(Arc::new(approver.clone()))
        .build();
    manager.attach(Arc::new(s.clone()));
    let events = run_turn(&s, "go").await;
    let offered: Vec<Option<AlwaysAllow>> = events
        .iter()
        .filter_map(|e| match e {
            Event::PermissionRequired(p) => Some(p.always_allow.clone()),
            _ => None,
        })
        .collect();
    let seen = approver.seen();
    assert_eq!(seen.len(), 2, "run_shell still asks: {seen:?}");
    assert_eq!(seen[0].name, "mcp__t__slow");
    let expected = vec![
        Some(AlwaysAllow::Tool {
            name: "mcp__t__slow".into(),
        }),
        Some(AlwaysAllow::Command {
            program: "cargo".into(),
        }),
    ];
    assert_eq!(offered, expected);
    assert_eq!(
        seen.iter()
            .map(|r| r.always_allow.clone())
            .collect::<Vec<_>>(),
        expected
    );
    let results = tool_results(&llm);
    assert_eq!(results[0].2, ToolStatus::Ok, "{results:?}");
    assert_eq!(results[1].1, "ran", "{results:?}");
    manager.close_all().await;
}
