//! Hooks in Claude Code's schema through `cairn run`: user hooks gate tools and prompts,
//! project hooks wait for the workspace trust (keyed by repository), timeouts kill.

use std::path::{Path, PathBuf};

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use super::checkpoints::{cairn, run_json_args, Out};

mod claude;

struct Env {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    state: PathBuf,
    user_hooks: PathBuf,
    trust: PathBuf,
    root: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        cairn_testkit::git::repo_with(&ws, &[("x", "keep me\n")]);
        Env {
            ws: ws.canonicalize().unwrap(),
            state: dir.path().join("state"),
            user_hooks: dir.path().join("user-hooks.json"),
            trust: dir.path().join("trust.json"),
            root: dir.path().join("worktrees"),
            _dir: dir,
        }
    }

    fn script(&self, name: &str, body: &str) -> String {
        let p = self.ws.parent().unwrap().join(name);
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p.display().to_string()
    }

    fn envs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("CAIRN_HOOKS_FILE", self.user_hooks.display().to_string()),
            ("CAIRN_MCP_TRUST", self.trust.display().to_string()),
            ("CAIRN_WORKTREES_DIR", self.root.display().to_string()),
            ("CAIRN_MCP", "0".to_string()),
        ]
    }

    async fn cli(&self, args: &[&str]) -> Out {
        let envs = self.envs();
        let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        cairn(args, &envs).await
    }

    async fn run(&self, server: &MockLlmServer, extra: &[&str], prompt: &str) -> (Out, Vec<Value>) {
        self.run_in(server, "auto", extra, prompt).await
    }

    /// `cairn run --json --mode MODE` with no terminal (approvals that ask are denied).
    async fn run_in(
        &self,
        server: &MockLlmServer,
        mode: &str,
        extra: &[&str],
        prompt: &str,
    ) -> (Out, Vec<Value>) {
        let args = run_json_args(
            &self.ws,
            &self.state,
            &server.base_url(),
            mode,
            extra,
            prompt,
        );
        let out = self
            .cli(&args.iter().map(String::as_str).collect::<Vec<_>>())
            .await;
        let events = out.events();
        (out, events)
    }
}

fn finished(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["type"] == "tool_finished")
        .collect()
}

