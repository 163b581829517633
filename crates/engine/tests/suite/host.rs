//! What tools can ask of their session, and the checkpointer boundary.

use crate::common;

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_engine::testing::{FakeLlm, FakeReply, FnTool};
use cairn_engine::{
    Approver, CheckpointError, Checkpointer, Session, SideEffect, ToolOutput, ToolRegistry,
};
use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, AskUserQuestion, DirectoryGrant, DirectoryRequested, Event,
    Mode, PlanReview, RiskLevel, TodoItem, TodoStatus, ToolMeta, UserAnswer,
};
use common::*;
use serde_json::json;

struct Host;
#[async_trait]
impl Approver for Host {
    async fn approve(&self, _r: ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Once
    }
    async fn ask_user(&self, q: AskUserQuestion) -> UserAnswer {
        UserAnswer::Answered {
            selected: vec![q.options[1].clone()],
            text: String::new(),
        }
    }
    async fn review_plan(&self, _plan: cairn_protocol::PlanProposed) -> PlanReview {
        PlanReview::Rejected {
            feedback: "smaller steps".into(),
        }
    }
    async fn grant_directory(&self, r: DirectoryRequested) -> DirectoryGrant {
        DirectoryGrant::Granted {
            writable: r.writable,
        }
    }
}

#[tokio::test]
async fn tools_stream_output_ask_the_user_and_update_todos() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "interactive", json!({})),
        FakeReply::text("ok"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "interactive",
        ToolMeta::read_only("t"),
        |_, ctx| async move {
            ctx.host.output("line 1\n").await;
            let answer = ctx
                .host
                .ask_user("which?".into(), vec!["a".into(), "b".into()], false, false)
                .await;
            let review = ctx.host.propose_plan("1. do it".into()).await;
            let grant = ctx
                .host
                .request_directory("/data/shared".into(), "need it".into(), true)
                .await;
            ctx.host
                .set_todos(vec![TodoItem {
                    content: "write tests".into(),
                    status: TodoStatus::InProgress,
                }])
                .await;
            Ok(ToolOutput::text(format!(
                "{answer:?} {review:?} {grant:?} {:?}",
                ctx.host.granted_directories()
            )))
        },
    ));
    let s = Session::builder(config(&dir, Mode::Interactive), Arc::new(llm.clone()))
        .tools(reg)
        .approver(Arc::new(Host))
        .build();
    let ev = collect(s.run("go")).await;
    let t = types(&ev);
    for expected in [
        "tool_output",
        "ask_user_question",
        "plan_proposed",
        "directory_requested",
        "todos_updated",
    ] {
        assert!(t.contains(&expected), "{expected} missing from {t:?}");
    }
    let started = t.iter().position(|x| *x == "tool_started").unwrap();
    let finished = t.iter().position(|x| *x == "tool_finished").unwrap();
    let output = t.iter().position(|x| *x == "tool_output").unwrap();
    assert!(started < output && output < finished);
    match ev.iter().find(|e| matches!(e, Event::ToolOutput(_))) {
        Some(Event::ToolOutput(o)) => {
            assert_eq!(o.req_id, "a");
            assert_eq!(o.text, "line 1\n");
        }
        _ => unreachable!(),
    }
    let result = llm.requests()[1].messages.last().unwrap().text();
    assert!(result.contains("\"b\""), "{result}");
    assert!(result.contains("smaller steps"));
    assert!(result.contains("Granted"));
    assert!(result.contains("/data/shared"));
    assert_eq!(s.todos()[0].content, "write tests");
    assert_eq!(
        s.permission_state().granted_dirs.get("/data/shared"),
        Some(&true)
    );
}

#[tokio::test]
async fn granted_writable_directories_pass_the_write_boundary() {
    let dir = TempDir::new();
    let outside = TempDir::new();
    let target = outside.0.join("f.txt").display().to_string();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("w", "write_file", json!({"path": target, "content": "x"})),
        FakeReply::text("ok"),
        FakeReply::tool("w2", "write_file", json!({"path": target, "content": "x"})),
        FakeReply::text("ok"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "write_file",
        ToolMeta::mutating("file", RiskLevel::Medium, &["write"]),
        |_, _| async { Ok(ToolOutput::text("written")) },
    ));
    let s = Session::builder(config(&dir, Mode::Auto), Arc::new(llm))
        .tools(reg)
        .build();
    let ev = collect(s.run("w")).await;
    assert_eq!(finished(&ev)[0].status, cairn_protocol::ToolStatus::Denied);
    s.grant_directory(&outside.0.display().to_string(), true);
    let ev = collect(s.run("w")).await;
    assert_eq!(finished(&ev)[0].status, cairn_protocol::ToolStatus::Ok);
}

