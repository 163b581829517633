//! Hooks written for Claude Code work as their authors wrote them: matchers name Claude
//! Code's tools (`Bash`, `Read`, `Edit|Write`), scripts read `tool_name` and
//! `tool_input.file_path`, and answer with exit 2 or Claude Code's current JSON
//! (`hookSpecificOutput.permissionDecision`). Every writer and runner is guarded: a patch is
//! one `Edit`/`Write` per file. Only the user's own hooks may approve.

use std::path::PathBuf;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use super::{finished, write_hooks, Env};

/// `python3 <fixture> args…` as a hook command.
fn fixture(name: &str, args: &[&str]) -> String {
    let p = cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-hooks")
        .join(name);
    let mut cmd = format!("python3 {}", p.display());
    for a in args {
        cmd.push(' ');
        cmd.push_str(a);
    }
    cmd
}

/// A fixture's text, for copying into a repository as its own hook script.
fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(
        cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/claude-hooks")
            .join(name),
    )
    .unwrap()
}

/// The one `permission_required` of a run, which must give `reason`.
fn the_ask<'a>(events: &'a [Value], reason: &str) -> &'a Value {
    let asked: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "permission_required")
        .collect();
    assert_eq!(asked.len(), 1, "{events:?}");
    let said = asked[0]["data"]["reason"].as_str().unwrap_or("");
    assert!(said.contains(reason), "{}", asked[0]);
    asked[0]
}

