//! todo_write, ask_user, propose_plan and request_directory through a real session (events,
//! host answers, granted directories widening the file tools), and with no host attached.

use crate::common;

use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{Approver, ToolError};
use cairn_protocol::{
    ApprovalDecision, ApprovalRequest, AskUserQuestion, DirectoryGrant, DirectoryRequested, Event,
    Mode, PlanReview, TodoStatus, ToolStatus, UserAnswer,
};
use cairn_tools::core_tools;
use common::{collect, session, tool, Ws};
use serde_json::json;

/// A host that answers like a user would.
struct User {
    writable: bool,
}

#[async_trait]
impl Approver for User {
    async fn approve(&self, _r: ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Once
    }
    async fn ask_user(&self, q: AskUserQuestion) -> UserAnswer {
        UserAnswer::Answered {
            selected: vec![q.options[1].clone()],
            text: "with migrations".into(),
        }
    }
    async fn review_plan(&self, _plan: cairn_protocol::PlanProposed) -> PlanReview {
        PlanReview::Rejected {
            feedback: "smaller steps please".into(),
        }
    }
    async fn grant_directory(&self, _r: DirectoryRequested) -> DirectoryGrant {
        DirectoryGrant::Granted {
            writable: self.writable,
        }
    }
}

fn results(llm: &FakeLlm) -> Vec<(String, String)> {
    let reqs = llm.requests();
    reqs.last()
        .unwrap()
        .messages
        .iter()
        .filter_map(|m| match m {
            cairn_protocol::Message::Tool(t) => Some((t.name.clone(), t.content.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn interaction_tools_reach_the_user_and_grants_widen_the_file_tools() {
    let ws = Ws::new();
    let shared = ws.outside.join("shared-lib");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("api.txt"), "shared api v2\n").unwrap();
    let secret = shared.join("api.txt").to_string_lossy().into_owned();
    let new_file = shared.join("new.txt").to_string_lossy().into_owned();
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "t1",
            "todo_write",
            json!({"todos": [
                {"content": "Read the config", "status": "in_progress"},
                {"content": "Fix the bug", "status": "pending"}
            ]}),
        ),
        FakeReply::tool(
            "t2",
            "ask_user",
            json!({"question": "Which database?", "options": ["sqlite", "postgres"]}),
        ),
        FakeReply::tool(
            "t3",
            "propose_plan",
            json!({"plan": "1. Rewrite everything"}),
        ),
        FakeReply::tool("t4", "read_file", json!({"path": secret})),
        FakeReply::tool(
            "t5",
            "request_directory",
            json!({"path": "../outside/shared-lib", "reason": "read the shared API"}),
        ),
        FakeReply::tools(&[
            ("t6", "read_file", json!({"path": secret})),
            (
                "t7",
                "grep",
                json!({"pattern": "api", "path": shared.to_string_lossy()}),
            ),
        ]),
        FakeReply::tool(
            "t8",
            "write_file",
            json!({"path": new_file, "content": "x"}),
        ),
        FakeReply::text("done"),
    ]);
    let s = session(
        &ws,
        &llm,
        core_tools(),
        Arc::new(User { writable: false }),
        Mode::Interactive,
    );
    let events = collect(s.run("work")).await;

    // Events for the UI.
    let todos = events.iter().find_map(|e| match e {
        Event::TodosUpdated(t) => Some(t.todos.clone()),
        _ => None,
    });
    let todos = todos.expect("todos_updated");
    assert_eq!(todos.len(), 2);
    assert_eq!(todos[0].status, TodoStatus::InProgress);
    assert_eq!(s.todos(), todos, "the list is session state");
    assert!(events.iter().any(|e| matches!(e,
        Event::AskUserQuestion(q) if q.question == "Which database?" && q.options.len() == 2 && q.allow_text)));
    assert!(events.iter().any(|e| matches!(e,
        Event::PlanProposed(p) if p.plan == "1. Rewrite everything")));
    let requested = events
        .iter()
        .find_map(|e| match e {
            Event::DirectoryRequested(d) => Some(d.clone()),
            _ => None,
        })
        .expect("directory_requested");
    assert_eq!(
        requested.path,
        shared.to_string_lossy(),
        "the request carries the absolute path"
    );
    assert!(!requested.writable);

    let statuses: Vec<(String, ToolStatus)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished(f) => Some((f.req_id.clone(), f.status)),
            _ => None,
        })
        .collect();
    let status = |id: &str| statuses.iter().find(|(r, _)| r == id).unwrap().1;
    assert_eq!(
        status("t4"),
        ToolStatus::Error,
        "outside the workspace before the grant"
    );
    assert_eq!(status("t6"), ToolStatus::Ok, "readable after the grant");
    assert_eq!(status("t7"), ToolStatus::Ok);
    assert_eq!(status("t8"), ToolStatus::Denied, "the grant is read-only");
    assert!(!shared.join("new.txt").exists());

    let r = results(&llm);
    let text = |name: &str, nth: usize| {
        r.iter()
            .filter(|(n, _)| n == name)
            .nth(nth)
            .unwrap()
            .1
            .clone()
    };
    assert!(text("todo_write", 0).contains("2 items (0 completed, 1 in progress, 1 pending)"));
    assert_eq!(
        text("ask_user", 0),
        "The user chose: postgres; and wrote: with migrations"
    );
    assert!(
        text("propose_plan", 0).contains("rejected the plan. Their feedback: smaller steps please")
    );
    assert!(
        text("read_file", 0).contains("request_directory"),
        "{}",
        text("read_file", 0)
    );
    assert!(text("request_directory", 0).contains("granted (read-only)"));
    assert!(
        text("read_file", 1).contains("shared api v2"),
        "{}",
        text("read_file", 1)
    );
    assert!(
        text("grep", 0).contains("shared api v2"),
        "{}",
        text("grep", 0)
    );
}

