//! Roles in an assembled session: `switch_agent` changes the system prompt and model of the
//! next turn; the session's tools include the subagent tools.

use std::sync::Arc;

use cairn_engine::agents::AgentDef;
use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::FixedApprover;
use cairn_protocol::{ApprovalDecision, Event};
use cairn_runtime::agents::save_agents;
use cairn_runtime::{open_session, RunOptions};

async fn drain(mut s: cairn_engine::EventStream) -> Vec<Event> {
    let mut v = Vec::new();
    while let Some(e) = s.recv().await {
        v.push(e);
    }
    v
}

#[tokio::test(flavor = "multi_thread")]
async fn switch_agent_changes_prompt_and_model_for_the_next_turn() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut reg = cairn_engine::AgentRegistry::new();
    reg.add(
        AgentDef::new("reviewer", "reviews", "REVIEWER-PROMPT").with_model("review-model", None),
    )
    .unwrap();
    save_agents(state.path(), &reg).unwrap();
    let skill = ws.path().join(".agents/skills/changelog");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: changelog\ndescription: Keep CHANGELOG-99 in order\n---\nSteps.\n",
    )
    .unwrap();
    let llm = FakeLlm::new(vec![FakeReply::text("one"), FakeReply::text("two")]);
    let opts = RunOptions {
        workspace: Some(ws.path().to_path_buf()),
        state_dir: Some(state.path().to_path_buf()),
        model: Some("base-model".into()),
        ..RunOptions::default()
    };
    let a = open_session(
        opts,
        Some(Arc::new(llm.clone())),
        Arc::new(FixedApprover(ApprovalDecision::Deny)),
    )
    .unwrap();
    let names = a.session.with_tools(|r| r.names());
    for t in ["explore", "run_subagent", "input_subagent"] {
        assert!(names.iter().any(|n| n == t), "{t} missing from {names:?}");
    }
    drain(a.session.run("first")).await;
    assert!(a.switch_agent("nobody").await.is_err());
    let def = a.switch_agent("reviewer").await.unwrap();
    assert_eq!(def.name, "reviewer");
    assert_eq!(a.agents.read().unwrap().current().name, "reviewer");
    drain(a.session.run("second")).await;
    let reqs = llm.requests();
    assert_eq!(reqs[0].model, "base-model");
    assert!(!reqs[0].messages[0].text().contains("REVIEWER-PROMPT"));
    assert_eq!(reqs[1].model, "review-model");
    assert!(reqs[1].messages[0].text().starts_with("REVIEWER-PROMPT"));
    // The role's prompt replaces the session's, and the skills stay listed.
    assert!(reqs[0].messages[0].text().contains("CHANGELOG-99"));
    assert!(reqs[1].messages[0].text().contains("CHANGELOG-99"));
    a.close_mcp().await;
}
