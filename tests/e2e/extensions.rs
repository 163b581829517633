//! E2E: slash commands in the composer. `/` lists the built-ins, the user's and the project's
//! commands; typing narrows the list, Tab completes, Enter sends; a project command's
//! `$ARGUMENTS` expands into the prompt the mock receives; `/undo` puts the last change back
//! without a model turn. The project's untrusted hooks are named in a banner that leads to
//! Settings, which lists hooks, skills and commands and trusts the hooks.

use super::*;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The names the completion list shows, in order.
async fn listed(c: &Client) -> Vec<String> {
    let v = c
        .execute(
            "return [...document.querySelectorAll('[data-testid=command-option]')].map(e => e.dataset.name)",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_composer_completes_slash_commands_and_runs_them() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call(
                "c1",
                "write_file",
                json!({"path": "notes.txt", "content": "changed by the agent\n"}),
            ),
            Reply::text("Fixed issue 42."),
            // After the trust, in the same open chat: the project's PreToolUse hook blocks.
            Reply::tool_call(
                "c2",
                "write_file",
                json!({"path": "blocked.txt", "content": "must not be written\n"}),
            ),
            Reply::text("The hook stopped me."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("slashy");
    write(&ws.join("notes.txt"), "original\n");
    write(
        &ws.join(".agent/commands/fix-issue.md"),
        "---\ndescription: Fix a numbered issue\nargument-hint: [issue-number]\n---\nFix issue $ARGUMENTS carefully.\n",
    );
    write(
        &config.path().join("cairn/commands/greet.md"),
        "Say hello to $ARGUMENTS.\n",
    );
    write(
        &ws.join(".claude/skills/release/SKILL.md"),
        "---\nname: release\ndescription: How we cut a release\n---\nTag, then push.\n",
    );
    write(
        &ws.join(".agent/hooks.json"),
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "exit 2"}]}]}})
            .to_string(),
    );
    seed_recent(state.path(), &ws, json!({}));
    let trust_file = state.path().join("trust.json");
    let mut env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_TEST_APPROVER",
        Some("allow"),
    );
    env = with_var(
        env,
        "XDG_CONFIG_HOME",
        Some(&config.path().display().to_string()),
    );
    env.push(("CAIRN_MCP_TRUST".into(), trust_file.display().to_string()));
    env.push((
        "CAIRN_HOOKS_FILE".into(),
        config
            .path()
            .join("no-user-hooks.json")
            .display()
            .to_string(),
    ));
    let (mock, w, trust) = (server.clone(), ws.clone(), trust_file.clone());
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        let composer = find(&c, "[data-testid=composer]").await;

        // `/` lists every command: built-ins first, then the user's and the project's.
        composer.send_keys("/").await.unwrap();
        find(&c, "[data-testid=command-list]").await;
        wait_js(
            &c,
            "the commands to be listed",
            "return document.querySelectorAll('[data-testid=command-option]').length >= 8",
        )
        .await;
        let all = listed(&c).await;
        for name in ["compact", "undo", "review", "mode", "fix-issue", "greet"] {
            assert!(all.contains(&name.to_string()), "{name} missing from {all:?}");
        }
        assert_eq!(all[0], "compact", "built-ins come first: {all:?}");
        screenshot(&c, "slash-commands.png").await;

        // Typing narrows it (names first, then descriptions); Tab completes the name; Enter
        // sends the expanded prompt.
        composer.send_keys("fix").await.unwrap();
        wait_js(
            &c,
            "the list to narrow to fix-issue",
            "const o = [...document.querySelectorAll('[data-testid=command-option]')]; \
             return o.length >= 1 && o.length < 4 && o[0].dataset.name === 'fix-issue'",
        )
        .await;
        // Its argument hint shows beside its name, as Claude Code's does.
        assert_eq!(
            text_of(
                &c,
                "[data-testid=command-option][data-name=fix-issue] [data-testid=command-hint]"
            )
            .await,
            "[issue-number]"
        );
        composer.send_keys(&Key::Tab.to_string()).await.unwrap();
        wait_js(
            &c,
            "the name to be completed",
            "return document.querySelector('[data-testid=composer]').value === '/fix-issue '",
        )
        .await;
        assert_eq!(count(&c, "[data-testid=command-list]").await, 0);
        composer.send_keys("42").await.unwrap();
        composer.send_keys(&Key::Enter.to_string()).await.unwrap();
        wait_turns(&c, "completed", 1).await;
        let first = mock.requests()[0].body.to_string();
        assert!(first.contains("Fix issue 42 carefully."), "{first}");
        assert_eq!(
            std::fs::read_to_string(w.join("notes.txt")).unwrap(),
            "changed by the agent\n"
        );

        // `/undo` typed out in full: Enter sends it, no model turn, the file is back.
        send(&c, "/undo").await;
        wait_js(
            &c,
            "the undo notice",
            "return [...document.querySelectorAll('[data-testid=notice]')].some(n => n.textContent.includes('Undid the last change'))",
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(w.join("notes.txt")).unwrap(),
            "original\n"
        );
        assert_eq!(mock.requests().len(), 2, "/undo asked the model nothing");

        // The project's hooks are named as not running, and Settings trusts them.
        let banner = text_of(&c, "[data-testid=skipped-banner]").await;
        assert!(banner.contains(".agent/hooks.json"), "{banner}");
        click(&c, "[data-testid=skipped-review]").await;
        find(&c, "[data-testid=extensions]").await;
        find(&c, "[data-testid=ext-hook][data-trusted=false]").await;
        let skills = text_of(&c, "[data-testid=ext-skills]").await;
        assert!(skills.contains("release") && skills.contains("How we cut a release"), "{skills}");
        let commands = text_of(&c, "[data-testid=ext-commands]").await;
        assert!(commands.contains("/fix-issue") && commands.contains("/greet"), "{commands}");
        c.execute(
            "document.querySelector('[data-testid=extensions]').scrollIntoView({block: 'start'})",
            vec![],
        )
        .await
        .unwrap();
        screenshot(&c, "settings-extensions.png").await;
        // The whole command is shown before it is trusted (wrapped, never cut).
        let command = text_of(&c, "[data-testid=ext-hook] .ext-command").await;
        assert_eq!(command, "exit 2", "the hook's whole command");
        click(&c, "[data-testid=hooks-trust]").await;
        find(&c, "[data-testid=ext-hook][data-trusted=true]").await;
        assert!(std::fs::read_to_string(&trust).unwrap().contains("(hooks)"));
        click(&c, "[data-testid=overlay-close]").await;
        // The open chat's next turn runs the trusted hook (issue 45): it blocks the write.
        send(&c, "Write blocked.txt").await;
        wait_turns(&c, "completed", 2).await;
        assert!(
            !w.join("blocked.txt").exists(),
            "the trusted PreToolUse hook ran in the open chat and blocked the write"
        );
        wait_js(
            &c,
            "the banner about untrusted hooks gone",
            "return document.querySelector('[data-testid=skipped-banner]') === null",
        )
        .await;
    })
    .await;
    if ran {
        assert_eq!(server.requests().len(), 4);
    }
}

