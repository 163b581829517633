//! Command files as Claude Code runs them: `` !`cmd` `` lines run before the prompt is sent
//! (after the workspace trust for a project command; through the permission engine), their
//! output inlined; `allowed-tools` grants for that command's turn only; `model` is that
//! turn's model. And the user's own `~/.claude`, read only once they opted in.

use std::path::PathBuf;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use crate::suite::checkpoints::{cairn, run_json_args, Out};

struct Env {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    state: PathBuf,
    cfg: PathBuf,
    home: PathBuf,
    trust: PathBuf,
    rules: PathBuf,
}

impl Env {
    /// A repository with `files`, committed.
    fn new(files: &[(&str, &str)]) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        cairn_testkit::git::repo_with(&ws, files);
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        Env {
            ws: ws.canonicalize().unwrap(),
            state: dir.path().join("state"),
            cfg: dir.path().join("cfg"),
            home,
            trust: dir.path().join("trust.json"),
            rules: dir.path().join("rules.toml"),
            _dir: dir,
        }
    }

    fn envs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("CAIRN_MCP_TRUST", self.trust.display().to_string()),
            ("CAIRN_PERMISSIONS_FILE", self.rules.display().to_string()),
            (
                "CAIRN_HOOKS_FILE",
                self.cfg.join("hooks.json").display().to_string(),
            ),
            ("XDG_CONFIG_HOME", self.cfg.display().to_string()),
            ("HOME", self.home.display().to_string()),
            ("CAIRN_MCP", "0".to_string()),
        ]
    }

    async fn cli(&self, args: &[&str]) -> Out {
        let envs = self.envs();
        let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        cairn(args, &envs).await
    }

    /// `cairn run --json --mode MODE` (no terminal: approvals that ask are denied).
    async fn run(
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

    /// `cairn hooks trust`, which names the files it covers.
    async fn trust(&self) -> String {
        let t = self
            .cli(&["hooks", "trust", "-w", self.ws.to_str().unwrap()])
            .await;
        assert_eq!(t.code, 0, "{}", t.stderr);
        t.stdout
    }

    async fn add_rule(&self, rule: &str, decision: &str) {
        let out = self
            .cli(&["permissions", "add", rule, "--decision", decision])
            .await;
        assert_eq!(out.code, 0, "{}", out.stderr);
    }
}

/// The user messages the model got in the first request.
fn sent(server: &MockLlmServer) -> String {
    let body = &server.requests()[0].body;
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn asked(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["type"] == "permission_required")
        .collect()
}

fn session_of(events: &[Value]) -> String {
    events[0]["data"]["sessionId"].as_str().unwrap().to_string()
}

/// A status command as Claude Code's own `commit-push-pr.md` writes its context lines.
const STATUS_MD: &str = "---\ndescription: Summarise the state of the branch\n---\n## Context\n\n- Current git status: !`git status`\n- Marker: !`echo BANG-OUT`\n\n## Your task\n\nSummarise.\n";