impl Env {
    /// Commits the workspace and trusts its project hook files as they are now.
    async fn commit_and_trust(&self) {
        cairn_testkit::git::git(&self.ws, &["add", "-A"]);
        cairn_testkit::git::git(&self.ws, &["commit", "-q", "-m", "project files"]);
        let t = self
            .cli(&["hooks", "trust", "-w", self.ws.to_str().unwrap()])
            .await;
        assert_eq!(t.code, 0, "{}", t.stderr);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_guards_block_bash_env_reads_and_env_writes_through_any_tool() {
    let env = Env::new();
    std::fs::create_dir_all(env.ws.join("build")).unwrap();
    std::fs::write(env.ws.join("build/out.o"), "obj").unwrap();
    std::fs::write(env.ws.join(".env"), "API_TOKEN=sk-SECRET-FROM-ENV\n").unwrap();
    let seen = env.ws.parent().unwrap().join("seen.jsonl");
    let seen_arg = seen.display().to_string();
    write_hooks(
        &env.user_hooks,
        json!({
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": fixture("bash_guard.py", &[])}]},
                {"matcher": "Read", "hooks": [{"type": "command", "command": fixture("env_read_guard.py", &[])}]},
                {"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "command", "command": fixture("env_write_deny.py", &[])}]}
            ],
            "PostToolUse": [
                {"matcher": "Write", "hooks": [{"type": "command", "command": fixture("record_input.py", &[&seen_arg])}]}
            ]
        }),
    );
    // A patch that adds a file beside one it edits: each file is its own Write / Edit.
    let patch = "*** Begin Patch\n*** Update File: x\n@@\n-keep me\n+kept\n*** Add File: .env.production\n+API_TOKEN=planted\n*** End Patch\n";
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "run_shell", json!({"command": "rm -rf build"})),
        Reply::tool_call("c2", "exec_command", json!({"command": "chmod 777 build"})),
        Reply::tool_call("c3", "read_file", json!({"path": ".env"})),
        Reply::tool_call("c4", "apply_patch", json!({"patch": patch})),
        Reply::tool_call("c5", "write_file", json!({"path": ".env", "content": "x"})),
        Reply::tool_call(
            "c6",
            "write_file",
            json!({"path": "notes.txt", "content": "fine\n"}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let (out, events) = env.run(&server, &[], "clean up").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let f = finished(&events);
    let status: Vec<&str> = f
        .iter()
        .map(|e| e["data"]["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        status,
        ["denied", "denied", "denied", "denied", "denied", "ok"],
        "{f:?}"
    );
    assert!(env.ws.join("build/out.o").exists(), "rm -rf ran");
    assert_eq!(
        std::fs::read_to_string(env.ws.join(".env")).unwrap(),
        "API_TOKEN=sk-SECRET-FROM-ENV\n",
        "the .env was changed"
    );
    assert!(
        !env.ws.join(".env.production").exists(),
        "the patch planted a .env"
    );
    assert_eq!(
        std::fs::read_to_string(env.ws.join("x")).unwrap(),
        "keep me\n",
        "a denied patch changes none of its files"
    );
    let requests: String = server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        !requests.contains("sk-SECRET-FROM-ENV"),
        "the .env reached the model"
    );
    assert!(requests.contains("rm -rf is blocked by bash_guard"));
    assert!(requests.contains("chmod 777 is blocked by bash_guard"));
    assert!(requests.contains("may not be changed (env_write_deny)"));
    // What the PostToolUse hook was given: Claude Code's names and fields, Cairn's beside.
    let lines = std::fs::read_to_string(&seen).unwrap();
    let inputs: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(inputs.len(), 1, "{lines}");
    let input = &inputs[0];
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_name"], "Write");
    assert_eq!(
        input["tool_input"]["file_path"],
        env.ws.join("notes.txt").display().to_string()
    );
    assert_eq!(input["tool_input"]["content"], "fine\n");
    assert_eq!(input["cairn_tool_name"], "write_file");
    assert_eq!(input["cairn_tool_input"]["path"], "notes.txt");
    assert_eq!(input["tool_use_id"], "c6");
    assert_eq!(input["permission_mode"], "acceptEdits");
    assert!(input.get("tool_response").is_some(), "{input}");
}

#[tokio::test(flavor = "multi_thread")]
async fn ask_makes_the_user_decide_and_only_the_users_own_allow_approves() {
    let env = Env::new();
    // A project hook (the repository's script, trusted) answers allow for every command.
    let decide = fixture_text("decide.py");
    std::fs::create_dir_all(env.ws.join(".agent")).unwrap();
    std::fs::write(env.ws.join(".agent/decide.py"), decide).unwrap();
    write_hooks(
        &env.ws.join(".agent/hooks.json"),
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 .agent/decide.py allow"}]}]}),
    );
    env.commit_and_trust().await;
    // The user's own hook asks about writes (which auto mode would allow) and allows `touch`.
    write_hooks(
        &env.user_hooks,
        json!({"PreToolUse": [
            {"matcher": "Write", "hooks": [{"type": "command", "command": fixture("decide.py", &["ask"])}]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": fixture("decide.py", &["allow", "user-made"])}]}
        ]}),
    );

    // Auto mode: the hook's ask makes the write wait for a person (none here: denied).
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "write_file", json!({"path": "a.txt", "content": "a"})),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let (out, events) = env.run(&server, &[], "write").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    the_ask(&events, "decide.py says ask");
    assert_eq!(finished(&events)[0]["data"]["status"], "denied");
    assert!(!env.ws.join("a.txt").exists());

    // Interactive mode: the user's allow runs `touch user-made` unasked; the project's allow
    // approves nothing, so `touch project-made` asks (and is denied without a person).
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c2", "run_shell", json!({"command": "touch user-made"})),
        Reply::tool_call("c3", "run_shell", json!({"command": "touch project-made"})),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let (out, events) = env.run_in(&server, "interactive", &[], "touch").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let f = finished(&events);
    assert_eq!(f[0]["data"]["status"], "ok", "{:?}", f[0]);
    assert_eq!(f[1]["data"]["status"], "denied", "{:?}", f[1]);
    assert!(env.ws.join("user-made").exists());
    assert!(!env.ws.join("project-made").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_settings_hooks_of_the_project_run_after_trust_and_not_before() {
    let env = Env::new();
    // A repository that ships Claude Code's project settings with a guard script of its own.
    let guard = fixture_text("bash_guard.py");
    std::fs::create_dir_all(env.ws.join(".claude/hooks")).unwrap();
    std::fs::write(env.ws.join(".claude/hooks/bash_guard.py"), guard).unwrap();
    std::fs::write(
        env.ws.join(".claude/settings.json"),
        serde_json::to_string_pretty(&json!({
            "env": {"FOO": "bar"},
            "statusLine": {"type": "command", "command": "echo hi"},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR\"/.claude/hooks/bash_guard.py"}
            ]}]}
        }))
        .unwrap(),
    )
    .unwrap();
    std::fs::create_dir_all(env.ws.join("build")).unwrap();
    cairn_testkit::git::git(&env.ws, &["add", "-A"]);
    cairn_testkit::git::git(&env.ws, &["commit", "-q", "-m", "claude settings"]);
    let script = || {
        vec![
            Reply::tool_call("c1", "run_shell", json!({"command": "rm -rf build"})),
            Reply::text("ok"),
        ]
    };

