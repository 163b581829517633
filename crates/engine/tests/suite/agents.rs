//! General subagents (`run_subagent` / `input_subagent`) and agent roles: model override seen
//! by the child's client, depth and concurrency limits as clean tool errors, approval
//! inheritance naming the child, continuation, dispose, parent interrupts, role switching.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use cairn_engine::agents::{
    switch_role, AgentDef, AgentRegistry, LlmFactory, SubagentLimits, SubagentRunner, ToolsFactory,
};
use cairn_engine::prompt::{Environment, Lang};
use cairn_engine::testing::{FakeLlm, FakeReply, FnTool, ScriptedApprover};
use cairn_engine::{EngineConfig, LlmChunk, LlmClient, Session, ToolOutput, ToolRegistry};
use cairn_protocol::{ApprovalDecision, Event, Message, Mode, ToolMeta, ToolStatus, TurnStatus};
use common::*;
use serde_json::json;

fn child_tools() -> ToolsFactory {
    Arc::new(|| {
        let mut reg = ToolRegistry::new();
        reg.register(echo_tool("read_file"));
        reg.register(write_tool());
        reg
    })
}

/// A parent session whose registry holds the subagent tools of `runner`.
fn parent(cfg: EngineConfig, llm: &FakeLlm, runner: &SubagentRunner) -> Session {
    let (run, input) = runner.tools();
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(run));
    reg.register(Arc::new(input));
    Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .build()
}

fn runner(cfg: &EngineConfig, llm: &FakeLlm) -> SubagentRunner {
    SubagentRunner::new(Arc::new(llm.clone()), "main", cfg.clone(), child_tools())
}