fn write_hooks(path: &Path, hooks: Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        serde_json::to_string_pretty(&json!({ "hooks": hooks })).unwrap(),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn user_hooks_block_rm_see_responses_add_context_and_time_out() {
    let env = Env::new();
    let seen = env.ws.parent().unwrap().join("post-input.json");
    let gate = env.script(
        "no-rm.sh",
        "input=$(cat)\ncase \"$input\" in *'\"command\":\"rm '*) echo 'rm is not allowed here' >&2; exit 2;; esac\nexit 0",
    );
    let post = env.script("post.sh", &format!("cat > {}", seen.display()));
    let ctx = env.script(
        "ctx.sh",
        "cat > /dev/null; echo '{\"additionalContext\": \"CTX-FROM-HOOK-42\"}'",
    );
    let slow = env.script("slow.sh", "sleep 30");
    write_hooks(
        &env.user_hooks,
        json!({
            "PreToolUse": [
                {"matcher": "run_shell", "hooks": [{"type": "command", "command": gate}]},
                {"matcher": "list_files", "hooks": [{"type": "command", "command": slow, "timeout": 1}]}
            ],
            "PostToolUse": [{"matcher": "run_shell", "hooks": [{"type": "command", "command": post}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": ctx}]}]
        }),
    );
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "run_shell", json!({"command": "rm x"})),
        Reply::tool_call("c2", "run_shell", json!({"command": "ls"})),
        Reply::tool_call("c3", "list_files", json!({})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let started = std::time::Instant::now();
    let (out, events) = env.run(&server, &[], "tidy up").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let f = finished(&events);
    assert_eq!(f[0]["data"]["status"], "denied", "{:?}", f[0]);
    assert_eq!(f[1]["data"]["status"], "ok", "ls runs");
    assert_eq!(
        f[2]["data"]["status"], "ok",
        "a hook past its timeout is killed, the call goes on"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(25));
    assert!(out.stderr.contains("timeout"), "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(env.ws.join("x")).unwrap(),
        "keep me\n"
    );
    let requests = server.requests();
    assert!(
        requests[0].body.to_string().contains("CTX-FROM-HOOK-42"),
        "context in the first request"
    );
    assert!(
        requests[1]
            .body
            .to_string()
            .contains("rm is not allowed here"),
        "the hook's stderr reached the model"
    );
    let post_input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(post_input["hook_event_name"], "PostToolUse");
    assert_eq!(post_input["tool_name"], "Bash");
    assert_eq!(post_input["cairn_tool_name"], "run_shell");
    assert_eq!(post_input["tool_input"]["command"], "ls");
    assert!(post_input.get("tool_response").is_some(), "{post_input}");
}

#[tokio::test(flavor = "multi_thread")]
async fn project_hooks_wait_for_trust_keyed_by_repository_and_a_change_withdraws_it() {
    let env = Env::new();
    let hooks_file = env.ws.join(".agent/hooks.json");
    write_hooks(
        &hooks_file,
        json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "echo 'project says no' >&2; exit 2"}]}]}),
    );
    cairn_testkit::git::git(&env.ws, &["add", "-A"]);
    cairn_testkit::git::git(&env.ws, &["commit", "-q", "-m", "hooks"]);
    let script = || {
        vec![
            Reply::tool_call("c1", "run_shell", json!({"command": "true"})),
            Reply::text("ok"),
        ]
    };

    // Not trusted: named on stderr (also with --json), and it does not run.
    let server = MockLlmServer::with_script(script()).await.unwrap();
    let (out, events) = env.run(&server, &[], "go").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("project hook(s)") && out.stderr.contains("hooks trust"),
        "{}",
        out.stderr
    );
    assert_eq!(finished(&events)[0]["data"]["status"], "ok");
    let listed = env
        .cli(&["hooks", "list", "-w", env.ws.to_str().unwrap(), "--json"])
        .await;
    assert!(
        listed.stdout.contains("\"trusted\":false") && listed.stdout.contains("\"sandboxed\":true"),
        "{}",
        listed.stdout
    );

    // Trusted (the workspace trust, `cairn mcp trust` style): it runs.
    let t = env
        .cli(&["hooks", "trust", "-w", env.ws.to_str().unwrap()])
        .await;
    assert_eq!(t.code, 0, "{}", t.stderr);
    let server = MockLlmServer::with_script(script()).await.unwrap();
    let (out, events) = env.run(&server, &[], "go").await;
    assert!(!out.stderr.contains("project hook(s)"), "{}", out.stderr);
    assert_eq!(finished(&events)[0]["data"]["status"], "denied");

    // A worktree of the trusted repository: same definitions, same trust.
    let server = MockLlmServer::with_script(script()).await.unwrap();
    let (out, events) = env.run(&server, &["--worktree", "w"], "go").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        finished(&events)[0]["data"]["status"],
        "denied",
        "trusted in the worktree too"
    );

    // A user WorktreeCreate hook runs in each new worktree (the trusted setup step).
    write_hooks(
        &env.user_hooks,
        json!({"WorktreeCreate": [{"hooks": [{"type": "command", "command": "cat > setup-input.json"}]}]}),
    );
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let (out, events) = env.run(&server, &["--worktree", "w2"], "go").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let wt = PathBuf::from(events[0]["data"]["worktree"]["path"].as_str().unwrap());
    let setup: Value =
        serde_json::from_str(&std::fs::read_to_string(wt.join("setup-input.json")).unwrap())
            .unwrap();
    assert_eq!(setup["hook_event_name"], "WorktreeCreate");
    assert_eq!(setup["worktree"]["name"], "w2");

    // Its WorktreeRemove hook runs in the folder once the worktree is gone.
    let removed = env.ws.parent().unwrap().join("removed-input.json");
    write_hooks(
        &env.user_hooks,
        json!({"WorktreeRemove": [{"hooks": [{"type": "command", "command": format!("cat > {}", removed.display())}]}]}),
    );
    let (ws, state) = (
        env.ws.display().to_string(),
        env.state.display().to_string(),
    );
    let out = env
        .cli(&[
            "worktrees",
            "remove",
            "w2",
            "--force",
            "-w",
            &ws,
            "--state-dir",
            &state,
        ])
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!wt.exists());
    let gone: Value = serde_json::from_str(&std::fs::read_to_string(&removed).unwrap()).unwrap();
    assert_eq!(gone["hook_event_name"], "WorktreeRemove");
    assert_eq!(gone["worktree"]["name"], "w2");
    assert_eq!(gone["cwd"], json!(env.ws), "run in the folder");

    // An edit withdraws the trust.
    write_hooks(
        &hooks_file,
        json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "exit 2"}]}]}),
    );
    let server = MockLlmServer::with_script(script()).await.unwrap();
    let (out, events) = env.run(&server, &[], "go").await;
    assert!(out.stderr.contains("project hook(s)"), "{}", out.stderr);
    assert_eq!(finished(&events)[0]["data"]["status"], "ok");
}

