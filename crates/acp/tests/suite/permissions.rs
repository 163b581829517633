//! Every approval is a `session/request_permission` carrying the tool call, its true kind
//! and its diff; allow writes, reject and cancel leave nothing done; `/undo` puts files back.

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, SessionUpdate, StopReason, ToolCallContent, ToolCallStatus, ToolKind,
};
use cairn_testkit::Reply;
use serde_json::json;

use super::harness::{Answer, Harness};

fn write(h: &Harness, content: &str) {
    h.mock.push(Reply::tool_call(
        "w1",
        "write_file",
        json!({"path": "notes.txt", "content": content}),
    ));
    h.mock.push(Reply::text("written"));
}

/// The diffs in a list of tool call contents.
fn diffs(content: &[ToolCallContent]) -> Vec<(String, Option<String>, String)> {
    content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Diff(d) => Some((
                d.path.display().to_string(),
                d.old_text.clone(),
                d.new_text.clone(),
            )),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_allowed_edit_is_written_and_its_call_carries_the_diff() {
    let h = Harness::start().await;
    std::fs::write(h.ws.path().join("notes.txt"), "old line\n").unwrap();
    let sid = h.session().await.session_id.to_string();
    write(&h, "new line\n");
    h.answer_with(Answer::Select("allow_once"));
    let r = h.prompt(&sid, "edit").await.unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert_eq!(
        std::fs::read_to_string(h.ws.path().join("notes.txt")).unwrap(),
        "new line\n"
    );
    let perms = h.seen.permissions.lock().unwrap().clone();
    assert_eq!(perms.len(), 1);
    let p = &perms[0];
    assert_eq!(p.tool_call.tool_call_id.to_string(), "w1");
    assert_eq!(p.tool_call.fields.kind, Some(ToolKind::Edit));
    let d = diffs(p.tool_call.fields.content.as_deref().unwrap_or_default());
    assert_eq!(d.len(), 1, "{p:?}");
    assert!(d[0].0.ends_with("notes.txt"));
    assert_eq!(d[0].1.as_deref(), Some("old line\n"));
    assert_eq!(d[0].2, "new line\n");
    // Options: allow once, always (session and project: write_file offers an allowance), reject.
    let kinds: Vec<PermissionOptionKind> = p.options.iter().map(|o| o.kind).collect();
    assert!(kinds.contains(&PermissionOptionKind::AllowOnce));
    assert!(kinds.contains(&PermissionOptionKind::RejectOnce));
    // The tool call: an edit (never a read kind), pending, then completed with the diff.
    let ups = h.seen.updates();
    let call = ups
        .iter()
        .find_map(|u| match u {
            SessionUpdate::ToolCall(c) => Some(c.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(call.kind, ToolKind::Edit);
    assert!(call.locations[0].path.ends_with("notes.txt"));
    assert_eq!(diffs(&call.content)[0].2, "new line\n");
    let done = ups
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCallUpdate(c)
                if c.fields.status == Some(ToolCallStatus::Completed) =>
            {
                Some(c.clone())
            }
            _ => None,
        })
        .next_back()
        .expect("completed");
    assert_eq!(done.fields.kind, Some(ToolKind::Edit));
    let d = diffs(done.fields.content.as_deref().unwrap_or_default());
    assert_eq!(d[0].1.as_deref(), Some("old line\n"));
    assert_eq!(d[0].2, "new line\n");
    // Diffs carry newText and oldText on the wire.
    let wire = serde_json::to_value(&done).unwrap();
    assert!(wire.to_string().contains("\"newText\""), "{wire}");
    assert!(wire.to_string().contains("\"oldText\""), "{wire}");
    h.finish().await.unwrap();
}

#[tokio::test]
async fn a_rejected_edit_leaves_the_file_untouched_and_was_shown_with_its_diff() {
    let h = Harness::start().await;
    std::fs::write(h.ws.path().join("notes.txt"), "keep me\n").unwrap();
    let sid = h.session().await.session_id.to_string();
    write(&h, "overwritten\n");
    h.answer_with(Answer::Select("reject"));
    h.prompt(&sid, "edit").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(h.ws.path().join("notes.txt")).unwrap(),
        "keep me\n"
    );
    let p = h.seen.permissions.lock().unwrap()[0].clone();
    let d = diffs(p.tool_call.fields.content.as_deref().unwrap_or_default());
    assert_eq!(d[0].2, "overwritten\n");
    assert!(h.seen.updates().iter().any(|u| matches!(u,
        SessionUpdate::ToolCallUpdate(c) if c.fields.status == Some(ToolCallStatus::Failed))));
    h.finish().await.unwrap();
}

#[tokio::test]
async fn a_cancelled_permission_request_does_nothing() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    write(&h, "should not exist\n");
    h.answer_with(Answer::Cancel);
    h.prompt(&sid, "edit").await.unwrap();
    assert!(!h.ws.path().join("notes.txt").exists());
    h.finish().await.unwrap();
}

