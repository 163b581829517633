//! An agent turn (scripted LLM, real engine session, real tools) answers an interactive
//! `read -p` prompt through a command session and gets the program's reply.

use crate::common;

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::FixedApprover;
use cairn_protocol::{ApprovalDecision, Event, Mode, ToolStatus, TurnStatus};
use cairn_tools::core_tools;
use common::{collect, session, tool_results, Ws};
use serde_json::json;

#[tokio::test]
async fn an_agent_turn_answers_a_read_prompt_through_a_command_session() {
    let ws = Ws::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "c1",
            "exec_command",
            json!({
                "command": "read -p 'Deploy to staging? [y/n] ' ans; echo \"answer=$ans\"; [ \"$ans\" = y ] && echo deployed",
                "description": "Start the deploy script"
            }),
        ),
        FakeReply::tool(
            "c2",
            "input_command",
            json!({"session_id": "cmd-1", "input": "y\n"}),
        ),
        FakeReply::text("The script deployed to staging."),
    ]);
    let s = session(
        &ws,
        &llm,
        core_tools(),
        Arc::new(FixedApprover(ApprovalDecision::Once)),
        Mode::Interactive,
    );
    let events = collect(s.run("deploy it")).await;

    let Some(Event::TurnEnd(end)) = events.last() else {
        panic!("no turn_end: {events:?}");
    };
    assert_eq!(end.status, TurnStatus::Completed);
    let finished: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished(f) => Some((f.name.clone(), f.status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [
            ("exec_command".to_string(), ToolStatus::Ok),
            ("input_command".to_string(), ToolStatus::Ok)
        ]
    );
    // The prompt was streamed as partial output while the call ran.
    let partial: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolOutput(o) if o.req_id == "c1" => Some(o.text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        partial
            .iter()
            .any(|t| t.contains("Deploy to staging? [y/n]")),
        "{partial:?}"
    );
    // The call description reached the UI with the proposal.
    assert!(events.iter().any(|e| matches!(e,
        Event::ToolProposed(p) if p.arguments["description"] == "Start the deploy script")));

    // What the model saw: the prompt, then the program's reply to the answer.
    let results = tool_results(&llm);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].1.contains("Deploy to staging? [y/n]"),
        "{}",
        results[0].1
    );
    assert!(
        results[0].1.contains("session cmd-1 is still running"),
        "{}",
        results[0].1
    );
    assert!(results[1].1.contains("answer=y"), "{}", results[1].1);
    assert!(results[1].1.contains("deployed"), "{}", results[1].1);
    assert!(results[1].1.contains("exit code: 0"), "{}", results[1].1);
}

#[tokio::test]
async fn run_shell_streams_partial_output_before_it_finishes() {
    let ws = Ws::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "r1",
            "run_shell",
            json!({"command": "echo first; sleep 0.3; echo second"}),
        ),
        FakeReply::text("ok"),
    ]);
    let s = session(
        &ws,
        &llm,
        core_tools(),
        Arc::new(FixedApprover(ApprovalDecision::Once)),
        Mode::Interactive,
    );
    let events = collect(s.run("go")).await;
    let pos = |pred: &dyn Fn(&Event) -> bool| events.iter().position(pred).unwrap();
    let first =
        pos(&|e| matches!(e, Event::ToolOutput(o) if o.req_id == "r1" && o.text.contains("first")));
    let finished = pos(&|e| matches!(e, Event::ToolFinished(f) if f.req_id == "r1"));
    assert!(first < finished);
    let streamed: String = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolOutput(o) if o.req_id == "r1" => Some(o.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "first\nsecond\n");
    assert_eq!(tool_results(&llm)[0].1, "first\nsecond\n[exit code: 0]");
}

