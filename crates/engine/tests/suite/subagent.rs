//! The explore subagent: plan mode enforced by the engine, iteration cap with a final report,
//! events forwarded with their origin, parent interrupts reach the child.

use crate::common;

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{ExploreTool, LlmChunk, Session, ToolRegistry};
use cairn_protocol::{Event, Mode, ToolStatus, TurnStatus};
use common::*;
use serde_json::json;

fn child_tools() -> ToolRegistry {
    let mut reg = ToolRegistry::new();
    reg.register(echo_tool("read_file"));
    // Even if a write tool is registered for the child, plan mode refuses it.
    reg.register(write_tool());
    reg
}

/// An auto-mode session whose only tool is `explore`; parent and child share `llm`.
fn explore_session(dir: &TempDir, llm: &FakeLlm) -> Session {
    let cfg = config(dir, Mode::Auto);
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(ExploreTool::new(
        Arc::new(llm.clone()),
        cfg.clone(),
        child_tools(),
    )));
    Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .build()
}

fn subagent_events(ev: &[Event]) -> Vec<&cairn_protocol::SubagentEvent> {
    ev.iter()
        .filter_map(|e| match e {
            Event::SubagentEvent(s) => Some(s),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn the_explore_child_cannot_write_and_returns_only_its_report() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("e1", "explore", json!({"task": "find the parser"})),
        // child: tries to write, is refused, reads, reports
        FakeReply::tool(
            "w",
            "write_file",
            json!({"path": "evil.txt", "content": "x"}),
        ),
        FakeReply::tool("r", "read_file", json!({"path": "src/parser.rs"})),
        FakeReply::text("REPORT: the parser is in src/parser.rs"),
        // parent continues
        FakeReply::text("The parser lives in src/parser.rs."),
    ]);
    let s = explore_session(&dir, &llm);
    let ev = collect(s.run("where is the parser?")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    assert!(
        !dir.0.join("evil.txt").exists(),
        "plan mode blocked the write"
    );
    let sub = subagent_events(&ev);
    assert!(!sub.is_empty());
    let origin = &sub[0].origin;
    assert!(sub
        .iter()
        .all(|e| &e.origin == origin && e.parent_req_id == "e1" && e.agent == "explore"));
    assert_ne!(origin, &s.id());
    let denied = sub.iter().any(|e| {
        matches!(&*e.event, Event::ToolFinished(f) if f.name == "write_file" && f.status == ToolStatus::Denied)
    });
    assert!(denied, "the child's write was denied by the engine");
    // The parent's history has the report as the tool result, and none of the child's turns.
    let msgs = s.messages().await;
    let results: Vec<_> = msgs
        .iter()
        .filter_map(|m| match m {
            cairn_protocol::Message::Tool(r) => Some(r.content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        vec!["REPORT: the parser is in src/parser.rs".to_string()]
    );
    assert!(!msgs.iter().any(|m| m.text().contains("find the parser")
        && matches!(m, cairn_protocol::Message::User { .. })));
}

#[tokio::test]
async fn the_child_hits_its_iteration_cap_and_still_reports() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("e1", "explore", json!({"task": "dig"})),
        FakeReply::tool("r1", "read_file", json!({"path": "a"})),
        FakeReply::tool("r2", "read_file", json!({"path": "b"})),
        FakeReply::text("PARTIAL REPORT after the cap"),
        FakeReply::text("done"),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let tool =
        ExploreTool::new(Arc::new(llm.clone()), cfg.clone(), child_tools()).with_max_iterations(2);
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(tool));
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .build();
    let ev = collect(s.run("dig")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let child_end = subagent_events(&ev)
        .into_iter()
        .find_map(|e| match &*e.event {
            Event::TurnEnd(t) => Some(t.status),
            _ => None,
        });
    assert_eq!(child_end, Some(TurnStatus::MaxIterationsExceeded));
    let reqs = llm.requests();
    assert!(
        reqs[3].tools.is_empty(),
        "the finalize call offers no tools"
    );
    assert!(finished(&ev)
        .iter()
        .any(|f| f.name == "explore" && f.status == ToolStatus::Ok));
}

#[tokio::test]
async fn interrupting_the_parent_stops_the_child() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("e1", "explore", json!({"task": "slow"})),
        FakeReply::Hang(vec![LlmChunk::Text("thinking".into())]),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(ExploreTool::new(
        Arc::new(llm.clone()),
        cfg.clone(),
        child_tools(),
    )));
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .build();
    let mut stream = s.run("go");
    let mut ev = Vec::new();
    while let Some(e) = stream.recv().await {
        let child_delta =
            matches!(&e, Event::SubagentEvent(se) if matches!(*se.event, Event::AssistantDelta(_)));
        ev.push(e);
        if child_delta {
            s.interrupt();
        }
    }
    assert_eq!(turn_end(&ev).status, TurnStatus::Interrupted);
    let child_end = subagent_events(&ev)
        .into_iter()
        .find_map(|e| match &*e.event {
            Event::TurnEnd(t) => Some(t.status),
            _ => None,
        });
    assert_eq!(child_end, Some(TurnStatus::Interrupted));
}