#[tokio::test]
async fn a_command_with_operators_offers_no_always() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.mock.push(Reply::tool_call(
        "c1",
        "run_shell",
        json!({"command": "echo a && echo b"}),
    ));
    h.mock.push(Reply::text("ok"));
    h.answer_with(Answer::Select("reject"));
    h.prompt(&sid, "run").await.unwrap();
    let p = h.seen.permissions.lock().unwrap()[0].clone();
    assert!(
        p.options
            .iter()
            .all(|o| o.kind != PermissionOptionKind::AllowAlways),
        "{:?}",
        p.options
    );
    // A plain command offers "always" for the session and the project.
    h.seen.clear();
    h.mock.push(Reply::tool_call(
        "c2",
        "run_shell",
        json!({"command": "echo a"}),
    ));
    h.mock.push(Reply::text("ok"));
    h.prompt(&sid, "run").await.unwrap();
    let p = h.seen.permissions.lock().unwrap()[0].clone();
    let always: Vec<&str> = p
        .options
        .iter()
        .filter(|o| o.kind == PermissionOptionKind::AllowAlways)
        .map(|o| o.option_id.0.as_ref())
        .collect();
    assert_eq!(always, ["allow_always", "allow_project"]);
    h.finish().await.unwrap();
}

#[tokio::test]
async fn allow_always_stops_asking_for_the_session() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.answer_with(Answer::Select("allow_always"));
    h.mock.push(Reply::tool_call(
        "c1",
        "run_shell",
        json!({"command": "echo one"}),
    ));
    h.mock.push(Reply::text("ok"));
    h.prompt(&sid, "run").await.unwrap();
    assert_eq!(h.seen.permissions.lock().unwrap().len(), 1);
    h.seen.clear();
    h.mock.push(Reply::tool_call(
        "c2",
        "run_shell",
        json!({"command": "echo two"}),
    ));
    h.mock.push(Reply::text("ok"));
    h.prompt(&sid, "run").await.unwrap();
    assert!(h.seen.permissions.lock().unwrap().is_empty());
    assert!(h.seen.updates().iter().any(|u| matches!(u,
        SessionUpdate::ToolCallUpdate(c) if c.fields.status == Some(ToolCallStatus::Completed))));
    h.finish().await.unwrap();
}

#[tokio::test]
async fn undo_from_the_client_puts_the_file_back() {
    let h = Harness::start().await;
    std::fs::write(h.ws.path().join("notes.txt"), "original\n").unwrap();
    let sid = h.session().await.session_id.to_string();
    write(&h, "changed\n");
    h.answer_with(Answer::Select("allow_once"));
    h.prompt(&sid, "edit").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(h.ws.path().join("notes.txt")).unwrap(),
        "changed\n"
    );
    h.seen.clear();
    let r = h.prompt(&sid, "/undo").await.unwrap();
    assert_eq!(r.stop_reason, StopReason::EndTurn);
    assert_eq!(
        std::fs::read_to_string(h.ws.path().join("notes.txt")).unwrap(),
        "original\n"
    );
    assert!(h.seen.text().contains("Restored"), "{}", h.seen.text());
    h.finish().await.unwrap();
}

#[tokio::test]
async fn a_plan_and_a_question_are_asked_as_permission_requests() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    // A plan: "accept" goes back as an accepted review.
    h.answer_with(Answer::Select("accept"));
    h.mock.push(Reply::tool_call(
        "p1",
        "propose_plan",
        json!({"plan": "1. read\n2. fix"}),
    ));
    h.mock.push(Reply::text("ok"));
    h.prompt(&sid, "plan").await.unwrap();
    let p = h.seen.permissions.lock().unwrap()[0].clone();
    assert_eq!(p.tool_call.fields.kind, Some(ToolKind::Think));
    assert!(p
        .tool_call
        .fields
        .title
        .as_deref()
        .unwrap_or_default()
        .contains("2. fix"));
    let body = h.mock.requests().last().unwrap().body.to_string();
    assert!(body.contains("The user accepted the plan"), "{body}");
    // A question with options: the chosen option is the answer.
    h.seen.clear();
    h.answer_with(Answer::Select("answer_1"));
    h.mock.push(Reply::tool_call(
        "q1",
        "ask_user",
        json!({"question": "Which one?", "options": ["red", "blue"]}),
    ));
    h.mock.push(Reply::text("ok"));
    h.prompt(&sid, "ask").await.unwrap();
    let p = h.seen.permissions.lock().unwrap()[0].clone();
    let names: Vec<&str> = p.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["red", "blue", "Decline"]);
    let body = h.mock.requests().last().unwrap().body.to_string();
    assert!(body.contains("blue"), "{body}");
    h.finish().await.unwrap();
}

#[tokio::test]
async fn reads_and_searches_carry_their_read_kinds() {
    let h = Harness::start().await;
    std::fs::write(h.ws.path().join("notes.txt"), "x\n").unwrap();
    let sid = h.session().await.session_id.to_string();
    h.mock.push(
        Reply::tool_call("r1", "read_file", json!({"path": "notes.txt"})).with_tool_call(
            "g1",
            "grep",
            json!({"pattern": "x"}),
        ),
    );
    h.mock.push(Reply::text("ok"));
    h.prompt(&sid, "look").await.unwrap();
    let kinds: Vec<(String, ToolKind)> = h
        .seen
        .updates()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCall(c) => Some((c.tool_call_id.to_string(), c.kind)),
            _ => None,
        })
        .collect();
    assert!(kinds.contains(&("r1".into(), ToolKind::Read)), "{kinds:?}");
    assert!(
        kinds.contains(&("g1".into(), ToolKind::Search)),
        "{kinds:?}"
    );
    // Neither asked for permission.
    assert!(h.seen.permissions.lock().unwrap().is_empty());
    h.finish().await.unwrap();
}