fn sub_events(ev: &[Event]) -> Vec<&cairn_protocol::SubagentEvent> {
    ev.iter()
        .filter_map(|e| match e {
            Event::SubagentEvent(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// Every nested event, flattened (grandchildren included).
fn nested(ev: &Event) -> Vec<&Event> {
    match ev {
        Event::SubagentEvent(s) => {
            let mut v = vec![&*s.event];
            v.extend(nested(&s.event));
            v
        }
        _ => Vec::new(),
    }
}

fn tool_results(msgs: &[Message]) -> Vec<String> {
    msgs.iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.content.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_model_override_reaches_the_childs_requests() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![
        FakeReply::tool(
            "s1",
            "run_subagent",
            json!({"task": "summarise", "agent_id": "cowork", "model": "other-model", "provider": "other"}),
        ),
        FakeReply::text("parent done"),
    ]);
    let other = FakeLlm::new(vec![FakeReply::text("CHILD REPORT")]);
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let factory: LlmFactory = {
        let (other, asked) = (other.clone(), asked.clone());
        Arc::new(move |m| {
            asked.lock().unwrap().push(m.clone());
            Ok(Arc::new(other.clone()) as Arc<dyn LlmClient>)
        })
    };
    let cfg = config(&dir, Mode::Interactive);
    let r = runner(&cfg, &main).with_llm_factory(factory);
    let s = parent(cfg, &main, &r);
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let reqs = other.requests();
    assert_eq!(reqs.len(), 1, "the child asked the override's client");
    assert_eq!(reqs[0].model, "other-model");
    assert!(reqs[0].messages[0].text().contains("Cairn"));
    assert_eq!(asked.lock().unwrap()[0].provider, "other");
    assert!(main.requests().iter().all(|r| r.model == "fake-model"));
    let sub = sub_events(&ev);
    assert!(
        !sub.is_empty()
            && sub
                .iter()
                .all(|e| e.agent == "cowork" && e.parent_req_id == "s1")
    );
    assert_ne!(sub[0].origin, s.id());
    let results = tool_results(&s.messages().await);
    assert!(results[0].contains("CHILD REPORT") && results[0].contains("other-model"));
}

#[tokio::test]
async fn a_same_provider_override_uses_the_parents_client_with_the_new_model() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![
        FakeReply::tool(
            "s1",
            "run_subagent",
            json!({"task": "t", "model": "small-model", "provider": "main"}),
        ),
        FakeReply::text("CHILD"),
        FakeReply::text("done"),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let s = parent(cfg.clone(), &main, &runner(&cfg, &main));
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let models: Vec<String> = main.requests().iter().map(|r| r.model.clone()).collect();
    assert_eq!(models, ["fake-model", "small-model", "fake-model"]);
}

#[tokio::test]
async fn half_a_model_override_or_an_unknown_role_is_a_clean_tool_error() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![
        FakeReply::tools(&[
            ("a", "run_subagent", json!({"task": "t", "model": "m"})),
            (
                "b",
                "run_subagent",
                json!({"task": "t", "agent_id": "ghost"}),
            ),
            (
                "c",
                "run_subagent",
                json!({"task": "t", "model": "m", "provider": "elsewhere"}),
            ),
        ]),
        FakeReply::text("ok"),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let s = parent(cfg.clone(), &main, &runner(&cfg, &main));
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let f = finished(&ev);
    assert_eq!(f.len(), 3);
    assert!(f.iter().all(|f| f.status == ToolStatus::Error), "{f:?}");
    let results = tool_results(&s.messages().await);
    assert!(
        results[0].contains("both `model` and `provider`"),
        "{}",
        results[0]
    );
    assert!(results[1].contains("unknown agent `ghost`") && results[1].contains("cowork"));
    assert!(
        results[2].contains("only `main` is configured"),
        "{}",
        results[2]
    );
    assert!(sub_events(&ev).is_empty(), "no child was started");
}

#[tokio::test]
async fn a_depth_limit_breach_is_a_clean_tool_error() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![
        FakeReply::tool("s1", "run_subagent", json!({"task": "delegate further"})),
        // child (depth 1) tries to spawn a grandchild
        FakeReply::tool("g1", "run_subagent", json!({"task": "deeper"})),
        FakeReply::text("CHILD did it alone"),
        FakeReply::text("parent done"),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let limits = SubagentLimits {
        max_depth: 1,
        ..Default::default()
    };
    let r = runner(&cfg, &main).with_limits(limits);
    let s = parent(cfg, &main, &r);
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let child_fail = sub_events(&ev)
        .into_iter()
        .find_map(|e| match &*e.event {
            Event::ToolFinished(f) if f.name == "run_subagent" => Some(f.clone()),
            _ => None,
        })
        .expect("the child's run_subagent finished");
    assert_eq!(child_fail.status, ToolStatus::Error);
    assert!(child_fail.reason.unwrap().contains("depth limit"));
    assert_eq!(main.requests().len(), 4, "no grandchild request was made");
    let results = tool_results(&s.messages().await);
    assert!(results[0].contains("CHILD did it alone"));
}

#[tokio::test]
async fn the_concurrency_limit_is_a_clean_tool_error() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![
        FakeReply::tool("s1", "run_subagent", json!({"task": "t"})),
        FakeReply::tool("g1", "run_subagent", json!({"task": "t2"})),
        FakeReply::text("CHILD"),
        FakeReply::text("parent done"),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let limits = SubagentLimits {
        max_concurrent: 1,
        ..Default::default()
    };
    let s = parent(cfg.clone(), &main, &runner(&cfg, &main).with_limits(limits));
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let reason = sub_events(&ev)
        .into_iter()
        .find_map(|e| match &*e.event {
            Event::ToolFinished(f) if f.name == "run_subagent" => f.reason.clone(),
            _ => None,
        })
        .unwrap();
    assert!(reason.contains("concurrency limit"), "{reason}");
}

#[tokio::test]
async fn input_subagent_continues_the_same_child_until_closed() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![
        FakeReply::tool("s1", "run_subagent", json!({"task": "FIRST-TASK"})),
        FakeReply::text("first answer"),
        FakeReply::text("parent ack"),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let s = parent(cfg.clone(), &main, &runner(&cfg, &main));
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let first = tool_results(&s.messages().await)[0].clone();
    let id = first
        .split("subagent_id: \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap()
        .to_string();
    let origin = sub_events(&ev)[0].origin.clone();
    assert!(origin.ends_with(&id));
    main.push(FakeReply::tool(
        "i1",
        "input_subagent",
        json!({"subagent_id": id, "input": "SECOND-INPUT", "close": true}),
    ));
    main.push(FakeReply::text("second answer"));
    main.push(FakeReply::text("parent done"));
    main.push(FakeReply::tool(
        "i2",
        "input_subagent",
        json!({"subagent_id": id, "input": "again"}),
    ));
    main.push(FakeReply::text("parent done again"));
    let ev2 = collect(s.run("continue")).await;
    assert_eq!(turn_end(&ev2).status, TurnStatus::Completed);
    assert!(
        sub_events(&ev2).iter().all(|e| e.origin == origin),
        "same child"
    );
    // The child's second request carries its first task and answer: its own context.
    let child_req = &main.requests()[4];
    let texts: Vec<String> = child_req.messages.iter().map(|m| m.text()).collect();
    assert!(texts.iter().any(|t| t == "FIRST-TASK"));
    assert!(texts.iter().any(|t| t == "first answer"));
    assert!(texts.iter().any(|t| t == "SECOND-INPUT"));
    // The parent's history never holds the child's turns.
    let parent_texts: Vec<String> = s.messages().await.iter().map(|m| m.text()).collect();
    assert!(!parent_texts.iter().any(|t| t == "FIRST-TASK"));
    let ev3 = collect(s.run("once more")).await;
    let f = finished(&ev3);
    assert_eq!(
        f[0].status,
        ToolStatus::Error,
        "a closed child cannot be continued"
    );
    assert!(f[0].reason.clone().unwrap().contains("no open subagent"));
}

#[tokio::test]
async fn children_inherit_the_parent_approver_and_say_who_asks() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![
        FakeReply::tool("s1", "run_subagent", json!({"task": "write it"})),
        FakeReply::tool(
            "w1",
            "write_file",
            json!({"path": "child.txt", "content": "hi"}),
        ),
        FakeReply::text("CHILD wrote"),
        FakeReply::text("parent done"),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let approver = ScriptedApprover::new(vec![], ApprovalDecision::Once);
    let (run, input) = runner(&cfg, &main).tools();
    let mut reg = ToolRegistry::new();
    reg.register(Arc::new(run));
    reg.register(Arc::new(input));
    let s = Session::builder(cfg, Arc::new(main.clone()))
        .tools(reg)
        .approver(Arc::new(approver.clone()))
        .build();
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    assert!(
        dir.0.join("child.txt").exists(),
        "approved by the parent's approver"
    );
    let seen = approver.seen();
    assert_eq!(seen.len(), 1, "only the child's write needed approval");
    assert_eq!(seen[0].name, "write_file");
    assert!(
        seen[0].reason.starts_with("[subagent code "),
        "{}",
        seen[0].reason
    );
    let origin = &sub_events(&ev)[0].origin;
    assert!(seen[0]
        .reason
        .contains(&cairn_engine::agents::short_id(origin)));
    assert!(sub_events(&ev)
        .iter()
        .any(|e| matches!(&*e.event, Event::PermissionRequired(p) if p.name == "write_file")));
}

#[tokio::test]
async fn a_plan_mode_parent_gives_a_plan_mode_child() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![
        FakeReply::tool("s1", "run_subagent", json!({"task": "write it"})),
        FakeReply::tool(
            "w1",
            "write_file",
            json!({"path": "nope.txt", "content": "x"}),
        ),
        FakeReply::text("CHILD could not write"),
        FakeReply::text("parent done"),
    ]);
    let cfg = config(&dir, Mode::Plan);
    let s = parent(cfg.clone(), &main, &runner(&cfg, &main));
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    assert!(!dir.0.join("nope.txt").exists());
    assert!(ev.iter().flat_map(nested).any(
        |e| matches!(e, Event::ToolFinished(f) if f.name == "write_file" && f.status == ToolStatus::Denied)
    ));
}

/// Sets a flag when dropped: stands in for a child's command sessions.
struct Resource(Arc<AtomicBool>);
impl Drop for Resource {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

async fn eventually(flag: &AtomicBool) -> bool {
    for _ in 0..200 {
        if flag.load(Ordering::SeqCst) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn dispose_releases_the_childs_command_sessions() {
    let dir = TempDir::new();
    let released = Arc::new(AtomicBool::new(false));
    let tools: ToolsFactory = {
        let released = released.clone();
        Arc::new(move || {
            let res = Arc::new(Resource(released.clone()));
            let mut reg = ToolRegistry::new();
            reg.register(FnTool::new(
                "exec_command",
                ToolMeta::read_only("shell"),
                move |_, _| {
                    let _held = res.clone();
                    async move { Ok(ToolOutput::text("started")) }
                },
            ));
            reg
        })
    };
    let main = FakeLlm::new(vec![
        FakeReply::tool("s1", "run_subagent", json!({"task": "start a server"})),
        FakeReply::tool("x", "exec_command", json!({})),
        FakeReply::text("CHILD started it"),
        FakeReply::text("parent done"),
    ]);
    let cfg = config(&dir, Mode::Auto);
    let r = SubagentRunner::new(Arc::new(main.clone()), "main", cfg.clone(), tools);
    let s = parent(cfg, &main, &r);
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        !released.load(Ordering::SeqCst),
        "an open child keeps its sessions"
    );
    let id = cairn_engine::agents::short_id(&sub_events(&ev)[0].origin);
    main.push(FakeReply::tool(
        "c",
        "input_subagent",
        json!({"subagent_id": id, "close": true}),
    ));
    main.push(FakeReply::text("closed it"));
    let ev2 = collect(s.run("close it")).await;
    assert_eq!(finished(&ev2)[0].status, ToolStatus::Ok);
    assert!(
        eventually(&released).await,
        "closing the child released its sessions"
    );
}

#[tokio::test]
async fn interrupting_the_parent_stops_a_running_subagent() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![
        FakeReply::tool("s1", "run_subagent", json!({"task": "slow"})),
        FakeReply::Hang(vec![LlmChunk::Text("working".into())]),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let s = parent(cfg.clone(), &main, &runner(&cfg, &main));
    let mut stream = s.run("go");
    let mut ev = Vec::new();
    let done = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(e) = stream.recv().await {
            let child_delta = matches!(&e, Event::SubagentEvent(se) if matches!(*se.event, Event::AssistantDelta(_)));
            ev.push(e);
            if child_delta {
                s.interrupt();
            }
        }
    })
    .await;
    assert!(done.is_ok());
    assert_eq!(turn_end(&ev).status, TurnStatus::Interrupted);
    let child_end = sub_events(&ev).into_iter().find_map(|e| match &*e.event {
        Event::TurnEnd(t) => Some(t.status),
        _ => None,
    });
    assert_eq!(child_end, Some(TurnStatus::Interrupted));
}

#[tokio::test]
async fn a_user_role_runs_with_its_prompt_and_model() {
    let dir = TempDir::new();
    let mut agents = AgentRegistry::new();
    agents
        .add(AgentDef::new("analyst", "data", "ANALYST-PROMPT").with_model("analyst-model", None))
        .unwrap();
    let main = FakeLlm::new(vec![
        FakeReply::tool(
            "s1",
            "run_subagent",
            json!({"task": "t", "agent_id": "analyst"}),
        ),
        FakeReply::text("numbers"),
        FakeReply::text("done"),
    ]);
    let cfg = config(&dir, Mode::Interactive);
    let r = runner(&cfg, &main).with_agents(Arc::new(RwLock::new(agents)));
    let s = parent(cfg, &main, &r);
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Completed);
    let child = &main.requests()[1];
    assert_eq!(child.model, "analyst-model");
    assert!(child.messages[0].text().starts_with("ANALYST-PROMPT"));
    assert!(sub_events(&ev).iter().all(|e| e.agent == "analyst"));
}

#[tokio::test]
async fn switching_roles_changes_the_system_prompt_and_model_of_the_next_turn() {
    let dir = TempDir::new();
    let main = FakeLlm::new(vec![FakeReply::text("one"), FakeReply::text("two")]);
    let s = session(&dir, Mode::Interactive, &main, ToolRegistry::new());
    collect(s.run("first")).await;
    let mut agents = AgentRegistry::new();
    agents
        .add(AgentDef::new("poet", "verse", "POET-PROMPT").with_model("poet-model", None))
        .unwrap();
    let env = Environment {
        workspace: "/w".into(),
        ..Default::default()
    };
    assert!(switch_role(&s, &mut agents, "ghost", Lang::En, &env, &[])
        .await
        .is_err());
    assert_eq!(
        agents.current().name,
        "code",
        "a failed switch changes nothing"
    );
    let def = switch_role(&s, &mut agents, "poet", Lang::En, &env, &[])
        .await
        .unwrap();
    assert_eq!(def.name, "poet");
    collect(s.run("second")).await;
    let reqs = main.requests();
    assert_eq!(reqs[0].model, "fake-model");
    assert!(!reqs[0].messages[0].text().contains("POET-PROMPT"));
    assert_eq!(reqs[1].model, "poet-model");
    assert!(reqs[1].messages[0].text().starts_with("POET-PROMPT"));
    assert!(reqs[1].messages[0].text().contains("- Workspace: /w"));
    assert_eq!(s.model(), "poet-model");
}