/// A repository's command with a `!` line waits for the trust in Settings (no hook file
/// needed to get there), then runs with its output inlined; the user's `~/.claude` is offered
/// there with what it holds, and read only once they take it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_trusts_a_commands_bang_lines_and_offers_the_users_claude_folder() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![Reply::text("Status read."), Reply::text("Hello.")])
            .await
            .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let claude = tempfile::tempdir().unwrap();
    write(
        &claude.path().join("commands/hello.md"),
        "---\ndescription: Greets\n---\nSay HELLO-FROM-CLAUDE-HOME.\n",
    );
    let (_ws_dir, ws) = named_workspace("claude-repo");
    write(
        &ws.join(".claude/commands/status.md"),
        "---\ndescription: Reads the status\n---\nStatus: !`echo BANG-E2E`\n",
    );
    seed_recent(state.path(), &ws, json!({}));
    let config = state.path().join("config/cairn/config.toml");
    let mut env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_TEST_APPROVER",
        Some("allow"),
    );
    env.push((
        "CAIRN_MCP_TRUST".into(),
        state.path().join("trust.json").display().to_string(),
    ));
    env.push((
        "CLAUDE_CONFIG_DIR".into(),
        claude.path().display().to_string(),
    ));
    let (mock, cfg) = (server.clone(), config.clone());
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        click(&c, "[data-testid=open-settings]").await;
        find(&c, "[data-testid=extensions]").await;
        let held = text_of(&c, "[data-testid=ext-held-commands]").await;
        assert!(held.contains(".claude/commands/status.md"), "{held}");
        let offer = text_of(&c, "[data-testid=ext-claude-offer]").await;
        assert!(offer.contains("commands"), "{offer}");
        let commands = text_of(&c, "[data-testid=ext-commands]").await;
        assert!(!commands.contains("/hello"), "{commands}");

        click(&c, "[data-testid=hooks-trust]").await;
        wait_js(
            &c,
            "the command to be trusted",
            "return document.querySelector('[data-testid=ext-held-commands]') === null",
        )
        .await;
        click(&c, "[data-testid=ext-claude-use]").await;
        wait_js(
            &c,
            "the user's /hello to be listed",
            "return document.querySelector('[data-testid=ext-claude-offer]') === null && \
             document.querySelector('[data-testid=ext-commands]').textContent.includes('/hello')",
        )
        .await;
        let written = std::fs::read_to_string(&cfg).unwrap();
        assert!(written.contains("user_files = true"), "{written}");
        click(&c, "[data-testid=overlay-close]").await;

        send(&c, "/status").await;
        wait_turns(&c, "completed", 1).await;
        let first = mock.requests()[0].body.to_string();
        assert!(first.contains("Status: BANG-E2E"), "{first}");
        send(&c, "/hello").await;
        wait_turns(&c, "completed", 2).await;
        let second = mock.requests()[1].body.to_string();
        assert!(second.contains("Say HELLO-FROM-CLAUDE-HOME."), "{second}");
    })
    .await;
    if ran {
        assert_eq!(server.requests().len(), 2);
    }
}
