//! The home part of the attack corpus (`fixtures/attacks_home.toml`): sandboxed commands in
//! auto mode try to plant something in the user's home that runs later outside the sandbox
//! (`~/.cargo/bin`, `~/.cargo/config.toml`, `~/.cargo/env`, cached packages, dotfiles) or
//! to read a credential. The sandbox is the real one the runtime builds (a fake `$HOME`
//! with private package caches and the credential list hidden). Each case proves on disk
//! that the home, the folder outside and the protected folders are unchanged, and that no
//! secret reached the model.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply, ScriptedApprover};
use cairn_engine::{EngineConfig, ExecEnvironment, PermissionState, Session, ToolRegistry};
use cairn_policy::sandbox::SandboxSpec;
use cairn_policy::sandbox_home::{hidden_paths, private_caches};
use cairn_protocol::{ApprovalDecision, Event, ToolStatus};
use serde::Deserialize;
use serde_json::{json, Value};

use super::{diff, snapshot, world, Bwrap, World};

/// What every credential file in the fake home holds.
const SECRET: &str = "HOME-SECRET-4417";

#[derive(Debug, Deserialize)]
struct HomeCorpus {
    #[serde(rename = "case")]
    cases: Vec<HomeCase>,
}

/// One command run with `run_shell` in auto mode.
#[derive(Debug, Deserialize)]
struct HomeCase {
    id: String,
    command: String,
    /// The `sandbox` argument of the call (`false`: the escalation, which must ask).
    #[serde(default)]
    sandbox: Option<bool>,
    #[serde(default = "super::approve")]
    policy: String,
    #[serde(default)]
    allow_commands: Vec<String>,
    #[serde(default)]
    session_commands: Vec<String>,
    /// `sandboxed`: ran unasked inside the sandbox; `asks`: the user was asked (and said no).
    expect: String,
}