#[tokio::test(flavor = "multi_thread")]
async fn bang_lines_run_after_trust_inline_their_output_and_obey_deny_and_ask_rules() {
    let env = Env::new(&[
        ("a.txt", "one\n"),
        (".claude/commands/status.md", STATUS_MD),
    ]);
    let one_reply = || async {
        MockLlmServer::with_script(vec![Reply::text("ok")])
            .await
            .unwrap()
    };

    // Before the trust: nothing runs, the prompt says so, and the user is told.
    let server = one_reply().await;
    let (out, events) = env.run(&server, "auto", &[], "/status").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let body = sent(&server);
    assert!(
        body.contains("[`git status` was not run: the workspace is not trusted]"),
        "{body}"
    );
    assert!(
        !body.contains("On branch") && !body.contains("!`echo"),
        "{body}"
    );
    assert!(
        out.stderr.contains("/status: its `!` lines"),
        "{}",
        out.stderr
    );
    assert!(
        !events.iter().any(|e| e["type"] == "tool_started"),
        "{events:?}"
    );

    // After it: each line runs as a run_shell call of the turn, its output in its place.
    let trusted = env.trust().await;
    assert!(trusted.contains(".claude/commands/status.md"), "{trusted}");
    let server = one_reply().await;
    let (out, events) = env.run(&server, "auto", &[], "/status").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let body = sent(&server);
    assert!(
        body.contains("Current git status: On branch main"),
        "{body}"
    );
    assert!(
        body.contains("- Marker: BANG-OUT\\n\\n## Your task"),
        "{body}"
    );
    assert!(!body.contains("!`"), "{body}");
    let shells: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_finished" && e["data"]["name"] == "run_shell")
        .collect();
    assert_eq!(shells.len(), 2, "{events:?}");

    // An ask rule on git asks (and with no one to answer, the line is not run, and said so);
    // the other line still runs.
    env.add_rule("run_shell(git status:*)", "ask").await;
    let server = one_reply().await;
    let (out, events) = env.run(&server, "auto", &[], "/status").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(asked(&events).len(), 1, "{events:?}");
    let body = sent(&server);
    assert!(body.contains("[`git status` was not run: denied"), "{body}");
    assert!(body.contains("- Marker: BANG-OUT"), "{body}");

    // A deny rule denies it outright.
    env.add_rule("run_shell(git:*)", "deny").await;
    let server = one_reply().await;
    let (out, events) = env.run(&server, "auto", &[], "/status").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(asked(&events).is_empty(), "{events:?}");
    let body = sent(&server);
    assert!(body.contains("[`git status` was not run: denied"), "{body}");
    assert!(!body.contains("On branch"), "{body}");

    // An edit of the command withdraws the trust: nothing runs again.
    std::fs::write(
        env.ws.join(".claude/commands/status.md"),
        STATUS_MD.replace("BANG-OUT", "BANG-EDITED"),
    )
    .unwrap();
    let server = one_reply().await;
    let (out, _) = env.run(&server, "auto", &[], "/status").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let body = sent(&server);
    assert!(
        body.contains("[`echo BANG-EDITED` was not run: the workspace is not trusted]"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_commands_allowed_tools_cover_its_own_bang_lines_in_interactive_mode() {
    // As Anthropic's commit-push-pr.md pairs them: its context lines are allowed-tools.
    let env = Env::new(&[
        ("a.txt", "one\n"),
        (
            ".claude/commands/commit.md",
            "---\nallowed-tools: Bash(git status:*), Bash(git diff:*)\ndescription: Commit\n---\n## Context\n\n- Current git status: !`git status`\n- Current git diff: !`git diff HEAD`\n- Last commit: !`git log --oneline -1`\n",
        ),
    ]);
    env.trust().await;
    std::fs::write(env.ws.join("a.txt"), "two\n").unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    // Outside the sandbox, where even read-only commands ask in interactive mode.
    let (out, events) = env
        .run(&server, "interactive", &["--sandbox", "off"], "/commit")
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let asks = asked(&events);
    assert_eq!(asks.len(), 1, "{events:?}");
    assert!(asks[0].to_string().contains("git log"), "{}", asks[0]);
    let body = sent(&server);
    assert!(
        body.contains("Current git status: On branch main"),
        "{body}"
    );
    assert!(body.contains("+two"), "{body}");
    assert!(
        body.contains("[`git log --oneline -1` was not run: denied"),
        "{body}"
    );
}

/// A commit command as Claude Code's users write it.
const COMMIT_MD: &str = "---\nallowed-tools: Bash(git add:*), Bash(git status:*)\ndescription: Stage the work\nmodel: other-model\n---\nStage a.txt.\n";

#[tokio::test(flavor = "multi_thread")]
async fn allowed_tools_grant_that_commands_turn_only_after_trust_and_model_is_that_turns() {
    let env = Env::new(&[("a.txt", "one\n"), (".claude/commands/stage.md", COMMIT_MD)]);
    std::fs::write(env.ws.join("a.txt"), "two\n").unwrap();
    let staged = || cairn_testkit::git::git(&env.ws, &["diff", "--cached", "--name-only"]);
    let add_then_done = || async {
        MockLlmServer::with_script(vec![
            Reply::tool_call("c1", "run_shell", json!({"command": "git add a.txt"})),
            Reply::text("staged"),
        ])
        .await
        .unwrap()
    };

    // Outside the sandbox (which keeps .git read-only) so that `git add` can stage.
    let off = ["--sandbox", "off"];

    // `commands list` says what it asks of its turn.
    let listed = rows(
        &env.cli(&["commands", "list", "-w", env.ws.to_str().unwrap(), "--json"])
            .await,
    );
    let stage = listed
        .iter()
        .find(|r| r["name"] == "stage")
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert_eq!(
        stage["allowedTools"],
        json!(["Bash(git add:*)", "Bash(git status:*)"])
    );
    assert_eq!(stage["model"], "other-model");

    // Before the trust the project's allowed-tools grant nothing: `git add` asks (denied).
    let server = add_then_done().await;
    let (out, events) = env.run(&server, "interactive", &off, "/stage").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(asked(&events).len(), 1, "{events:?}");
    assert_eq!(staged().trim(), "");

    // After it: `git add` runs unasked during /stage's turn, on the command's model.
    env.trust().await;
    let server = add_then_done().await;
    let (out, events) = env.run(&server, "interactive", &off, "/stage").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(asked(&events).is_empty(), "{events:?}");
    assert_eq!(staged().trim(), "a.txt");
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], "other-model");
    assert_eq!(requests[1].body["model"], "other-model");
    let sid = session_of(&events);

    // The next turn of the same session, not the command's: it asks again, on the session's
    // model.
    cairn_testkit::git::git(&env.ws, &["reset", "-q"]);
    let server = add_then_done().await;
    let (out, events) = env
        .run(
            &server,
            "interactive",
            &["--session", &sid],
            "stage a.txt please",
        )
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(asked(&events).len(), 1, "{events:?}");
    assert_eq!(staged().trim(), "");
    assert_eq!(server.requests()[0].body["model"], "m");

    // A grant is never past a deny rule.
    env.add_rule("run_shell(git add:*)", "deny").await;
    let server = add_then_done().await;
    let (out, events) = env.run(&server, "interactive", &off, "/stage").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let denied = events
        .iter()
        .find(|e| e["type"] == "tool_finished")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert_eq!(denied["data"]["status"], "denied", "{denied}");
    assert_eq!(staged().trim(), "");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_claude_model_alias_off_anthropic_is_said_and_the_session_model_used() {
    let env = Env::new(&[(
        ".claude/commands/think.md",
        "---\nmodel: opus\n---\nThink hard.\n",
    )]);
    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let (out, _) = env.run(&server, "auto", &[], "/think").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("/think: model `opus` is Anthropic's"),
        "{}",
        out.stderr
    );
    assert_eq!(server.requests()[0].body["model"], "m");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_project_command_under_a_users_name_gets_no_grant_and_a_skill_command_does() {
    let stage = "---\nallowed-tools: Bash(git add:*)\n---\nStage a.txt.\n";
    let env = Env::new(&[
        ("a.txt", "one\n"),
        (".claude/commands/dev/stage.md", stage),
        (
            ".claude/skills/stager/SKILL.md",
            "---\nname: stager\ndescription: Stages\ndisable-model-invocation: true\nallowed-tools:\n  - Bash(git add:*)\n---\nStage a.txt.\n",
        ),
    ]);
    std::fs::create_dir_all(env.cfg.join("cairn/commands")).unwrap();
    std::fs::write(env.cfg.join("cairn/commands/stage.md"), "USER STAGE\n").unwrap();
    std::fs::write(env.ws.join("a.txt"), "two\n").unwrap();
    env.trust().await;
    let staged = || cairn_testkit::git::git(&env.ws, &["diff", "--cached", "--name-only"]);
    let add_then_done = || async {
        MockLlmServer::with_script(vec![
            Reply::tool_call("c1", "run_shell", json!({"command": "git add a.txt"})),
            Reply::text("staged"),
        ])
        .await
        .unwrap()
    };
    let off = ["--sandbox", "off"];

    // /stage is yours; the project's is /dev:stage, and its allowed-tools are not honoured.
    let server = add_then_done().await;
    let (out, events) = env.run(&server, "interactive", &off, "/dev:stage").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "/dev:stage: allowed-tools is not honoured: a command of yours has this name"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(asked(&events).len(), 1, "{events:?}");
    assert_eq!(staged().trim(), "");

    // A skill invoked as a command (its allowed-tools a YAML list) grants for its turn.
    let listed = rows(
        &env.cli(&["commands", "list", "-w", env.ws.to_str().unwrap(), "--json"])
            .await,
    );
    let stager = listed
        .iter()
        .find(|r| r["name"] == "stager")
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert_eq!(stager["allowedTools"], json!(["Bash(git add:*)"]));
    let server = add_then_done().await;
    let (out, events) = env.run(&server, "interactive", &off, "/stager").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(asked(&events).is_empty(), "{events:?}");
    assert_eq!(staged().trim(), "a.txt");
}

/// The JSON lines of a `cairn … list --json`.
fn rows(out: &Out) -> Vec<Value> {
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_users_claude_folder_is_not_read_until_they_opt_in() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let claude = env.home.join(".claude");
    std::fs::create_dir_all(claude.join("commands")).unwrap();
    std::fs::create_dir_all(claude.join("skills/house-style")).unwrap();
    std::fs::create_dir_all(claude.join("agents")).unwrap();
    let guard = env.home.join("no-shell.sh");
    std::fs::write(
        &guard,
        "#!/bin/sh\ncat >/dev/null\necho 'no shell from ~/.claude' >&2\nexit 2\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        claude.join("settings.json"),
        serde_json::to_string(&json!({
            "model": "opus",
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": guard.display().to_string()}
            ]}]}
        }))
        .unwrap(),
    )
    .unwrap();
    std::fs::write(
        claude.join("commands/greet.md"),
        "---\ndescription: Say hello\n---\nSay GREET-FROM-HOME to $1.\n",
    )
    .unwrap();
    std::fs::write(
        claude.join("skills/house-style/SKILL.md"),
        "---\nname: house-style\ndescription: |-\n  How we write\n  our code.\n---\nUse tabs.\n",
    )
    .unwrap();
    std::fs::write(
        claude.join("agents/home-reviewer.md"),
        "---\nname: home-reviewer\ndescription: Reviews\nmodel: inherit\n---\nYou are HOME-REVIEWER-9.\n",
    )
    .unwrap();
    let ws = env.ws.display().to_string();
    let shell_then_done = || async {
        MockLlmServer::with_script(vec![
            Reply::tool_call("c1", "run_shell", json!({"command": "echo hi"})),
            Reply::text("done"),
        ])
        .await
        .unwrap()
    };
    let names = |rows: &[Value], key: &str| -> Vec<String> {
        rows.iter()
            .map(|r| r[key].as_str().unwrap_or_default().to_string())
            .collect()
    };

    // Not opted in: nothing of ~/.claude is listed or runs; the lists offer it.
    let commands = env.cli(&["commands", "list", "-w", &ws, "--json"]).await;
    assert!(!names(&rows(&commands), "name").contains(&"greet".into()));
    assert!(
        commands.stderr.contains("~/.claude has settings.json")
            && commands.stderr.contains("user_files = true"),
        "{}",
        commands.stderr
    );
    let skills = env.cli(&["skills", "list", "-w", &ws, "--json"]).await;
    assert!(!names(&rows(&skills), "name").contains(&"house-style".into()));
    let hooks = env.cli(&["hooks", "list", "-w", &ws, "--json"]).await;
    assert!(rows(&hooks).is_empty(), "{}", hooks.stdout);
    let server = shell_then_done().await;
    let (out, events) = env.run(&server, "auto", &[], "run it").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ran = events
        .iter()
        .find(|e| e["type"] == "tool_finished")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert_eq!(ran["data"]["status"], "ok", "{ran}");
    let server = shell_then_done().await;
    let (out, _) = env
        .run(&server, "auto", &["--agent", "home-reviewer"], "hi")
        .await;
    assert_ne!(out.code, 0, "{}", out.stdout);
    assert!(
        out.stderr.contains("unknown agent `home-reviewer`"),
        "{}",
        out.stderr
    );

    // Opted in: the user's own commands, skills, roles and hooks.
    std::fs::create_dir_all(env.cfg.join("cairn")).unwrap();
    std::fs::write(
        env.cfg.join("cairn/config.toml"),
        "[claude_code]\nuser_files = true\n",
    )
    .unwrap();
    let commands = env.cli(&["commands", "list", "-w", &ws, "--json"]).await;
    let listed = rows(&commands);
    let greet = listed
        .iter()
        .find(|r| r["name"] == "greet")
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert_eq!(greet["source"], "user");
    assert!(
        !commands.stderr.contains("~/.claude has"),
        "{}",
        commands.stderr
    );
    let skills = rows(&env.cli(&["skills", "list", "-w", &ws, "--json"]).await);
    let style = skills
        .iter()
        .find(|r| r["name"] == "house-style")
        .unwrap_or_else(|| panic!("{skills:?}"));
    assert_eq!(style["description"], "How we write\nour code.");
    let hooks = rows(&env.cli(&["hooks", "list", "-w", &ws, "--json"]).await);
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert_eq!(hooks[0]["source"], "user");
    assert_eq!(hooks[0]["matcher"], "Bash");

    let server = shell_then_done().await;
    let (out, events) = env.run(&server, "auto", &[], "run it").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let blocked = events
        .iter()
        .find(|e| e["type"] == "tool_finished")
        .unwrap_or_else(|| panic!("{events:?}"));
    assert_eq!(blocked["data"]["status"], "denied", "{blocked}");
    assert!(out.stderr.contains("`model`"), "{}", out.stderr);

    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let (out, _) = env.run(&server, "auto", &[], "/greet Ann").await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(sent(&server).contains("Say GREET-FROM-HOME to Ann."));

    let server = MockLlmServer::with_script(vec![Reply::text("ok")])
        .await
        .unwrap();
    let (out, _) = env
        .run(&server, "auto", &["--agent", "home-reviewer"], "hi")
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let body = server.requests()[0].body.to_string();
    assert!(
        body.contains("HOME-REVIEWER-9"),
        "{}",
        &body[..body.len().min(2000)]
    );
}
