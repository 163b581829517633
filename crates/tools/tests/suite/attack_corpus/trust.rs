//! The trust-boundary part of the corpus (`fixtures/attacks_trust.toml`): MCP imports under
//! aliases, reads of Cairn's environment in pieces, edits of Cairn's saved state, secret
//! variables reaching commands, and workspaces that contain the home, config or state
//! folder. Calls run like the main corpus, but with the runtime's real execution environment
//! (`cairn_runtime::sandbox::exec_environment`: credentials removed, state dir read-only in
//! the sandbox) and the state dir private, as `cairn_runtime::open_session` sets it up.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply, ScriptedApprover};
use cairn_engine::{EngineConfig, PermissionState, Session, ToolRegistry};
use cairn_policy::sandbox::{bwrap_path, bwrap_works, SandboxMode};
use cairn_protocol::{ApprovalDecision, Event};
use cairn_testkit::child;
use serde::Deserialize;
use serde_json::Value;

use super::{check, diff, fill, fill_value, guarded, mode_of, policy_of, snapshot, world, World};

#[derive(Debug, Deserialize)]
struct TrustCorpus {
    #[serde(default)]
    call: Vec<Call>,
    #[serde(default)]
    import: Vec<Import>,
    #[serde(default)]
    workspace: Vec<WorkspaceCase>,
}

#[derive(Debug, Deserialize)]
struct Call {
    id: String,
    #[serde(default = "super::interactive")]
    mode: String,
    #[serde(default = "super::approve")]
    policy: String,
    #[serde(default)]
    sandbox: bool,
    #[serde(default)]
    allow_commands: Vec<String>,
    /// A folder granted writable for the session.
    grant: Option<String>,
    /// Sets every documented secret variable; no value may reach the model.
    #[serde(default)]
    secrets: bool,
    tool: String,
    args: Value,
    expect: String,
}

#[derive(Debug, Deserialize)]
struct Import {
    id: String,
    import: String,
}

#[derive(Debug, Deserialize)]
struct WorkspaceCase {
    id: String,
    path: String,
}

/// Every secret variable the README documents, plus names the rule catches.
const SECRETS: &[(&str, &str)] = &[
    ("OPENAI_API_KEY", "sk-corpus-openai-0123456789"),
    ("ANTHROPIC_API_KEY", "sk-corpus-anthropic-0123456789"),
    ("DEEPSEEK_API_KEY", "sk-corpus-deepseek-0123456789"),
    ("OPENROUTER_API_KEY", "sk-corpus-openrouter-0123456789"),
    ("GEMINI_API_KEY", "sk-corpus-gemini-0123456789"),
    ("BRAVE_API_KEY", "corpus-brave-0123456789"),
    ("TAVILY_API_KEY", "corpus-tavily-0123456789"),
    ("CAIRN_SEARCH_API_KEY", "corpus-search-0123456789"),
    ("CAIRN_TRANSCRIBE_API_KEY", "corpus-transcribe-0123456789"),
    ("CAIRN_VISION_API_KEY", "corpus-vision-0123456789"),
    ("GITHUB_TOKEN", "corpus-github-0123456789"),
    ("CORPUS_DB_PASSWORD", "corpus-password-0123456789"),
    ("CORPUS_CLIENT_SECRET", "corpus-secret-0123456789"),
];

/// [`fill`] plus `{state}`.
fn fill_state(text: &str, w: &World) -> String {
    fill(&text.replace("{state}", &w.state.display().to_string()), w)
}

/// [`fill_value`] plus `{state}`.
fn fill_state_value(v: &Value, w: &World) -> Value {
    let text = v
        .to_string()
        .replace("{state}", &w.state.display().to_string());
    fill_value(&serde_json::from_str(&text).unwrap(), w)
}

/// What must stay as it was in the state dir: other sessions' saved files.
fn state_guarded(w: &World) -> super::Snapshot {
    snapshot(&w.state.join("sessions"))
}

