//! `cairn run` with subagents and roles against the scripted mock LLM server, and
//! `cairn agents list|add|remove`.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::process::Command;

const KEY: &str = "sk-test-SECRET-key-0123456789abcdef";

struct Out {
    code: i32,
    events: Vec<Value>,
    stdout: String,
    stderr: String,
}

fn cairn(state: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.env("CAIRN_STATE_DIR", state)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .env_remove("CAIRN_MODEL")
        .env_remove("CAIRN_AGENT")
        .env_remove("OPENAI_FORCE_API_MODE")
        .env("OPENAI_API_KEY", KEY)
        .env("NETWORK_RETRY_BASE_MS", "20")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    c
}

/// `cairn run --json` in `ws` against `server`, with extra arguments before the prompt.
fn run_cmd(ws: &Path, state: &Path, server: &MockLlmServer, extra: &[&str]) -> Command {
    let mut c = cairn(state);
    c.arg("run")
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .arg("--base-url")
        .arg(server.base_url())
        .arg("--approve")
        .arg("deny")
        .arg("--json")
        .args(extra);
    c
}

async fn output(mut c: Command) -> Out {
    let out = tokio::time::timeout(Duration::from_secs(60), c.output())
        .await
        .expect("cairn finished in time")
        .expect("cairn ran");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let events = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    Out {
        code: out.status.code().unwrap_or(-1),
        events,
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

fn system_text(body: &Value) -> String {
    body["messages"][0]["content"].to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn run_subagent_model_override_reaches_the_mock_server() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "s1",
            "run_subagent",
            json!({"task": "CHILD-TASK", "model": "override-model", "provider": "openai"}),
        ),
        Reply::text("CHILD REPORT"),
        Reply::text("parent done"),
    ])
    .await
    .unwrap();
    let r = output(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--model", "mock-model", "go"],
    ))
    .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let reqs = server.requests();
    let models: Vec<&str> = reqs
        .iter()
        .map(|q| q.body["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["mock-model", "override-model", "mock-model"]);
    assert!(reqs[1].body["messages"].to_string().contains("CHILD-TASK"));
    // The child has the session's built-in tools, not a smaller core set.
    let names = |i: usize| -> Vec<String> {
        reqs[i].body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (parent_tools, child_tools) = (names(0), names(1));
    for t in &parent_tools {
        if t != "explore" {
            assert!(
                child_tools.contains(t),
                "the child lacks {t}: {child_tools:?}"
            );
        }
    }
    assert!(child_tools.iter().any(|t| t == "media"), "{child_tools:?}");
    assert!(
        !reqs[2].body["messages"]
            .to_string()
            .contains("CHILD-TASK\""),
        "the child's turns stay out of the parent's history"
    );
    assert!(reqs[2].body["messages"]
        .to_string()
        .contains("CHILD REPORT"));
    let nested: Vec<&Value> = r
        .events
        .iter()
        .filter(|e| e["type"] == "subagent_event")
        .collect();
    assert!(!nested.is_empty(), "{}", r.stdout);
    assert!(nested
        .iter()
        .all(|e| e["data"]["parentReqId"] == "s1" && e["data"]["agent"] == "code"));
    let origin = nested[0]["data"]["origin"].as_str().unwrap();
    assert!(nested.iter().all(|e| e["data"]["origin"] == origin));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_depth_limit_breach_reaches_the_model_as_a_tool_error() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("s1", "run_subagent", json!({"task": "t"})),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let mut c = run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--model", "mock-model", "go"],
    );
    c.env("CAIRN_SUBAGENT_MAX_DEPTH", "0");
    let r = output(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "no child request");
    assert!(reqs[1].body["messages"].to_string().contains("depth limit"));
}

#[tokio::test(flavor = "multi_thread")]
async fn run_with_a_user_role_uses_its_prompt_and_model() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut add = cairn(state.path());
    add.args([
        "agents",
        "add",
        "analyst",
        "--prompt",
        "ANALYST-RULES: numbers first",
        "--description",
        "data",
        "--model",
        "analyst-model",
        "--state-dir",
    ])
    .arg(state.path());
    let a = output(add).await;
    assert_eq!(a.code, 0, "stderr: {}", a.stderr);
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let r = output(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--agent", "analyst", "hi"],
    ))
    .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let body = &server.requests()[0].body;
    assert_eq!(body["model"], "analyst-model");
    let system = system_text(body);
    assert!(system.contains("ANALYST-RULES"), "{system}");
    // Without --agent the default coding prompt is used, and --model wins over a role's model.
    let server2 = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let r2 = output(run_cmd(
        ws.path(),
        state.path(),
        &server2,
        &["--agent", "analyst", "--model", "explicit-model", "hi"],
    ))
    .await;
    assert_eq!(r2.code, 0, "stderr: {}", r2.stderr);
    assert_eq!(server2.requests()[0].body["model"], "explicit-model");
}

