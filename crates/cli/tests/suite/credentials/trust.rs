//! Trust boundaries seen from outside a real `cairn run`: no key in its `/proc/<pid>/environ`
//! while it runs, no secret variable in the commands' environment, no workspace that contains
//! the home, config or state folder, and no restored session more permissive than its seal.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use cairn_testkit::{Fault, MockLlmServer, Reply};
use serde_json::json;

use crate::common;

/// Every documented secret variable (and two named by the rule), with distinct values.
const SECRETS: &[(&str, &str)] = &[
    ("ANTHROPIC_API_KEY", "sk-ant-PROCLEAK-0123456789"),
    ("BRAVE_API_KEY", "brave-PROCLEAK-0123456789"),
    ("TAVILY_API_KEY", "tvly-PROCLEAK-0123456789"),
    ("CAIRN_TRANSCRIBE_API_KEY", "tr-PROCLEAK-0123456789"),
    ("CAIRN_VISION_API_KEY", "vi-PROCLEAK-0123456789"),
    ("CAIRN_SEARCH_API_KEY", "se-PROCLEAK-0123456789"),
    ("GITHUB_TOKEN", "ghp-PROCLEAK-0123456789"),
    ("DEPLOY_PASSWORD", "pw-PROCLEAK-0123456789"),
];

/// A base URL nothing listens on (the refused runs never get that far).
const NOWHERE: &str = "http://127.0.0.1:9/v1";

const KEY: &str = "sk-test-PROCLEAK-0123456789abcdef";

#[tokio::test(flavor = "multi_thread")]
async fn a_running_cairn_has_no_key_in_its_proc_environ() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    // The model holds its answer: `cairn run` is alive, mid-request, while we look.
    let server = MockLlmServer::with_script(vec![
        Reply::text("thinking").then_fault(Fault::Stall(Duration::from_secs(30)))
    ])
    .await
    .unwrap();
    let mut cmd = common::auto_cmd(&server.base_url(), ws.path(), state.path(), KEY, &[], "hi");
    cmd.envs(SECRETS.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let reqs = server.wait_for_requests(1, Duration::from_secs(30)).await;
    assert_eq!(reqs.len(), 1, "cairn reached the model");
    assert_eq!(reqs[0].bearer(), Some(KEY), "the key still authenticates");
    let pid = child.id().unwrap();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let environ = String::from_utf8_lossy(&environ).replace('\0', "\n");
    let _ = child.kill().await;
    assert!(
        environ.contains("CAIRN_SANDBOX=off"),
        "the real block: {environ}"
    );
    for value in std::iter::once(KEY).chain(SECRETS.iter().map(|(_, v)| *v)) {
        assert!(
            !environ.contains(value) && !environ.contains("PROCLEAK"),
            "a secret is in /proc/{pid}/environ: {environ}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn commands_see_no_secret_variable() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "run_shell", json!({"command": "env; echo end"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let mut cmd = common::auto_cmd(&server.base_url(), ws.path(), state.path(), KEY, &[], "env");
    cmd.envs(SECRETS.iter().copied());
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = server.requests();
    let seen = reqs[1].body.to_string();
    assert!(seen.contains("end"), "the command ran: {seen}");
    for (name, value) in SECRETS {
        assert!(
            !seen.contains(&format!("{name}=")),
            "{name} reached the command: {seen}"
        );
        assert!(!seen.contains(value), "{name}'s value reached the model");
    }
}

/// `cairn run --model m --base-url BASE -w WS --state-dir STATE EXTRA… hi`, sandbox off.
fn run_cmd(base: &str, ws: &Path, state: &Path, extra: &[&str]) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args(["run", "--model", "m", "--base-url", base])
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .args(extra)
        .arg("hi")
        .env("OPENAI_API_KEY", "k")
        .env("CAIRN_SANDBOX", "off")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    c
}

#[tokio::test(flavor = "multi_thread")]
async fn workspaces_containing_home_config_or_state_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let top = d.path().canonicalize().unwrap();
    let home = top.join("home/me");
    let cfg = top.join("cfg");
    let project = home.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&cfg).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, std::path::PathBuf, std::path::PathBuf)> = vec![
        ("home folder", top.join("home"), elsewhere.path().join("s1")),
        ("home folder", top.clone(), elsewhere.path().join("s2")),
        (
            "state folder",
            project.clone(),
            project.join(".cairn-state"),
        ),
    ];
    for (what, ws, state) in cases {
        let out = run_cmd(NOWHERE, &ws, &state, &[])
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", elsewhere.path().join("config"))
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", ws.display());
        assert!(stderr.contains(what), "{}: {stderr}", ws.display());
    }
    // The config folder (XDG_CONFIG_HOME inside the workspace).
    let out = run_cmd(
        NOWHERE,
        &top.join("cfg/.."),
        &elsewhere.path().join("s3"),
        &[],
    )
    .env("HOME", elsewhere.path().join("h"))
    .env("XDG_CONFIG_HOME", &cfg)
    .output()
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("config folder"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_saved_session_does_not_come_back_more_permissive() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let cfg = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("pwned.txt");
    let server = MockLlmServer::with_script(vec![
        Reply::text("hello"),
        Reply::tool_call(
            "w",
            "write_file",
            json!({"path": target.display().to_string(), "content": "x"}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let base = server.base_url();
    let run = |extra: &[&str]| {
        let mut c = run_cmd(&base, ws.path(), state.path(), extra);
        c.args(["--approve", "deny"])
            .env("XDG_CONFIG_HOME", cfg.path());
        c
    };
    let first = run(&["--mode", "interactive"]).output().await.unwrap();
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let id = common::only_session_id(state.path());
    // What a command with write access to the state dir did: auto mode plus a writable grant.
    let file = state.path().join("sessions").join(&id).join("state.json");
    let mut saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    saved["permissions"]["mode"] = json!("auto");
    saved["permissions"]["granted_dirs"] = json!({ outside.path().display().to_string(): true });
    std::fs::write(&file, serde_json::to_string(&saved).unwrap()).unwrap();
    let second = run(&["--session", &id, "--json"]).output().await.unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!target.exists(), "the forged grant wrote outside: {stderr}");
    assert!(stderr.contains("seal"), "the user is told: {stderr}");
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(stdout.contains("\"denied\""), "{stdout}");
}