#[tokio::test(flavor = "multi_thread")]
async fn session_start_and_end_hooks_run_once_each_per_run() {
    let env = Env::new();
    let log = env.ws.parent().unwrap().join("lifecycle.log");
    let record = env.script(
        "record.sh",
        &format!(
            "tr ',' '\\n' | grep hook_event_name | cut -d'\"' -f4 >> {}",
            log.display()
        ),
    );
    write_hooks(
        &env.user_hooks,
        json!({
            "SessionStart": [{"hooks": [{"type": "command", "command": record}]}],
            "SessionEnd": [{"hooks": [{"type": "command", "command": record}]}]
        }),
    );
    let server = MockLlmServer::with_script(vec![Reply::text("hi")])
        .await
        .unwrap();
    let (out, _) = env.run(&server, &[], "hello").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let seen = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        ["SessionStart", "SessionEnd"],
        "{seen}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_tool_use_hook_gates_a_subagents_calls_too() {
    let env = Env::new();
    let gate = env.script(
        "no-rm.sh",
        "input=$(cat)\ncase \"$input\" in *'\"command\":\"rm '*) echo 'rm is not allowed here' >&2; exit 2;; esac\nexit 0",
    );
    write_hooks(
        &env.user_hooks,
        json!({"PreToolUse": [{"matcher": "run_shell", "hooks": [{"type": "command", "command": gate}]}]}),
    );
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("s1", "run_subagent", json!({"task": "delete x"})),
        Reply::tool_call("c1", "run_shell", json!({"command": "rm x"})),
        Reply::text("CHILD REPORT"),
        Reply::text("parent done"),
    ])
    .await
    .unwrap();
    let (out, _) = env.run(&server, &[], "clean up through a subagent").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(env.ws.join("x")).unwrap(),
        "keep me\n",
        "the subagent's rm ran past the hook"
    );
    let child_after = server.requests()[2].body.to_string();
    assert!(
        child_after.contains("rm is not allowed here"),
        "the hook's stderr reached the subagent: {child_after}"
    );
}

