//! End to end: drives the real desktop app through WebDriver (tauri-driver in front of
//! WebKitWebDriver) against a scripted mock LLM server, and answers native GTK dialogs with
//! xdotool. Screenshots of the main views go to docs/screenshots/.
//!
//! Run under a display and a D-Bus session, with the UI embedded:
//! `xvfb-run -a -s "-screen 0 1280x800x24" dbus-run-session -- cargo test -p cairn-app --features custom-protocol --test e2e`
//! Without `tauri-driver`, WebKitWebDriver, a display or the `custom-protocol` feature the tests
//! are skipped with a message, unless `CAIRN_E2E=1` (CI), where any of those is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "e2e/approvals.rs"]
mod approvals;
#[path = "e2e/batch.rs"]
mod batch;
#[path = "e2e/board.rs"]
mod board;
#[path = "e2e/cards.rs"]
mod cards;
#[path = "e2e/chrome.rs"]
mod chrome;
#[path = "e2e/diagnostics.rs"]
mod diagnostics;
#[path = "e2e/extensions.rs"]
mod extensions;
#[path = "e2e/files.rs"]
mod files;
#[path = "e2e/follow.rs"]
mod follow;
#[path = "e2e/git_dir.rs"]
mod git_dir;
#[path = "e2e/handoff.rs"]
mod handoff;
#[path = "e2e/history.rs"]
mod history;
#[path = "e2e/layout.rs"]
mod layout;
#[path = "e2e/long_session.rs"]
mod long_session;
#[path = "e2e/mcp_connect.rs"]
mod mcp_connect;
#[path = "e2e/mcp_elicit.rs"]
mod mcp_elicit;
#[path = "e2e/mcp_trust.rs"]
mod mcp_trust;
#[path = "e2e/notices.rs"]
mod notices;
#[path = "e2e/project_rules.rs"]
mod project_rules;
#[path = "e2e/resume.rs"]
mod resume;
#[path = "e2e/rewind.rs"]
mod rewind;
#[path = "e2e/sandbox.rs"]
mod sandbox;
#[path = "e2e/setup.rs"]
mod setup;
#[path = "e2e/steering.rs"]
mod steering;
mod support;
#[path = "e2e/terminal.rs"]
mod terminal;
#[path = "e2e/timeline.rs"]
mod timeline;
#[path = "e2e/waiting.rs"]
mod waiting;
#[path = "e2e/week.rs"]
mod week;
#[path = "e2e/windows.rs"]
mod windows;
#[path = "e2e/working.rs"]
mod working;
#[path = "e2e/worktree_ends.rs"]
mod worktree_ends;
#[path = "e2e/worktrees.rs"]
mod worktrees;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cairn_testkit::{MockLlmServer, Reply};
use fantoccini::key::Key;
use fantoccini::Client;
use serde_json::json;
use support::*;

const KEY: &str = "sk-e2e-test-key-0123456789";