/// A developer's home: toolchain, caches, dotfiles and credentials.
fn fake_home(base: &Path) -> PathBuf {
    let home = base.join("home");
    let files = [
        (".cargo/bin/cargo", "#!/bin/sh\n"),
        (".cargo/env", "export PATH=\"$HOME/.cargo/bin:$PATH\"\n"),
        (".cargo/registry/.keep", ""),
        (".cargo/git/.keep", ""),
        (".npm/_cacache/.keep", ""),
        (".cache/pip/.keep", ""),
        (".bashrc", "# bashrc\n"),
        (".profile", "# profile\n"),
        (".ssh/id_rsa", SECRET),
        (".aws/credentials", SECRET),
        (".gnupg/private-keys-v1.d/key", SECRET),
        (".config/gcloud/credentials.db", SECRET),
        (".kube/config", SECRET),
        (".docker/config.json", SECRET),
        (".netrc", SECRET),
        (".local/share/keyrings/login.keyring", SECRET),
        (".mozilla/firefox/p/logins.json", SECRET),
        (".config/google-chrome/Default/Login Data", SECRET),
        (".config/chromium/Default/Cookies", SECRET),
        (".git-credentials", SECRET),
        (".config/gh/hosts.yml", SECRET),
    ];
    for (rel, text) in files {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    home
}

/// The runtime's sandbox for the world, with `home` as `$HOME`.
fn spec(w: &World, home: &Path) -> SandboxSpec {
    let mut spec = SandboxSpec::for_workspace(&w.ws);
    spec.hidden = hidden_paths(home, std::slice::from_ref(&w.state));
    let caches = private_caches(home, Some(&home.join(".cargo")), &w.base.join("caches")).unwrap();
    spec.private_binds = caches.binds;
    spec.env = caches.env;
    spec.env.push(("HOME".into(), home.display().to_string()));
    spec
}

async fn run(
    case: &HomeCase,
    w: &World,
    home: &Path,
    bwrap: &Path,
) -> (bool, Option<ToolStatus>, String) {
    let mut config = EngineConfig::new(w.ws.clone(), w.state.clone(), "fake-model");
    config.mode = cairn_protocol::Mode::Auto;
    config.allowed_commands = case.allow_commands.clone();
    let mut registry = ToolRegistry::new();
    registry.register_all(cairn_tools::core_tools());
    let mut args = json!({"command": case.command});
    if let Some(s) = case.sandbox {
        args["sandbox"] = Value::Bool(s);
    }
    let llm = FakeLlm::new(vec![
        FakeReply::tool("attack", "run_shell", args),
        FakeReply::text("done"),
    ]);
    let mut exec = ExecEnvironment::default();
    exec.wrapper = Some(Arc::new(Bwrap {
        bwrap: bwrap.to_path_buf(),
        spec: spec(w, home),
    }));
    let state = PermissionState {
        mode: config.mode,
        allow_commands: case.session_commands.iter().cloned().collect(),
        ..Default::default()
    };
    let session = Session::builder(config, Arc::new(llm.clone()))
        .tools(registry)
        .approver(Arc::new(ScriptedApprover::new(
            vec![],
            ApprovalDecision::Deny,
        )))
        .permission_state(state)
        .permission_rules(Default::default(), super::policy_of(&case.policy), true)
        .exec_environment(exec)
        .build();
    let events = super::common::collect(session.run("go")).await;
    let asked = events
        .iter()
        .any(|e| matches!(e, Event::PermissionRequired(p) if p.always_allow.is_none()));
    let status = events.iter().find_map(|e| match e {
        Event::ToolFinished(f) if f.req_id == "attack" => Some(f.status),
        _ => None,
    });
    let result = super::common::tool_results(&llm)
        .into_iter()
        .map(|(_, c)| c)
        .collect::<Vec<_>>()
        .join("\n");
    (asked, status, result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn home_plants_and_credential_reads_fail_inside_the_sandbox() {
    let text = std::fs::read_to_string(
        cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/attacks_home.toml"),
    )
    .unwrap();
    let corpus: HomeCorpus = toml::from_str(&text).unwrap();
    let Some(bwrap) =
        cairn_policy::sandbox::bwrap_path().filter(|_| cairn_policy::sandbox::bwrap_works())
    else {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        eprintln!("home attack corpus skipped: bubblewrap cannot run here");
        return;
    };
    let mut failures = Vec::new();
    for case in &corpus.cases {
        let w = world();
        let home = fake_home(&w.base);
        std::fs::write(
            w.state.join("vault.toml"),
            format!("TOKEN = \"{SECRET}\"\n"),
        )
        .unwrap();
        let before = snapshot(&w.base);
        let (asked, status, result) = run(case, &w, &home, &bwrap).await;
        let mut after = snapshot(&w.base);
        // The private caches may change (that is what they are for), and so may the
        // session's own files; nothing else.
        let free = |p: &Path| p.starts_with(w.base.join("caches")) || p.starts_with(&w.state);
        let mut before_kept = before.clone();
        before_kept.retain(|p, _| !free(p) && !p.starts_with(&w.ws));
        after.retain(|p, _| !free(p) && !p.starts_with(&w.ws));
        let changed = diff(&before_kept, &after);
        let ok = match case.expect.as_str() {
            "sandboxed" => {
                !asked && matches!(status, Some(ToolStatus::Ok) | Some(ToolStatus::Error))
            }
            "asks" => asked && status == Some(ToolStatus::Denied),
            other => panic!("{}: unknown expectation {other}", case.id),
        };
        if !ok || !changed.is_empty() || result.contains(SECRET) {
            failures.push(format!(
                "{}: expected {}; asked={asked} status={status:?}; changed: {changed:?}; result: {}",
                case.id,
                case.expect,
                result.chars().take(300).collect::<String>()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} home attack cases failed:\n{}",
        failures.len(),
        corpus.cases.len(),
        failures.join("\n")
    );
    assert!(
        corpus.cases.len() >= 25,
        "only {} cases",
        corpus.cases.len()
    );
}