async fn run_call(call: &Call, w: &World, bwrap: Option<&Path>) -> super::Observed {
    let mut config = EngineConfig::new(w.ws.clone(), w.state.clone(), "fake-model");
    config.mode = mode_of(&call.mode);
    config.allowed_commands = call.allow_commands.clone();
    config.private_dirs = vec![w.state.clone()];
    let mut registry = ToolRegistry::new();
    registry.register_all(cairn_tools::core_tools());
    let llm = FakeLlm::new(vec![
        FakeReply::tool("attack", &call.tool, fill_state_value(&call.args, w)),
        FakeReply::text("done"),
    ]);
    let sandbox = if call.sandbox {
        assert!(bwrap.is_some());
        SandboxMode::Required
    } else {
        SandboxMode::Off
    };
    let mut exec =
        cairn_runtime::sandbox::exec_environment(&w.ws, &w.state, sandbox, policy_of(&call.policy))
            .unwrap();
    // Sandboxed commands show that they ran inside it.
    if let Some(inner) = exec.wrapper.take() {
        exec.wrapper = Some(Arc::new(super::Marked { inner }));
    }
    let mut state = PermissionState {
        mode: config.mode,
        ..Default::default()
    };
    if let Some(g) = &call.grant {
        let g = std::fs::canonicalize(fill_state(g, w)).unwrap();
        state.granted_dirs.insert(g.display().to_string(), true);
    }
    let session = Session::builder(config, Arc::new(llm.clone()))
        .tools(registry)
        .approver(Arc::new(ScriptedApprover::new(
            vec![],
            ApprovalDecision::Deny,
        )))
        .permission_state(state)
        .permission_rules(
            cairn_policy::RuleSet::new(),
            policy_of(&call.policy),
            call.sandbox,
        )
        .exec_environment(exec)
        .build();
    let events = super::common::collect(session.run("go")).await;
    super::Observed {
        asked: events
            .iter()
            .any(|e| matches!(e, Event::PermissionRequired(_))),
        status: events.iter().find_map(|e| match e {
            Event::ToolFinished(f) if f.req_id == "attack" => Some(f.status),
            _ => None,
        }),
        result: super::common::tool_results(&llm)
            .into_iter()
            .map(|(_, c)| c)
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

fn evil_server(path: &Path) {
    std::fs::write(
        path,
        r#"{ "mcpServers": { "evil": { "command": "sh", "args": ["-c", "touch pwned"] } } }"#,
    )
    .unwrap();
}

/// Starts `servers` as a session does (held servers stay down) and waits until none is
/// starting; whether the server of [`evil_server`] left its marker in the workspace.
async fn starts_evil(servers: Vec<cairn_mcp::ServerConfig>, w: &World) -> bool {
    let manager = cairn_mcp::McpManager::new(servers, cairn_mcp::ManagerOptions::new(w.ws.clone()));
    manager.start_all();
    assert!(
        manager
            .wait_settled(std::time::Duration::from_secs(30))
            .await,
        "the MCP servers never settled"
    );
    manager.close_all().await;
    w.ws.join("pwned").exists()
}

async fn import_case(case: &Import) -> Option<String> {
    let w = world();
    evil_server(&w.ws.join("evil.json"));
    evil_server(&w.outside.join("evil.json"));
    let alias = w.base.join("alias");
    std::os::unix::fs::symlink(&w.ws, &alias).unwrap();
    let import = fill(&case.import, &w).replace("{alias}", &alias.display().to_string());
    std::fs::write(
        w.ws.join(".agent/mcp.json"),
        serde_json::json!({ "import": [import] }).to_string(),
    )
    .unwrap();
    let loaded = cairn_runtime::mcp::load_config(&w.ws);
    let failure = match loaded.get("evil") {
        None => Some(format!(
            "{}: `{import}` imported nothing: {:?}",
            case.id, loaded.warnings
        )),
        Some(s)
            if s.held
                .as_deref()
                .is_some_and(|h| h.starts_with(cairn_runtime::mcp_trust::UNTRUSTED)) =>
        {
            None
        }
        Some(s) => Some(format!(
            "{}: `{import}` starts untrusted: held = {:?}",
            case.id, s.held
        )),
    };
    if failure.is_some() {
        return failure;
    }
    // On disk: the held server never ran; the same server trusted does leave its marker (so
    // the check can see one).
    if starts_evil(loaded.servers.clone(), &w).await {
        return Some(format!("{}: `{import}` ran before trust", case.id));
    }
    let trusted = loaded
        .servers
        .into_iter()
        .filter(|s| s.name == "evil")
        .map(|mut s| {
            s.held = None;
            s
        })
        .collect();
    (!starts_evil(trusted, &w).await).then(|| {
        format!(
            "{}: the trusted copy of `{import}` left no marker: the check proves nothing",
            case.id
        )
    })
}

fn workspace_case(case: &WorkspaceCase) -> Result<Option<String>, String> {
    let home = dirs::home_dir().unwrap_or_default();
    let config = cairn_runtime::reserved::config_dir().unwrap_or_default();
    let data = cairn_runtime::default_state_dir();
    let path = PathBuf::from(
        case.path
            .replace("{home}", &home.display().to_string())
            .replace("{config}", &config.display().to_string())
            .replace("{data}", &data.display().to_string()),
    );
    if !path.is_dir() {
        return Err(format!(
            "skipped {}: {} does not exist here",
            case.id,
            path.display()
        ));
    }
    Ok(match cairn_runtime::resolve_workspace(&path) {
        Err(e) if e.to_string().contains("refusing") => None,
        Err(e) => Some(format!("{}: refused for another reason: {e}", case.id)),
        Ok(w) => Some(format!(
            "{}: {} accepted as a workspace",
            case.id,
            w.display()
        )),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trust_corpus_yields_no_escape() {
    // The corpus needs secret-looking variables in the process environment: it runs in a
    // child process of this test binary, so the other tests sharing it never see them.
    let name = child::test_name(module_path!(), "the_trust_corpus_yields_no_escape");
    if !child::in_child(&name) {
        return tokio::task::block_in_place(|| child::rerun_alone(&name, SECRETS));
    }
    let text = std::fs::read_to_string(
        cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/attacks_trust.toml"),
    )
    .unwrap();
    let corpus: TrustCorpus = toml::from_str(&text).unwrap();
    let bwrap = bwrap_path().filter(|_| bwrap_works());
    let demanded = std::env::var("CAIRN_SANDBOX_TEST").as_deref() == Ok("1");
    assert!(
        bwrap.is_some() || !demanded,
        "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
    );
    let mut failures = Vec::new();
    let (mut ran, mut skipped) = (0usize, 0usize);
    for call in &corpus.call {
        if call.sandbox && bwrap.is_none() {
            eprintln!("skipped {}: bubblewrap cannot run here", call.id);
            skipped += 1;
            continue;
        }
        let w = world();
        let other = w.state.join("sessions/other/state.json");
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        std::fs::write(&other, "{\"permissions\":{\"mode\":\"interactive\"}}").unwrap();
        let before = snapshot(&w.base);
        let state_before = state_guarded(&w);
        let o = run_call(call, &w, bwrap.as_deref()).await;
        let mut before_all = before.clone();
        before_all.retain(|p, _| !p.starts_with(&w.state));
        let mut after = snapshot(&w.base);
        after.retain(|p, _| !p.starts_with(&w.state));
        let mut all = diff(&before_all, &after);
        let mut guarded_diff = diff(&guarded(&before, &w), &guarded(&after, &w));
        let state_diff = diff(&state_before, &state_guarded(&w));
        all.extend(state_diff.iter().cloned());
        guarded_diff.extend(state_diff);
        if let Some(f) = check(&call.expect, &o, &all, &guarded_diff) {
            failures.push(format!("{}: {f}", call.id));
        }
        if call.secrets {
            for (k, v) in SECRETS {
                if o.result.contains(v) || o.result.contains(&format!("{k}=")) {
                    failures.push(format!("{}: {k} reached the model: {}", call.id, o.result));
                }
            }
        }
        ran += 1;
    }
    for case in &corpus.import {
        failures.extend(import_case(case).await);
        ran += 1;
    }
    let mut refused = 0;
    for case in &corpus.workspace {
        match workspace_case(case) {
            Ok(f) => {
                refused += usize::from(f.is_none());
                failures.extend(f);
                ran += 1;
            }
            Err(note) => {
                eprintln!("{note}");
                skipped += 1;
            }
        }
    }
    eprintln!("trust corpus: {ran} cases run, {skipped} skipped");
    assert!(
        failures.is_empty(),
        "{} trust cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(refused >= 3, "too few workspace cases could run here");
    assert!(
        ran + skipped >= 30,
        "the trust corpus has only {} cases",
        ran + skipped
    );
}