#[tokio::test]
async fn the_childs_requests_count_in_the_parents_turn_usage() {
    use cairn_protocol::TokenUsage;
    let dir = TempDir::new();
    let usage = |input: u64| {
        LlmChunk::Usage(TokenUsage {
            input_tokens: input,
            output_tokens: 1,
            ..Default::default()
        })
    };
    let call = |id: &str, name: &str, args: serde_json::Value| {
        LlmChunk::ToolCall(cairn_protocol::ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: args.to_string(),
        })
    };
    let llm = FakeLlm::new(vec![
        // parent: asks the child (100 tokens)
        FakeReply::Chunks(vec![
            call("e1", "explore", json!({"task": "look"})),
            usage(100),
        ]),
        // child: one tool round (300), then its report (500)
        FakeReply::Chunks(vec![
            call("r", "read_file", json!({"path": "a.rs"})),
            usage(300),
        ]),
        FakeReply::Chunks(vec![LlmChunk::Text("REPORT".into()), usage(500)]),
        // parent answers (20)
        FakeReply::Chunks(vec![LlmChunk::Text("done".into()), usage(20)]),
    ]);
    let s = explore_session(&dir, &llm);
    let ev = collect(s.run("look around")).await;
    let end = turn_end(&ev);
    assert_eq!(end.status, TurnStatus::Completed);
    let u = end.usage.expect("usage");
    assert_eq!(
        (u.input_tokens, u.output_tokens),
        (920, 4),
        "parent 100 + 20, child 300 + 500"
    );
}

/// The parent's deny rules bind the explore child: `read_file secrets/key.txt` there is
/// denied as it is in the parent (the child runs in its own plan mode all the same).
#[tokio::test]
async fn the_explore_child_obeys_the_parents_deny_rules() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("e1", "explore", json!({"task": "read the key"})),
        FakeReply::tool("r", "read_file", json!({"path": "secrets/key.txt"})),
        FakeReply::text("REPORT: could not read it"),
        FakeReply::text("done"),
    ]);
    let cfg = config(&dir, Mode::Auto);
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(ExploreTool::new(
        Arc::new(llm.clone()),
        cfg.clone(),
        child_tools(),
    )));
    let mut rules = cairn_policy::RuleSet::new();
    rules
        .add_spec(
            &cairn_policy::RuleSpec {
                rule: "*(secrets/**)".into(),
                decision: cairn_policy::RuleDecision::Deny,
                matches: vec![],
                not_match: vec![],
                project: None,
            },
            "user settings",
        )
        .unwrap();
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .permission_rules(rules, cairn_engine::ShellPolicy::Approve, false)
        .build();
    let ev = collect(s.run("read the key")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let read = subagent_events(&ev)
        .into_iter()
        .find_map(|e| match &*e.event {
            Event::ToolFinished(f) if f.name == "read_file" => Some(f.status),
            _ => None,
        });
    assert_eq!(
        read,
        Some(ToolStatus::Denied),
        "the deny rule binds the child"
    );
}
