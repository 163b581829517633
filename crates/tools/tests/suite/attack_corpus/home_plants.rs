//! The home part of the attack corpus (`fixtures/attacks_home.toml`): sandboxed commands in
//! auto mode try to plant something in the user's home that runs later outside the sandbox
//! (`~/.cargo/bin`, `~/.cargo/config.toml`, `~/.cargo/env`, cached packages, dotfiles) or
//! to read a credential. The sandbox is the session sandbox the runtime builds
//! ([`super::runtime_sandbox`]: the allow-list home, private package caches, seccomp), with
//! a fake `$HOME` — so the test runs in a child process of its own with `HOME` set. Each
//! case proves that its command ran inside the sandbox, on disk that the home, the folder
//! outside and the protected folders are unchanged, and that no secret reached the model;
//! the `succeeds` cases prove that ordinary work in the home still works.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply, ScriptedApprover};
use cairn_engine::{EngineConfig, PermissionState, Session, ToolRegistry};
use cairn_protocol::{ApprovalDecision, Event, ToolStatus};
use cairn_testkit::child;
use serde::Deserialize;
use serde_json::{json, Value};

use super::{diff, snapshot, world, World};

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
    /// `sandboxed`: ran unasked inside the sandbox; `asks`: the user was asked (and said no);
    /// `succeeds`: ran unasked inside the sandbox and worked.
    expect: String,
    /// Text the result must hold (a `succeeds` case's proof that it worked).
    #[serde(default)]
    output: Option<String>,
}

/// Fills `home` afresh as a developer's home: toolchain, caches, dotfiles and credentials.
fn fake_home(home: &Path) {
    if home.exists() {
        std::fs::remove_dir_all(home).unwrap();
    }
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
}

async fn run(case: &HomeCase, w: &World) -> (bool, Option<ToolStatus>, String) {
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
    let exec = super::runtime_sandbox(w);
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
    let Some(_) =
        cairn_policy::sandbox::bwrap_path().filter(|_| cairn_policy::sandbox::bwrap_works())
    else {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        eprintln!("home attack corpus skipped: bubblewrap cannot run here");
        return;
    };
    // The runtime reads `$HOME` (and the XDG and cargo folders under it): the corpus runs
    // in a child process whose home is the fake one.
    let name = child::test_name(
        module_path!(),
        "home_plants_and_credential_reads_fail_inside_the_sandbox",
    );
    if !child::in_child(&name) {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let home = std::fs::canonicalize(dir.path()).unwrap().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let text = |p: &Path| p.display().to_string();
        let env = [
            ("HOME", text(&home)),
            ("XDG_CONFIG_HOME", text(&home.join(".config"))),
            ("XDG_DATA_HOME", text(&home.join(".local/share"))),
            ("XDG_CACHE_HOME", text(&home.join(".cache"))),
            ("CARGO_HOME", text(&home.join(".cargo"))),
        ];
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        return tokio::task::block_in_place(|| child::rerun_alone(&name, &env));
    }
    let home = PathBuf::from(std::env::var("HOME").unwrap());
    let text = std::fs::read_to_string(
        cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/attacks_home.toml"),
    )
    .unwrap();
    let corpus: HomeCorpus = toml::from_str(&text).unwrap();
    let mut failures = Vec::new();
    let mut succeeding = 0;
    for case in &corpus.cases {
        let w = world();
        fake_home(&home);
        std::fs::write(
            w.state.join("vault.toml"),
            format!("TOKEN = \"{SECRET}\"\n"),
        )
        .unwrap();
        let before = (snapshot(&w.base), snapshot(&home));
        let (asked, status, result) = run(case, &w).await;
        let after = (snapshot(&w.base), snapshot(&home));
        // The session's own files (its private package caches among them) may change;
        // nothing else, the workspace aside.
        let free = |p: &Path| p.starts_with(&w.state) || p.starts_with(&w.ws);
        let kept = |s: &super::Snapshot| {
            let mut s = s.clone();
            s.retain(|p, _| !free(p));
            s
        };
        let mut changed = diff(&kept(&before.0), &kept(&after.0));
        changed.extend(diff(&before.1, &after.1));
        let ran = match case.expect.as_str() {
            "asks" => None,
            _ => super::not_run(&result),
        };
        let ok = match case.expect.as_str() {
            "sandboxed" => {
                !asked && matches!(status, Some(ToolStatus::Ok) | Some(ToolStatus::Error))
            }
            "succeeds" => {
                succeeding += 1;
                !asked
                    && status == Some(ToolStatus::Ok)
                    && case
                        .output
                        .as_ref()
                        .is_some_and(|o| result.contains(o.as_str()))
            }
            "asks" => asked && status == Some(ToolStatus::Denied),
            other => panic!("{}: unknown expectation {other}", case.id),
        };
        if !ok || ran.is_some() || !changed.is_empty() || result.contains(SECRET) {
            failures.push(format!(
                "{}: expected {}; asked={asked} status={status:?}; {}changed: {changed:?}; \
                 result: {}",
                case.id,
                case.expect,
                ran.map(|r| format!("{r}; ")).unwrap_or_default(),
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
    assert!(succeeding >= 3, "only {succeeding} cases that must succeed");
}