#[tokio::test]
async fn the_saved_copy_of_an_oversized_result_can_be_read_back() {
    let ws = Ws::new();
    let saved = ws.state.join("tool-results").join("big.txt");
    let saved = saved.display().to_string();
    // A saved attachment (the user message names its absolute path) is readable too.
    let attached = ws.state.join("attachments").join("1-notes.txt");
    std::fs::create_dir_all(attached.parent().unwrap()).unwrap();
    std::fs::write(&attached, "attached notes\n").unwrap();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("big", "run_shell", json!({"command": "seq 1 100000"})),
        FakeReply::tools(&[
            (
                "r",
                "read_file",
                json!({"path": saved, "offset": 50000, "limit": 2}),
            ),
            ("g", "grep", json!({"pattern": "^77777$", "path": saved})),
            (
                "a",
                "read_file",
                json!({"path": attached.display().to_string()}),
            ),
            (
                "w",
                "write_file",
                json!({"path": saved, "content": "overwritten"}),
            ),
        ]),
        FakeReply::text("done"),
    ]);
    let s = session(
        &ws,
        &llm,
        core_tools(),
        Arc::new(FixedApprover(ApprovalDecision::Once)),
        Mode::Auto,
    );
    collect(s.run("count")).await;
    let results = tool_results(&llm);
    let (_, shell) = &results[0];
    assert!(shell.contains(&saved), "the model is told where: {shell}");
    let (_, read) = &results[1];
    assert!(read.contains("50000") && read.contains("50001"), "{read}");
    let (_, grep) = &results[2];
    assert!(grep.contains("77777"), "{grep}");
    let (_, attachment) = &results[3];
    assert!(attachment.contains("attached notes"), "{attachment}");
    let (_, write) = &results[4];
    assert!(write.contains("outside"), "read-only: {write}");
    assert!(
        std::fs::read_to_string(ws.state.join("tool-results/big.txt"))
            .unwrap()
            .starts_with("1\n2\n")
    );
}

#[tokio::test]
async fn a_write_of_the_same_content_is_a_typed_no_change_and_touches_nothing() {
    let ws = Ws::new();
    ws.write("notes.md", "# Notes\nkeep\n");
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "w1",
            "write_file",
            json!({"path": "notes.md", "content": "# Notes\nkeep\n"}),
        ),
        FakeReply::tool(
            "w2",
            "write_file",
            json!({"path": "notes.md", "content": "# Notes\nchanged\n"}),
        ),
        FakeReply::text("Done."),
    ]);
    let s = session(
        &ws,
        &llm,
        core_tools(),
        Arc::new(FixedApprover(ApprovalDecision::Once)),
        Mode::Interactive,
    );
    let events = collect(s.run("write the notes twice")).await;
    let finished: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished(f) => Some((f.req_id.clone(), f.status, f.unchanged)),
            _ => None,
        })
        .collect();
    assert_eq!(
        finished,
        [
            ("w1".to_string(), ToolStatus::Ok, true),
            ("w2".to_string(), ToolStatus::Ok, false)
        ],
        "only the write that changed nothing is marked unchanged"
    );
    // The flag is left out of the event when false (older readers see what they saw).
    let json = events
        .iter()
        .find_map(|e| match e {
            Event::ToolFinished(f) if f.req_id == "w2" => serde_json::to_value(e).ok(),
            _ => None,
        })
        .unwrap();
    assert!(json["data"].get("unchanged").is_none(), "{json}");
    assert_eq!(
        std::fs::read_to_string(ws.root.join("notes.md")).unwrap(),
        "# Notes\nchanged\n"
    );
}

#[tokio::test]
async fn each_proposed_call_carries_its_subject_as_the_tool_says_it() {
    let ws = Ws::new();
    let patch =
        "*** Begin Patch\n*** Add File: a.txt\n+one\n*** Add File: b/c.txt\n+two\n*** End Patch\n";
    let llm = FakeLlm::new(vec![
        FakeReply::tool("p1", "run_shell", json!({"command": "echo hi"})),
        FakeReply::tool("p2", "apply_patch", json!({ "patch": patch })),
        FakeReply::tool("p3", "grep", json!({"pattern": "needle"})),
        FakeReply::tool("p4", "todo_write", json!({"todos": []})),
        FakeReply::text("done"),
    ]);
    let s = session(
        &ws,
        &llm,
        core_tools(),
        Arc::new(FixedApprover(ApprovalDecision::Once)),
        Mode::Auto,
    );
    let events = collect(s.run("do the four things")).await;
    let subjects: Vec<(String, Option<String>)> = events
        .iter()
        .filter_map(|e| match e {
            Event::ToolProposed(p) => Some((p.req_id.clone(), p.subject.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        subjects,
        [
            ("p1".to_string(), Some("echo hi".to_string())),
            // A patch's subject is the files it writes, which its arguments only hold in text.
            ("p2".to_string(), Some("a.txt, b/c.txt".to_string())),
            ("p3".to_string(), Some("needle".to_string())),
            ("p4".to_string(), None),
        ]
    );
    // On the wire: present when the tool names one, left out when it does not.
    let wire: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| matches!(e, Event::ToolProposed(_)))
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(wire[0]["data"]["subject"], "echo hi");
    assert!(wire[3]["data"].get("subject").is_none(), "{}", wire[3]);
}