#[tokio::test(flavor = "multi_thread")]
async fn switching_the_role_of_a_restored_session_replaces_its_system_prompt() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("one"), Reply::text("two")])
        .await
        .unwrap();
    let r = output(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--model", "mock-model", "first"],
    ))
    .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let session = r
        .events
        .iter()
        .find(|e| e["type"] == "turn_start")
        .and_then(|e| e["data"]["sessionId"].as_str())
        .unwrap()
        .to_string();
    let r2 = output(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--session", &session, "--agent", "cowork", "second"],
    ))
    .await;
    assert_eq!(r2.code, 0, "stderr: {}", r2.stderr);
    let reqs = server.requests();
    assert_ne!(system_text(&reqs[0].body), system_text(&reqs[1].body));
    let cowork = cairn_engine::prompt::section(
        cairn_engine::prompt::AgentType::Cowork,
        cairn_engine::prompt::Lang::En,
        "identity",
    );
    let first_line = cowork.lines().next().unwrap();
    assert!(
        system_text(&reqs[1].body).contains(first_line.trim()),
        "{first_line}"
    );
    assert!(
        reqs[1].body["messages"].to_string().contains("first"),
        "history kept"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_role_is_a_usage_error() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let r = output(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--model", "m", "--agent", "ghost", "hi"],
    ))
    .await;
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("unknown agent `ghost`") && r.stderr.contains("cowork"),
        "{}",
        r.stderr
    );
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn agents_list_add_remove() {
    let state = tempfile::tempdir().unwrap();
    let list = |json: bool| {
        let mut c = cairn(state.path());
        c.args(["agents", "list", "--state-dir"]).arg(state.path());
        if json {
            c.arg("--json");
        }
        c
    };
    let r = output(list(true)).await;
    let names: Vec<&str> = r
        .events
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["code", "cowork"]);
    let mut add = cairn(state.path());
    add.args([
        "agents",
        "add",
        "writer",
        "--prompt",
        "You write.",
        "--state-dir",
    ])
    .arg(state.path());
    assert_eq!(output(add).await.code, 0);
    let mut dup = cairn(state.path());
    dup.args([
        "agents",
        "add",
        "writer",
        "--prompt",
        "again",
        "--state-dir",
    ])
    .arg(state.path());
    let d = output(dup).await;
    assert_eq!(d.code, 2);
    assert!(d.stderr.contains("already exists"), "{}", d.stderr);
    let r = output(list(true)).await;
    assert_eq!(r.events.len(), 3);
    assert_eq!(r.events[2]["builtin"], false);
    let mut rm_builtin = cairn(state.path());
    rm_builtin
        .args(["agents", "remove", "code", "--state-dir"])
        .arg(state.path());
    let b = output(rm_builtin).await;
    assert_eq!(b.code, 2);
    assert!(b.stderr.contains("built-in"));
    let mut rm = cairn(state.path());
    rm.args(["agents", "remove", "writer", "--state-dir"])
        .arg(state.path());
    assert_eq!(output(rm).await.code, 0);
    assert_eq!(output(list(true)).await.events.len(), 2);
}

/// A role's provider must be one a run can reach, and needs a model; a damaged roles file
/// stops only the runs that ask for a role (and is never overwritten).
#[tokio::test(flavor = "multi_thread")]
async fn bad_roles_are_refused_early_and_a_damaged_roles_file_stops_only_role_runs() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    for (args, expect) in [
        (
            vec!["--model", "m", "--provider", "bogus"],
            "unknown provider `bogus`",
        ),
        (vec!["--provider", "anthropic"], "--model <ID>"),
    ] {
        let mut add = cairn(state.path());
        add.args(["agents", "add", "r", "--prompt", "p", "--state-dir"])
            .arg(state.path())
            .args(&args);
        let r = output(add).await;
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(expect), "{args:?}: {}", r.stderr);
    }
    assert!(!state.path().join("agents.json").exists());

    std::fs::write(state.path().join("agents.json"), "[{\"name\": \"x\",]").unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("fine")])
        .await
        .unwrap();
    let r = output(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--model", "m", "hi"],
    ))
    .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("not a valid roles file"), "{}", r.stderr);
    let r = output(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--model", "m", "--agent", "x", "hi"],
    ))
    .await;
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(state.path().join("agents.json")).unwrap(),
        "[{\"name\": \"x\",]"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claude_code_project_agent_is_a_role_for_runs_and_subagents() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".claude/agents")).unwrap();
    // As Claude Code users write them: front matter with a colon in the description, tools
    // and model inherit, the body as the prompt.
    std::fs::write(
        ws.path().join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Use this agent when: a change needs review\ntools: Read, Grep, Glob\nmodel: inherit\n---\n\nYou are REVIEWER-7. Review the diff and list risks first.\n",
    )
    .unwrap();
    // A project role never replaces a built-in one.
    std::fs::write(
        ws.path().join(".claude/agents/code.md"),
        "---\nname: code\ndescription: hijack\n---\nHIJACKED-CODE-ROLE\n",
    )
    .unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let r = output(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--model", "m", "--agent", "reviewer", "review please"],
    ))
    .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let system = system_text(&server.requests()[0].body);
    assert!(system.contains("You are REVIEWER-7"), "{system}");
    assert!(!system.contains("HIJACKED"), "{system}");

    // The default role can hand work to it with run_subagent.
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "s1",
            "run_subagent",
            json!({"task": "review the last change", "agent_id": "reviewer", "keep": false}),
        ),
        Reply::text("LGTM from the reviewer"),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let r = output(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--model", "m", "--mode", "auto", "delegate"],
    ))
    .await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    let requests = server.requests();
    assert!(!system_text(&requests[0].body).contains("HIJACKED"));
    assert!(
        system_text(&requests[1].body).contains("You are REVIEWER-7"),
        "the subagent ran as the project's reviewer"
    );
}