    // Before trust: the hook is named and does not run (a repository cannot run code).
    let server = MockLlmServer::with_script(script()).await.unwrap();
    let (out, events) = env.run(&server, &[], "clean").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("project hook(s)") && out.stderr.contains(".claude/settings.json"),
        "{}",
        out.stderr
    );
    assert_eq!(finished(&events)[0]["data"]["status"], "ok");
    std::fs::create_dir_all(env.ws.join("build")).unwrap();

    // Trusted: the guard runs as its authors wrote it, and blocks.
    let t = env
        .cli(&["hooks", "trust", "-w", env.ws.to_str().unwrap()])
        .await;
    assert_eq!(t.code, 0, "{}", t.stderr);
    let server = MockLlmServer::with_script(script()).await.unwrap();
    let (out, events) = env.run(&server, &[], "clean").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("project hook(s)"), "{}", out.stderr);
    assert_eq!(finished(&events)[0]["data"]["status"], "denied");
    assert!(env.ws.join("build").exists());
    let listed = env
        .cli(&["hooks", "list", "-w", env.ws.to_str().unwrap()])
        .await;
    assert!(
        listed
            .stderr
            .contains("`statusLine`, `env` never run or applied by Cairn"),
        "settings Cairn does not honour are named: {}",
        listed.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_settings_deny_rules_apply_after_trust_and_allow_rules_never() {
    let env = Env::new();
    std::fs::write(env.ws.join(".env"), "TOKEN=sk-DENIED-BY-CLAUDE-RULE\n").unwrap();
    std::fs::create_dir_all(env.ws.join(".claude")).unwrap();
    std::fs::write(
        env.ws.join(".claude/settings.json"),
        serde_json::to_string_pretty(&json!({"permissions": {
            "allow": ["Bash"],
            "deny": ["Bash(touch:*)", "Read(./.env)"]
        }}))
        .unwrap(),
    )
    .unwrap();
    cairn_testkit::git::git(&env.ws, &["add", "-A"]);
    cairn_testkit::git::git(&env.ws, &["commit", "-q", "-m", "claude settings"]);
    let script = |file: &str| {
        vec![
            Reply::tool_call(
                "c1",
                "exec_command",
                json!({"command": format!("touch {file}")}),
            ),
            Reply::tool_call("c2", "read_file", json!({"path": ".env"})),
            Reply::text("ok"),
        ]
    };

    // Before trust the repository's rules do nothing (as its hooks do nothing).
    let server = MockLlmServer::with_script(script("before")).await.unwrap();
    let (out, events) = env.run(&server, &[], "go").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let f = finished(&events);
    assert_eq!(f[0]["data"]["status"], "ok", "{:?}", f[0]);
    assert_eq!(f[1]["data"]["status"], "ok", "{:?}", f[1]);

    // Trusted: its deny rules bind every tool that does the same; its allow is named, unused.
    let t = env
        .cli(&["hooks", "trust", "-w", env.ws.to_str().unwrap()])
        .await;
    assert_eq!(t.code, 0, "{}", t.stderr);
    // (Auto mode, which would run both unasked.)
    let server = MockLlmServer::with_script(script("after")).await.unwrap();
    let (out, events) = env.run(&server, &[], "go").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let f = finished(&events);
    assert_eq!(f[0]["data"]["status"], "denied", "{:?}", f[0]);
    assert_eq!(f[1]["data"]["status"], "denied", "{:?}", f[1]);
    assert!(!env.ws.join("after").exists());
    let sent: String = server
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        !sent.contains("sk-DENIED-BY-CLAUDE-RULE"),
        "the denied .env reached the model"
    );
    assert!(
        out.stderr.contains("`permissions.allow` is not honoured"),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_hook_that_reads_the_transcript_loops_until_the_work_is_complete() {
    let env = Env::new();
    let log = env.ws.parent().unwrap().join("stop-log.jsonl");
    write_hooks(
        &env.user_hooks,
        json!({"Stop": [{"hooks": [{"type": "command",
            "command": fixture("stop_until_complete.py", &[&log.display().to_string()])}]}]}),
    );
    let server = MockLlmServer::with_script(vec![
        Reply::text("working, step 1"),
        Reply::text("working, step 2"),
        Reply::text("all COMPLETE"),
    ])
    .await
    .unwrap();
    let (out, events) = env.run(&server, &[], "do the task").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        server.requests().len(),
        3,
        "two stops blocked, the third allowed"
    );
    let last = events.last().unwrap();
    assert_eq!(last["type"], "turn_end", "{last}");
    let seen: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let texts: Vec<&str> = seen.iter().map(|s| s["last"].as_str().unwrap()).collect();
    assert_eq!(
        texts,
        ["working, step 1", "working, step 2", "all COMPLETE"]
    );
    assert_eq!(seen[0]["stop_hook_active"], false);
    assert_eq!(seen[1]["stop_hook_active"], true);
    // The transcript exists only while the hooks run.
    let path = PathBuf::from(seen[0]["transcript_path"].as_str().unwrap());
    assert!(!path.exists(), "{} was left behind", path.display());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_updated_input_runs_rewritten_and_a_projects_rewrite_asks_first() {
    let env = Env::new();
    // The user's own hook rewrites the command; the rewritten one runs (auto mode).
    write_hooks(
        &env.user_hooks,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": fixture("rewrite.py", &["'echo rewritten > out.txt'"])}]}]}),
    );
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "run_shell",
            json!({"command": "echo original > out.txt"}),
        ),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let (out, events) = env.run(&server, &[], "write").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(finished(&events)[0]["data"]["status"], "ok");
    assert_eq!(
        std::fs::read_to_string(env.ws.join("out.txt")).unwrap(),
        "rewritten\n"
    );
    let proposed: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_proposed")
        .collect();
    assert_eq!(
        proposed[0]["data"]["arguments"]["command"], "echo rewritten > out.txt",
        "the rewritten call is what is shown"
    );

    // A project hook's rewrite makes the user decide the rewritten call (none here: denied).
    std::fs::remove_file(&env.user_hooks).unwrap();
    let rewrite = fixture_text("rewrite.py");
    std::fs::create_dir_all(env.ws.join(".agent")).unwrap();
    std::fs::write(env.ws.join(".agent/rewrite.py"), rewrite).unwrap();
    write_hooks(
        &env.ws.join(".agent/hooks.json"),
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": "python3 .agent/rewrite.py 'echo planted > planted.txt'"}]}]}),
    );
    env.commit_and_trust().await;
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c2",
            "run_shell",
            json!({"command": "echo fine > fine.txt"}),
        ),
        Reply::text("ok"),
    ])
    .await
    .unwrap();
    let (out, events) = env.run(&server, &[], "write").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let asked = the_ask(&events, "rewrote this call");
    assert_eq!(
        asked["data"]["arguments"]["command"],
        "echo planted > planted.txt"
    );
    assert_eq!(finished(&events)[0]["data"]["status"], "denied");
    assert!(!env.ws.join("planted.txt").exists());
}