/// A trusted project hook runs inside the session's sandbox (issue 35): the repository
/// script it runs (`sh scripts/fmt.sh`, which the agent could have just edited) cannot
/// write outside the workspace nor read a hidden file, while it still writes the workspace.
#[tokio::test(flavor = "multi_thread")]
async fn a_trusted_project_hook_runs_inside_the_sandbox() {
    if !(cairn_policy::sandbox::bwrap_path().is_some() && cairn_policy::sandbox::bwrap_works()) {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED: bubblewrap cannot run here");
        return;
    }
    let env = Env::new();
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let outside = outside.path().canonicalize().unwrap();
    let secret = outside.join("secret.txt");
    std::fs::write(&secret, "hidden-secret-value\n").unwrap();
    std::fs::create_dir_all(env.ws.join("scripts")).unwrap();
    std::fs::write(
        env.ws.join("scripts/fmt.sh"),
        format!(
            "echo hook-ran > hook-ran.txt\ntouch {o}/escaped\ncat {s} > hook-read.txt\nexit 0\n",
            o = outside.display(),
            s = secret.display()
        ),
    )
    .unwrap();
    write_hooks(
        &env.ws.join(".agent/hooks.json"),
        json!({"SessionStart": [{"hooks": [{"type": "command", "command": "sh scripts/fmt.sh"}]}]}),
    );
    cairn_testkit::git::git(&env.ws, &["add", "-A"]);
    cairn_testkit::git::git(&env.ws, &["commit", "-q", "-m", "hooks"]);
    let t = env
        .cli(&["hooks", "trust", "-w", env.ws.to_str().unwrap()])
        .await;
    assert_eq!(t.code, 0, "{}", t.stderr);
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let hide = secret.display().to_string();
    let (out, _) = env
        .run(
            &server,
            &["--sandbox", "required", "--sandbox-hide", &hide],
            "go",
        )
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(env.ws.join("hook-ran.txt")).unwrap_or_default(),
        "hook-ran\n",
        "the hook did not run: {}",
        out.stderr
    );
    assert!(!outside.join("escaped").exists(), "the hook wrote outside");
    let read = std::fs::read_to_string(env.ws.join("hook-read.txt")).unwrap_or_default();
    assert!(
        !read.contains("hidden-secret-value"),
        "the hook read a hidden file"
    );
}

/// A user's own hook whose program the workspace picks (`sh scripts/…`) runs what the agent
/// may have edited, so it runs inside the sandbox too, unless the user marks it
/// `"sandbox": false`; `cairn hooks list` says which and why.
#[tokio::test(flavor = "multi_thread")]
async fn a_user_hook_running_a_workspace_script_runs_inside_unless_marked() {
    if !(cairn_policy::sandbox::bwrap_path().is_some() && cairn_policy::sandbox::bwrap_works()) {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED: bubblewrap cannot run here");
        return;
    }
    let env = Env::new();
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let outside = outside.path().canonicalize().unwrap();
    std::fs::create_dir_all(env.ws.join("scripts")).unwrap();
    std::fs::write(
        env.ws.join("scripts/fmt.sh"),
        format!(
            "echo ran >> hook-ran.txt\ntouch {o}/escaped-$1\nexit 0\n",
            o = outside.display()
        ),
    )
    .unwrap();
    let run_once = |marked: bool| {
        let mut hook = json!({"type": "command", "command": format!("sh scripts/fmt.sh {marked}")});
        if marked {
            hook["sandbox"] = json!(false);
        }
        write_hooks(
            &env.user_hooks,
            json!({"SessionStart": [{"hooks": [hook]}]}),
        );
    };
    run_once(false);
    let listed = env
        .cli(&["hooks", "list", "-w", env.ws.to_str().unwrap(), "--json"])
        .await;
    assert!(
        listed.stdout.contains("\"sandboxed\":true")
            && listed.stdout.contains("from the workspace with sh"),
        "{}",
        listed.stdout
    );
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let (out, _) = env.run(&server, &["--sandbox", "required"], "go").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(env.ws.join("hook-ran.txt")).unwrap_or_default(),
        "ran\n",
        "the hook did not run: {}",
        out.stderr
    );
    assert!(
        !outside.join("escaped-false").exists(),
        "the hook wrote outside"
    );

    // Marked by the user: it runs outside, as the user's own program.
    run_once(true);
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let (out, _) = env.run(&server, &["--sandbox", "required"], "go").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        outside.join("escaped-true").exists(),
        "the marked hook ran inside"
    );
}
