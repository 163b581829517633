//! Slash commands through `cairn run`: /undo, user commands with $ARGUMENTS, /mode's ceiling,
//! and prompts that only look like commands.

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use super::checkpoints::{cairn, Out};

mod claude;

async fn run(
    ws: &str,
    state: &str,
    server: &MockLlmServer,
    extra: &[&str],
    prompt: &str,
) -> (Out, Vec<Value>) {
    let base = server.base_url();
    let mut args = vec![
        "run",
        "-w",
        ws,
        "--state-dir",
        state,
        "--base-url",
        &base,
        "--model",
        "m",
        "--json",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    let out = cairn(&args, &[("CAIRN_MCP", "0")]).await;
    let events = out
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (out, events)
}

#[tokio::test(flavor = "multi_thread")]
async fn undo_restores_the_last_change_and_commands_expand_or_stay_prompts() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join(".agent/commands")).unwrap();
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    std::fs::write(
        ws.join(".agent/commands/fix-issue.md"),
        "---\ndescription: Fix a numbered issue\n---\nFix issue #$ARGUMENTS with a test.\n",
    )
    .unwrap();
    let (w, s) = (
        ws.display().to_string(),
        dir.path().join("state").display().to_string(),
    );

    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "two\n"}),
        ),
        Reply::text("changed"),
    ])
    .await
    .unwrap();
    let (out, events) = run(&w, &s, &server, &["--mode", "auto"], "/fix-issue 42").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let sid = events[0]["data"]["sessionId"].as_str().unwrap().to_string();
    let body = server.requests()[0].body.to_string();
    assert!(body.contains("Fix issue #42 with a test."), "{body}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "two\n");

    // /undo: no model request, turn_start/turn_end, the file back.
    let idle = MockLlmServer::with_script(vec![]).await.unwrap();
    let (out, events) = run(&w, &s, &idle, &["--session", &sid], "/undo").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "one\n");
    assert!(idle.requests().is_empty());
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, vec!["turn_start", "turn_end"]);
    assert_eq!(events[1]["data"]["status"], "completed");

    // /mode above the run's --mode is refused; within it, it switches.
    let (out, _) = run(
        &w,
        &s,
        &idle,
        &["--session", &sid, "--mode", "interactive"],
        "/mode auto",
    )
    .await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    let (out, _) = run(
        &w,
        &s,
        &idle,
        &["--session", &sid, "--mode", "interactive"],
        "/mode plan",
    )
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);

    // Not commands: an unknown name, a path, an escaped slash reach the model as prompts.
    let echo = MockLlmServer::with_script(vec![Reply::text("a"), Reply::text("b")])
        .await
        .unwrap();
    let (out, _) = run(&w, &s, &echo, &[], "/usr/lib/libfoo is missing").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let (out, _) = run(&w, &s, &echo, &[], "//undo is a command").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let r = echo.requests();
    assert!(r[0].body.to_string().contains("/usr/lib/libfoo is missing"));
    assert!(
        r[1].body.to_string().contains("\"/undo is a command"),
        "{}",
        r[1].body
    );

    let listed = cairn(&["commands", "list", "-w", &w, "--json"], &[]).await;
    let names: Vec<String> = listed
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        names.contains(&"undo".to_string()) && names.contains(&"fix-issue".to_string()),
        "{names:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn subfolder_commands_positional_arguments_hints_and_the_users_command_first() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let cfg = dir.path().join("cfg");
    // As a Claude Code command suite lays them out: subfolders, $1/$2, argument-hint.
    std::fs::create_dir_all(ws.join(".claude/commands/dev")).unwrap();
    std::fs::create_dir_all(ws.join(".claude/commands/ops")).unwrap();
    std::fs::write(
        ws.join(".claude/commands/dev/fix-issue.md"),
        "---\nargument-hint: [issue-number] [priority]\ndescription: Fix an issue\n---\nFix issue #$1 with priority $2. Args were: $ARGUMENTS\n",
    )
    .unwrap();
    std::fs::write(
        ws.join(".claude/commands/ops/fix-issue.md"),
        "Escalate issue $1 to on-call.\n",
    )
    .unwrap();
    std::fs::write(ws.join(".claude/commands/review.md"), "PROJECT REVIEW\n").unwrap();
    std::fs::write(ws.join(".claude/commands/deploy.md"), "PROJECT DEPLOY\n").unwrap();
    std::fs::create_dir_all(cfg.join("cairn/commands")).unwrap();
    std::fs::write(cfg.join("cairn/commands/deploy.md"), "USER DEPLOY $1\n").unwrap();
    let (w, s) = (
        ws.display().to_string(),
        dir.path().join("state").display().to_string(),
    );
    let env = [
        ("CAIRN_MCP", "0"),
        ("XDG_CONFIG_HOME", cfg.to_str().unwrap()),
    ];
    let base_args = |server: &MockLlmServer, prompt: &'static str| {
        let base = server.base_url();
        vec![
            "run".to_string(),
            "-w".into(),
            w.clone(),
            "--state-dir".into(),
            s.clone(),
            "--base-url".into(),
            base,
            "--model".into(),
            "m".into(),
            "--json".into(),
            prompt.into(),
        ]
    };
    for (prompt, sent) in [
        (
            "/fix-issue 42 high",
            "Fix issue #42 with priority high. Args were: 42 high",
        ),
        ("/ops:fix-issue 7", "Escalate issue 7 to on-call."),
        ("/deploy prod", "USER DEPLOY prod"),
    ] {
        let server = MockLlmServer::with_script(vec![Reply::text("ok")])
            .await
            .unwrap();
        let args = base_args(&server, prompt);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = cairn(&args, &env).await;
        assert_eq!(out.code, 0, "{prompt}: {}", out.stderr);
        let body = server.requests()[0].body.to_string();
        assert!(body.contains(sent), "{prompt}: {body}");
        assert!(!body.contains("PROJECT DEPLOY"), "{prompt}: {body}");
    }
    let listed = cairn(&["commands", "list", "-w", &w, "--json"], &env).await;
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let rows: Vec<Value> = listed
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let row = |name: &str| {
        rows.iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no /{name} in {rows:?}"))
    };
    assert_eq!(
        row("fix-issue")["argumentHint"],
        "[issue-number] [priority]"
    );
    assert_eq!(
        row("fix-issue")["description"],
        "Fix an issue (project:dev)"
    );
    assert_eq!(row("ops:fix-issue")["source"], "project");
    assert_eq!(row("deploy")["source"], "user");
    // A project command never shadows a built-in either.
    assert_eq!(row("review")["source"], "built-in");
    assert_eq!(rows.iter().filter(|r| r["name"] == "deploy").count(), 1);
}