#[tokio::test]
async fn a_writable_grant_lets_the_agent_write_there() {
    let ws = Ws::new();
    let target = ws.outside.join("notes.md");
    let path = target.to_string_lossy().into_owned();
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "d",
            "request_directory",
            json!({"path": ws.outside.to_string_lossy(), "reason": "keep notes", "writable": true}),
        ),
        FakeReply::tool(
            "w",
            "write_file",
            json!({"path": path, "content": "note\n"}),
        ),
        FakeReply::text("ok"),
    ]);
    let s = session(
        &ws,
        &llm,
        core_tools(),
        Arc::new(User { writable: true }),
        Mode::Interactive,
    );
    let events = collect(s.run("notes")).await;
    assert!(
        events.iter().any(|e| matches!(e,
        Event::ToolFinished(f) if f.req_id == "w" && f.status == ToolStatus::Ok)),
        "{events:?}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "note\n");
}

#[tokio::test]
async fn without_a_host_questions_are_declined_and_grants_denied() {
    let ws = Ws::new();
    let tools = core_tools();
    let out = ws
        .call(&tool(&tools, "ask_user"), json!({"question": "Continue?"}))
        .await
        .unwrap()
        .content;
    assert!(out.starts_with("No answer: no user is available"), "{out}");
    let out = ws
        .call(&tool(&tools, "propose_plan"), json!({"plan": "do it"}))
        .await
        .unwrap()
        .content;
    assert!(
        out.contains("Nobody could review the plan") && out.contains("Do not start the work"),
        "never reported as accepted when nobody saw it: {out}"
    );
    let e = ws
        .call(
            &tool(&tools, "request_directory"),
            json!({"path": ws.outside.to_string_lossy(), "reason": "r"}),
        )
        .await
        .unwrap_err();
    assert!(e.to_string().contains("was denied"), "{e}");
    let out = ws
        .call(
            &tool(&tools, "request_directory"),
            json!({"path": ".", "reason": "r"}),
        )
        .await
        .unwrap()
        .content;
    assert!(out.contains("inside the workspace"), "{out}");
    let e = ws
        .call(
            &tool(&tools, "request_directory"),
            json!({"path": "/definitely/not/here", "reason": "r"}),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e}");
    let e = ws
        .call(
            &tool(&tools, "todo_write"),
            json!({"todos": [{"content": "x", "status": "blocked"}]}),
        )
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("use pending, in_progress or completed"),
        "{e}"
    );
    let e = ws
        .call(
            &tool(&tools, "ask_user"),
            json!({"question": "?", "allow_text": false}),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::InvalidArguments(_)), "{e}");
}

/// Accepts every plan and allows every call.
struct Accepting;

#[async_trait]
impl Approver for Accepting {
    async fn approve(&self, _r: ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Once
    }
    async fn review_plan(&self, _plan: cairn_protocol::PlanProposed) -> PlanReview {
        PlanReview::Accepted
    }
}

#[tokio::test]
async fn an_accepted_plan_takes_the_session_out_of_plan_mode() {
    let ws = Ws::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "w0",
            "write_file",
            json!({"path": "early.txt", "content": "x"}),
        ),
        FakeReply::tool("p", "propose_plan", json!({"plan": "1. write notes.txt"})),
        FakeReply::tool(
            "w1",
            "write_file",
            json!({"path": "notes.txt", "content": "done\n"}),
        ),
        FakeReply::text("ok"),
    ]);
    let s = session(&ws, &llm, core_tools(), Arc::new(Accepting), Mode::Plan);
    let events = collect(s.run("plan then do")).await;
    let status = |id: &str| {
        events.iter().find_map(|e| match e {
            Event::ToolFinished(f) if f.req_id == id => Some(f.status),
            _ => None,
        })
    };
    assert_eq!(
        status("w0"),
        Some(ToolStatus::Denied),
        "plan mode is read-only"
    );
    assert_eq!(
        status("w1"),
        Some(ToolStatus::Ok),
        "after acceptance: {events:?}"
    );
    assert_eq!(s.mode(), Mode::Interactive);
    let plan = results(&llm)
        .into_iter()
        .find(|(n, _)| n == "propose_plan")
        .unwrap()
        .1;
    assert!(plan.contains("now in interactive mode"), "{plan}");
    assert_eq!(
        std::fs::read_to_string(ws.root.join("notes.txt")).unwrap(),
        "done\n"
    );
}