#[derive(Default)]
struct Recorder {
    log: Mutex<Vec<String>>,
    /// Fail the snapshot before a side effect.
    fail_before: bool,
    /// Fail the turn-end record.
    fail_end: bool,
}
#[async_trait]
impl Checkpointer for Recorder {
    async fn before_side_effect(
        &self,
        turn: u32,
        tool: &str,
        call_id: &str,
        kind: SideEffect,
    ) -> Result<(), CheckpointError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("before {turn} {tool} {call_id} {kind:?}"));
        if self.fail_before {
            return Err(CheckpointError("no space left on device".into()));
        }
        Ok(())
    }
    async fn after_side_effect(
        &self,
        turn: u32,
        call_id: &str,
        produced: &[String],
        _kind: SideEffect,
    ) -> Result<(), CheckpointError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("after {turn} {call_id} {}", produced.join(",")));
        Ok(())
    }
    async fn turn_end(&self, turn: u32, input: &str) -> Result<(), CheckpointError> {
        self.log.lock().unwrap().push(format!("end {turn} {input}"));
        if self.fail_end {
            return Err(CheckpointError("no space left on device".into()));
        }
        Ok(())
    }
}

fn errors(ev: &[Event]) -> Vec<&cairn_protocol::ErrorEvent> {
    ev.iter()
        .filter_map(|e| match e {
            Event::Error(x) => Some(x),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_snapshot_that_cannot_be_stored_keeps_the_tool_from_running_and_fails_the_turn() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("w", "write_file", json!({"path": "a.txt", "content": "x"})),
        FakeReply::text("ok"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(write_tool());
    let rec = Arc::new(Recorder {
        fail_before: true,
        ..Recorder::default()
    });
    let s = Session::builder(config(&dir, Mode::Auto), Arc::new(llm))
        .tools(reg)
        .checkpointer(rec.clone())
        .build();
    let ev = collect(s.run("edit")).await;
    assert_eq!(turn_end(&ev).status, cairn_protocol::TurnStatus::Error);
    assert_eq!(finished(&ev)[0].status, cairn_protocol::ToolStatus::Error);
    assert!(
        !dir.0.join("a.txt").exists(),
        "the tool ran without its snapshot"
    );
    let errs = errors(&ev);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].error_type, "checkpoint");
    assert!(errs[0].error.contains("no space left"), "{}", errs[0].error);
}

#[tokio::test]
async fn a_turn_end_that_cannot_be_recorded_is_a_turn_error() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("w", "write_file", json!({"path": "a.txt", "content": "x"})),
        FakeReply::text("ok"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(write_tool());
    let rec = Arc::new(Recorder {
        fail_end: true,
        ..Recorder::default()
    });
    let s = Session::builder(config(&dir, Mode::Auto), Arc::new(llm))
        .tools(reg)
        .checkpointer(rec.clone())
        .build();
    let ev = collect(s.run("edit")).await;
    assert_eq!(turn_end(&ev).status, cairn_protocol::TurnStatus::Error);
    let errs = errors(&ev);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].error.contains("could not be recorded"),
        "{}",
        errs[0].error
    );
}

#[tokio::test]
async fn the_checkpointer_sees_side_effects_and_turn_ends_but_not_reads() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("r", "echo", json!({})),
        FakeReply::tool("w", "write_file", json!({"path": "a.txt", "content": "x"})),
        FakeReply::text("ok"),
    ]);
    let mut reg = ToolRegistry::new();
    reg.register(echo_tool("echo"));
    reg.register(write_tool());
    let rec = Arc::new(Recorder::default());
    let s = Session::builder(config(&dir, Mode::Auto), Arc::new(llm))
        .tools(reg)
        .checkpointer(rec.clone())
        .build();
    let ev = collect(s.run("edit")).await;
    assert_eq!(turn_end(&ev).status, cairn_protocol::TurnStatus::Completed);
    assert_eq!(
        *rec.log.lock().unwrap(),
        vec![
            "before 1 write_file w FileEdit".to_string(),
            "after 1 w a.txt".to_string(),
            "end 1 edit".to_string()
        ]
    );
}

#[tokio::test]
async fn a_tool_that_keeps_its_host_cannot_hold_the_stream_open() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "leak", json!({})),
        FakeReply::text("ok"),
    ]);
    let kept: Arc<Mutex<Vec<cairn_engine::ToolHost>>> = Arc::default();
    let k = kept.clone();
    let mut reg = ToolRegistry::new();
    reg.register(FnTool::new(
        "leak",
        ToolMeta::read_only("t"),
        move |_, ctx| {
            let k = k.clone();
            async move {
                k.lock().unwrap().push(ctx.host.clone());
                Ok(ToolOutput::text("kept"))
            }
        },
    ));
    let s = session(&dir, Mode::Interactive, &llm, reg);
    // `collect` fails the test if the stream does not end.
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, cairn_protocol::TurnStatus::Completed);
    let host = kept.lock().unwrap()[0].clone();
    host.output("after the turn").await; // dropped silently
}