/// The environment every app run gets: its own state dir, the mock as the endpoint, a model,
/// an in-memory key store (no real keyring touched), a config dir of its own (no rule, trust
/// or seal key of the user's read or written) and approvals from the chat card.
fn app_env(state_dir: &Path, server: &MockLlmServer, model: &str) -> Vec<(String, String)> {
    [
        ("CAIRN_STATE_DIR", state_dir.display().to_string()),
        (
            "XDG_CONFIG_HOME",
            state_dir.join("config").display().to_string(),
        ),
        ("OPENAI_BASE_URL", server.base_url()),
        ("OPENAI_API_KEY", KEY.to_string()),
        ("CAIRN_MODEL", model.to_string()),
        ("CAIRN_KEYSTORE", "memory".to_string()),
        ("CAIRN_TEST_APPROVER", "ui".to_string()),
        ("CAIRN_LOG", "info,cairn=debug".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn with_var(
    mut env: Vec<(String, String)>,
    key: &str,
    value: Option<&str>,
) -> Vec<(String, String)> {
    env.retain(|(k, _)| k != key);
    if let Some(v) = value {
        env.push((key.to_string(), v.to_string()));
    }
    env
}

/// The tool card of `tool` in `state`, waited for.
fn card(tool: &str, state: &str) -> String {
    format!("[data-testid=tool-card][data-tool={tool}][data-state={state}]")
}

fn main_script() -> Vec<Reply> {
    vec![
        Reply::text("I'll track the work first.")
            .with_reasoning("The user wants a greeting file. Plan: write it, then show it.")
            .with_tool_call(
                "call_todo1",
                "todo_write",
                json!({"todos": [
                    {"content": "Create hello.txt", "status": "in_progress"},
                    {"content": "Show it with cat", "status": "pending"},
                    {"content": "Summarise", "status": "pending"}
                ]}),
            )
            .with_usage(1800, 120),
        Reply::tool_call(
            "call_write1",
            "write_file",
            json!({"path": "hello.txt", "content": "Hello from Cairn!\nEach turn leaves a cairn.\n"}),
        )
        .with_usage(2100, 60),
        Reply::tool_call("call_cat1", "run_shell", json!({"command": "cat hello.txt"})).with_usage(2300, 40),
        Reply::tool_call(
            "call_todo2",
            "todo_write",
            json!({"todos": [
                {"content": "Create hello.txt", "status": "completed"},
                {"content": "Show it with cat", "status": "completed"},
                {"content": "Summarise", "status": "in_progress"}
            ]}),
        )
        .with_usage(2500, 50),
        Reply::text(
            "Done. I created **hello.txt** and printed it:\n\n```rust\nfn main() {\n    println!(\"Hello from Cairn!\");\n}\n```\n\n- the file has 2 lines\n- `cat` showed both",
        )
        .chunk_size(6)
        .with_usage(2700, 180),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_streams_tool_cards_and_approvals_then_restores_after_restart() {
    let server = Arc::new(MockLlmServer::with_script(main_script()).await.unwrap());
    server.enable_responses_api(true);
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("greeter");
    std::fs::write(ws.join("README.md"), "# greeter\n").unwrap();
    let (_other_dir, website) = named_workspace("website");
    let (_third_dir, pipeline) = named_workspace("data-pipeline");
    std::fs::write(
        state.path().join("desktop.json"),
        serde_json::to_vec(&json!({"recent": [
            {"path": ws, "openedAt": minutes_ago(3)},
            {"path": website, "openedAt": minutes_ago(60 * 5)},
            {"path": pipeline, "openedAt": minutes_ago(60 * 24 * 3)},
        ]}))
        .unwrap(),
    )
    .unwrap();
    // No key in the environment: it is entered in the settings' password field.
    let env = with_var(
        app_env(state.path(), &server, "gpt-4o-mini"),
        "OPENAI_API_KEY",
        None,
    );
    let prompt = "Create a greeting file and show it to me";

    let s = server.clone();
    let ws_path = ws.clone();
    let ran = with_app(env.clone(), move |c| async move {
        // Welcome screen with the recent workspaces.
        find(&c, "[data-testid=recent-workspace]").await;
        assert_eq!(count(&c, "[data-testid=recent-workspace]").await, 3);
        screenshot(&c, "welcome.png").await;
        open_recent(&c).await;
        assert_eq!(text_of(&c, "[data-testid=workspace-name]").await, "greeter");

        // No key yet: a clear message instead of a failed turn; the key goes in Settings.
        let blocked = text_of(&c, "[data-testid=blocked]").await;
        assert!(blocked.contains("No API key is set for OpenAI"), "{blocked}");
        click(&c, "[data-testid=blocked] button").await;
        find(&c, "[data-testid=key-status][data-state=missing]").await;
        find(&c, "[data-testid=api-key-input]").await.send_keys(KEY).await.unwrap();
        click(&c, "[data-testid=api-key-store]").await;
        assert_eq!(text_of(&c, "[data-testid=key-masked]").await, "••••••••6789");
        click(&c, "[data-testid=overlay-close]").await;
        wait_js(&c, "the block to lift", "return document.querySelector('[data-testid=blocked]') === null").await;
        send(&c, prompt).await;

        // The write waits for approval in the chat, with a diff of the change.
        let write = card("write_file", "awaiting");
        find(&c, &format!("{write} [data-testid=approval]")).await;
        let diff = text_of(&c, &format!("{write} [data-testid=edit-diff]")).await;
        assert!(diff.contains("+Hello from Cairn!"), "{diff}");
        // "Always" allows the tool for the session (the button says what it allows).
        assert_eq!(
            text_of(&c, &format!("{write} [data-testid=approve-always]")).await,
            "Always allow this tool"
        );
        click(&c, &format!("{write} [data-testid=approve-always]")).await;

        // `cat` reads only: inside the sandbox it runs unasked (no card ever waits for it).
        wait_turns(&c, "completed", 1).await;
        assert_eq!(count(&c, &card("run_shell", "awaiting")).await, 0);

        // The header's sandbox pill says, on hover, what protects the commands: each layer,
        // as `cairn sandbox status` lists it.
        let pill = find(&c, "[data-testid=sandbox-pill][data-state=on]").await;
        let tip = pill.attr("data-tip").await.unwrap().unwrap_or_default();
        for layer in ["✓ user namespaces", "✓ allow-list home", "✓ seccomp", "✓ new session", "network proxy"] {
            assert!(tip.contains(layer), "the tip lists `{layer}`: {tip}");
        }

        assert_eq!(
            text_of(&c, &format!("{} [data-testid=tool-command]", card("run_shell", "ok"))).await,
            "$ cat hello.txt"
        );

        // Streamed text rendered as markdown, tool cards finished, todos and meter updated.
        let text = last_text(&c, "[data-testid=assistant-text]").await;
        assert!(text.contains("Done. I created hello.txt"), "{text}");
        assert_eq!(count(&c, "[data-testid=assistant-text] pre code.language-rust").await, 1);
        assert_eq!(count(&c, "[data-testid=reasoning]").await, 1);
        assert_eq!(count(&c, "[data-testid=tool-card][data-state=ok]").await, 4);
        let out = text_of(&c, &format!("{} [data-testid=tool-output]", card("run_shell", "ok"))).await;
        assert!(out.contains("Hello from Cairn!"), "{out}");
        assert_eq!(count(&c, "[data-testid=todo-item][data-status=completed]").await, 2);
        assert_ne!(text_of(&c, "[data-testid=meter-tokens]").await, "0");
        assert_eq!(
            std::fs::read_to_string(ws_path.join("hello.txt")).unwrap(),
            "Hello from Cairn!\nEach turn leaves a cairn.\n"
        );
        screenshot(&c, "chat.png").await;
        // Full output of a finished tool comes from the saved session.
        click(&c, &format!("{} [data-testid=tool-expand]", card("run_shell", "ok"))).await;
        wait_js(
            &c,
            "the full output",
            "return [...document.querySelectorAll('[data-testid=tool-output]')].some(e => e.textContent.includes('[exit code: 0]'))",
        )
        .await;

        click(&c, "[data-testid=open-settings]").await;
        find(&c, "[data-testid=settings] [data-testid=rules]").await;
        let rules = text_of(&c, "[data-testid=rules]").await;
        assert!(rules.contains("write_file"), "the always-allowed tool is listed: {rules}");
        // Taller than the window: the panel is held inside it and its body scrolls, so the
        // last section can be reached.
        let fits = c
            .execute(
                "const p = document.querySelector('.overlay-panel').getBoundingClientRect(); \
                 const b = document.querySelector('.overlay-body'); \
                 return [p.bottom <= window.innerHeight, b.scrollHeight > b.clientHeight];",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(fits, serde_json::json!([true, true]), "settings panel inside the window, body scrolls");
        screenshot(&c, "settings.png").await;
        click(&c, "[data-testid=overlay-close]").await;

        click(&c, "[data-testid=open-usage]").await;
        find(&c, "[data-testid=usage-total]").await;
        assert!(count(&c, "[data-testid=usage-row]").await >= 2);
        click(&c, "[data-testid=overlay-close]").await;
    })
    .await;
    if !ran {
        return;
    }
    assert!(s.remaining() == 0, "every scripted reply was used");
    assert_eq!(
        s.requests()[0].api_key(),
        Some(KEY),
        "the stored key was used"
    );

    // After a restart the session is in the sidebar and reopens with its transcript.
    with_app(env, move |c| async move {
        open_recent(&c).await;
        find(&c, "[data-testid=session-item]").await;
        assert_eq!(count(&c, "[data-testid=session-item]").await, 1);
        let name = last_text(&c, "[data-testid=session-item] .session-name").await;
        assert!(name.starts_with("Create a greeting file"), "{name}");
        click(&c, "[data-testid=session-open]").await;
        wait_css(&c, "[data-testid=user-message]").await;
        assert_eq!(
            text_of(&c, "[data-testid=user-message] .msg-text").await,
            prompt
        );
        wait_turns(&c, "completed", 1).await;
        let text = last_text(&c, "[data-testid=assistant-text]").await;
        assert!(text.contains("Done. I created hello.txt"), "{text}");
        assert_eq!(count(&c, "[data-testid=tool-card][data-state=ok]").await, 4);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_interrupts_and_steering_is_queued_removable_and_injected() {
    let long: String = (0..120).map(|i| format!("word{i} ")).collect();
    let slow: String = (0..60).map(|i| format!("step{i} ")).collect();
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::text(&long)
                .chunk_size(4)
                .delay_between_chunks(Duration::from_millis(60)),
            Reply::text(&slow)
                .chunk_size(4)
                .delay_between_chunks(Duration::from_millis(60)),
            Reply::text("Noted: the tests are mentioned too."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("greeter");
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let s = server.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Write a long essay").await;
        wait_js(
            &c,
            "streamed text",
            "const t = document.querySelector('[data-testid=assistant-text]'); return t !== null && t.textContent.length > 30",
        )
        .await;
        click(&c, "[data-testid=stop]").await;
        wait_turns(&c, "interrupted", 1).await;
        assert_eq!(count(&c, "[data-testid=stop]").await, 0);

        // While a turn runs, Enter queues steering; a queued message can be withdrawn.
        send(&c, "Summarise quickly").await;
        find(&c, "[data-testid=stop]").await;
        send(&c, "remove me").await;
        find(&c, "[data-testid=steering-chip][data-state=queued]").await;
        click(&c, "[data-testid=steering-remove]").await;
        wait_js(
            &c,
            "the chip to go",
            "return document.querySelectorAll('[data-testid=steering-chip]').length === 0",
        )
        .await;
        send(&c, "Also mention the tests").await;
        find(&c, "[data-testid=steering-chip][data-state=queued]").await;
        // Injected between iterations: the chip turns "injected", the chat shows it in place.
        find(&c, "[data-testid=user-message][data-steering=true]").await;
        wait_turns(&c, "completed", 1).await;
        assert_eq!(
            text_of(&c, "[data-testid=user-message][data-steering=true] .msg-text").await,
            "Also mention the tests"
        );
        let text = last_text(&c, "[data-testid=assistant-text]").await;
        assert!(text.contains("Noted"), "{text}");
        // Esc also stops; nothing runs now, so it is harmless.
        find(&c, "[data-testid=composer]").await.send_keys(&Key::Escape.to_string()).await.unwrap();
    })
    .await;
    if !ran {
        return;
    }
    let reqs = s.requests();
    assert_eq!(reqs.len(), 3);
    let last = reqs[2].body.to_string();
    assert!(last.contains("Also mention the tests"), "{last}");
    assert!(
        !last.contains("remove me"),
        "a withdrawn message is never sent"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_output_renders_inert() {
    let hostile = "Here you go.\n\n<script>document.title='pwned';window.__pwned=1</script>\n\n\
        <img src=x onerror=\"document.title='pwned';window.__pwned=2\">\n\n\
        [click me](javascript:document.title='pwned') and [docs](https://example.com/docs)\n\n\
        <b>bold html</b> <iframe src=\"https://example.com\"></iframe>\n\n\
        ![tracker](https://example.com/t.png)\n\n<a href=\"javascript:window.__pwned=3\">raw link</a>";
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call(
                "call_x",
                "run_shell",
                json!({"command": "printf '<img src=x onerror=\"window.__pwned=4\">'"}),
            ),
            Reply::text(hostile),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("greeter");
    seed_recent(state.path(), &ws, json!({}));
    // The fixed "allow" hook at the approver boundary: the command runs without a dialog.
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_TEST_APPROVER",
        Some("allow"),
    );
    with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "<img src=x onerror=\"window.__pwned=5\"> show me").await;
        wait_turns(&c, "completed", 1).await;
        let probe = r#"
            const t = document.querySelector('[data-testid=transcript]');
            const links = [...t.querySelectorAll('a')].map(a => a.getAttribute('href'));
            return {
              dangerous: t.querySelectorAll('script, img, iframe, b, [onerror], [src]').length,
              links,
              pwned: window.__pwned === undefined ? null : window.__pwned,
              title: document.title,
              text: t.textContent,
            };
        "#;
        let r = c.execute(probe, vec![]).await.unwrap();
        assert_eq!(r["dangerous"], 0, "{r}");
        // Only http(s) links survive (the model's `javascript:` links render as text).
        let links = r["links"].as_array().unwrap();
        assert!(links.iter().any(|l| l == "https://example.com/docs"), "{r}");
        assert!(
            links
                .iter()
                .all(|l| l.as_str().unwrap().starts_with("https://")),
            "{r}"
        );
        assert_eq!(r["pwned"], serde_json::Value::Null, "{r}");
        assert_eq!(r["title"], "Cairn");
        let text = r["text"].as_str().unwrap();
        assert!(
            text.contains("<script>document.title='pwned'"),
            "markup shows as text"
        );
        assert!(text.contains("<b>bold html</b>"));
        assert!(
            text.contains("<img src=x onerror=\"window.__pwned=4\">"),
            "tool output is text"
        );
        // Clicking a link never navigates the app.
        click(&c, "[data-testid=assistant-text] a.md-link").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(count(&c, "[data-testid=transcript]").await, 1);
        assert_eq!(c.title().await.unwrap(), "Cairn");
        // The CSP from tauri.conf.json is in force: no inline scripts, no eval.
        let csp_probe = r#"
            const s = document.createElement("script");
            s.textContent = "window.__cairnInlineRan = true";
            document.body.appendChild(s);
            let evalRan = false;
            try { evalRan = eval("true"); } catch (e) { evalRan = false; }
            return { inline: window.__cairnInlineRan === true, eval: evalRan === true };
        "#;
        let ran = c.execute(csp_probe, vec![]).await.unwrap();
        assert_eq!(ran, json!({ "inline": false, "eval": false }));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retriable_error_offers_retry_and_the_usage_center_says_why() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::fault(cairn_testkit::Fault::server_error()),
            Reply::fault(cairn_testkit::Fault::server_error()),
            Reply::text("Back again: all good."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("greeter");
    seed_recent(state.path(), &ws, json!({}));
    let mut env = app_env(state.path(), &server, "mock-model");
    // One quick retry, so the turn fails fast with a retriable error.
    env.push(("NETWORK_RETRY_MAX".into(), "1".into()));
    env.push(("NETWORK_RETRY_BASE_MS".into(), "50".into()));
    with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Try this").await;
        wait_turns(&c, "error", 1).await;
        let notices = last_text(&c, "[data-testid=notice]").await;
        assert!(!notices.is_empty());
        click(&c, "[data-testid=retry]").await;
        wait_turns(&c, "completed", 1).await;
        assert!(last_text(&c, "[data-testid=assistant-text]")
            .await
            .contains("Back again"));
        assert_eq!(count(&c, "[data-testid=retry]").await, 0);
        click(&c, "[data-testid=open-usage]").await;
        find(&c, "[data-testid=usage-failure]").await;
        let failures = last_text(&c, "[data-testid=usage]").await;
        assert!(
            failures.contains("retry") && failures.contains("error"),
            "{failures}"
        );
        assert!(
            failures.contains("500"),
            "the provider's reason is shown: {failures}"
        );
        screenshot(&c, "usage.png").await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn questions_and_plans_are_answered_in_the_chat() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call(
                "call_q",
                "ask_user",
                json!({"question": "Which language should the tool use?", "options": ["Rust", "Go"], "allow_text": false}),
            ),
            Reply::tool_call(
                "call_p",
                "propose_plan",
                json!({"plan": "1. Create `src/main.rs`\n2. Add a `--name` flag\n3. Write a test"}),
            ),
            Reply::text("Plan accepted; starting with step 1."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("greeter");
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let s = server.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Plan a small CLI").await;
        find(&c, "[data-testid=question][data-state=pending]").await;
        // Planning only: plan mode, until the plan is accepted.
        click(&c, "[data-testid=mode-plan]").await;
        find(&c, "[data-testid=mode-switcher][data-mode=plan]").await;
        click(&c, "[data-testid=question-option]").await;
        find(&c, "[data-testid=plan-panel] [data-testid=plan-accept]").await;
        assert!(text_of(&c, "[data-testid=plan]")
            .await
            .contains("Add a --name flag"));
        click(&c, "[data-testid=plan] [data-testid=plan-accept]").await;
        wait_turns(&c, "completed", 1).await;
        // Accepting the plan left plan mode, so the work can start.
        find(&c, "[data-testid=mode-switcher][data-mode=interactive]").await;
        find(&c, "[data-testid=question][data-state=answered]").await;
        find(&c, "[data-testid=plan][data-state=answered]").await;
    })
    .await;
    if !ran {
        return;
    }
    let reqs = s.requests();
    assert!(
        reqs[1].body.to_string().contains("Rust"),
        "the answer reached the model"
    );
    assert!(reqs[2].body.to_string().contains("now in interactive mode"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_dialogs_pick_the_folder_and_answer_an_approval() {
    if find_program("xdotool").is_none() {
        skip_or_fail("`xdotool` is not installed (Debian package xdotool)");
        return;
    }
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call(
                "call_n",
                "run_shell",
                json!({"command": "echo native-ok > native.txt"}),
            ),
            Reply::text("The command ran."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("greeter");
    let home = dirs::home_dir().filter(|h| h.is_dir());
    // `/` and the home folder in the recent list: both are refused with an explanation.
    let mut recent = vec![json!({"path": "/", "openedAt": "2026-01-02T00:00:00Z"})];
    if let Some(h) = &home {
        recent.push(json!({"path": h, "openedAt": "2026-01-01T00:00:00Z"}));
    }
    std::fs::write(
        state.path().join("desktop.json"),
        serde_json::to_vec(&json!({"recent": recent})).unwrap(),
    )
    .unwrap();
    // Native approvals: no test hook.
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_TEST_APPROVER",
        None,
    );
    let ws_path = ws.clone();
    let has_home = home.is_some();
    with_app(env, move |c| async move {
        click(&c, "[data-testid=recent-workspace][data-path='/']").await;
        let err = text_of(&c, "[data-testid=workspace-error]").await;
        assert!(err.contains("refusing `/`"), "{err}");
        if has_home {
            let buttons = c
                .find_all(fantoccini::Locator::Css("[data-testid=recent-workspace]"))
                .await
                .unwrap();
            buttons[1].click().await.unwrap();
            wait_js(
                &c,
                "the home refusal",
                "const e = document.querySelector('[data-testid=workspace-error]'); return e !== null && e.textContent.includes('home folder')",
            )
            .await;
        }

        // The real GTK folder picker, answered with the keyboard.
        click(&c, "[data-testid=open-folder]").await;
        let picker = wait_window("^Open folder$").await;
        xdotool(&["windowfocus", "--sync", &picker]).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        xdotool(&["key", "--clearmodifiers", "ctrl+l"]).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let typed = format!("{}/", ws_path.display());
        xdotool(&["type", "--delay", "15", &typed]).unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        xdotool(&["key", "Return"]).unwrap();
        find(&c, "[data-testid=composer]").await;
        assert_eq!(
            text_of(&c, "[data-testid=workspace-name]").await,
            ws_path.file_name().unwrap().to_string_lossy()
        );

        // The approval: a native modal dialog naming tool, command and reason, and the same
        // request in the chat.
        send(&c, "Run the check").await;
        let dialog = wait_window("allow run_shell").await;
        find(&c, &format!("{} [data-testid=approval]", card("run_shell", "awaiting"))).await;
        // A redirect: no allowance may cover it, so neither the chat nor the dialog offers one.
        assert_eq!(count(&c, "[data-testid=approve-always]").await, 0);
        // No window manager under Xvfb: centre the dialog over the app for the screenshot.
        let geometry = xdotool(&["getwindowgeometry", &dialog]).unwrap_or_default();
        let (w, h) = geometry
            .lines()
            .find_map(|l| l.trim().strip_prefix("Geometry: "))
            .and_then(|g| g.split_once('x'))
            .and_then(|(w, h)| Some((w.parse::<i64>().ok()?, h.parse::<i64>().ok()?)))
            .unwrap_or((420, 200));
        // Below the chat's own approval card, so both show.
        let (x, y) = ((1280 - w).max(0) / 2 + 60, (800 - h).max(0) / 2 + 90);
        let _ = xdotool(&["windowmove", &dialog, &x.to_string(), &y.to_string()]);
        tokio::time::sleep(Duration::from_millis(500)).await;
        screen_shot("approval.png");
        xdotool(&["windowfocus", "--sync", &dialog]).unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        // "_Allow once" has the mnemonic Alt+A.
        xdotool(&["key", "--clearmodifiers", "alt+a"]).unwrap();
        wait_turns(&c, "completed", 1).await;
        assert_eq!(count(&c, &card("run_shell", "ok")).await, 1);
        assert_eq!(
            std::fs::read_to_string(ws_path.join("native.txt")).unwrap(),
            "native-ok\n"
        );
        assert!(!window_visible("allow run_shell"), "the dialog closed");
    })
    .await;
}

/// A real Secret Service round trip through the settings' password field: the key is stored
/// in the OS keyring, used by the next turn, still there after a restart, then removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_key_round_trips_through_the_os_keyring() {
    use cairn_providers::secrets::{ApiKey, KeyStore, OsKeyStore, SecretError};
    let service = format!("cairn-e2e-{}", std::process::id());
    let probe = OsKeyStore::with_service(&service);
    match probe.set("probe", &ApiKey::new("probe-value").unwrap()) {
        Ok(()) => {
            let _ = probe.remove("probe");
        }
        Err(SecretError::Unavailable(reason))
            if std::env::var("CAIRN_KEYRING_TEST").as_deref() != Ok("1") =>
        {
            let _ = std::io::Write::write_all(
                &mut std::io::stderr(),
                format!("SKIPPED keyring e2e: no Secret Service ({reason}); CAIRN_KEYRING_TEST=1 requires it\n")
                    .as_bytes(),
            );
            return;
        }
        Err(e) => panic!("the OS keyring does not work here: {e}"),
    }
    let server = Arc::new(
        MockLlmServer::with_script(vec![Reply::text("Key works.")])
            .await
            .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("greeter");
    seed_recent(state.path(), &ws, json!({}));
    let mut env = app_env(state.path(), &server, "mock-model");
    env = with_var(env, "OPENAI_API_KEY", None);
    env = with_var(env, "CAIRN_KEYSTORE", None);
    env = with_var(env, "CAIRN_KEYRING_SERVICE", Some(&service));
    let s = server.clone();
    let ran = with_app(env.clone(), move |c| async move {
        open_recent(&c).await;
        let blocked = text_of(&c, "[data-testid=blocked]").await;
        assert!(blocked.contains("No API key"), "{blocked}");
        click(&c, "[data-testid=open-settings]").await;
        find(&c, "[data-testid=key-status][data-state=missing]").await;
        let field = find(&c, "[data-testid=api-key-input]").await;
        assert_eq!(
            field.attr("type").await.unwrap().as_deref(),
            Some("password")
        );
        field.send_keys(KEY).await.unwrap();
        click(&c, "[data-testid=api-key-store]").await;
        let masked = text_of(&c, "[data-testid=key-masked]").await;
        assert_eq!(masked, "••••••••6789");
        assert!(
            !c.source().await.unwrap().contains(KEY),
            "the key is not in the page"
        );
        click(&c, "[data-testid=overlay-close]").await;
        wait_js(
            &c,
            "the block to lift",
            "return document.querySelector('[data-testid=blocked]') === null",
        )
        .await;
        send(&c, "hello").await;
        wait_turns(&c, "completed", 1).await;
    })
    .await;
    if !ran {
        return;
    }
    assert_eq!(
        s.requests()[0].api_key(),
        Some(KEY),
        "the turn used the keyring's key"
    );
    with_app(env, move |c| async move {
        open_recent(&c).await;
        click(&c, "[data-testid=open-settings]").await;
        find(&c, "[data-testid=key-status][data-state=stored]").await;
        click(&c, "[data-testid=api-key-remove]").await;
        find(&c, "[data-testid=key-status][data-state=missing]").await;
    })
    .await;
    assert_eq!(
        OsKeyStore::with_service(&service).get("openai").unwrap(),
        None
    );
}
