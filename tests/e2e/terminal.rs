//! E2E: the terminal panel. The agent reads what the user typed in a terminal tab
//! (`terminal_read`), and a `read -p` prompt of an agent command session is answered from the
//! panel.

use super::*;

fn terminal_script() -> Vec<Reply> {
    vec![
        Reply::tool_call("call_list", "terminal_list", json!({})),
        Reply::tool_call(
            "call_read",
            "terminal_read",
            json!({"terminal_id": "term-1"}),
        ),
        Reply::text("You ran an echo in your terminal."),
        Reply::tool_call(
            "call_exec",
            "exec_command",
            json!({"command": "read -p 'Deploy now? [y/n] ' ans; echo \"answer=$ans\"", "yield_ms": 3000}),
        ),
        Reply::text("It asks for confirmation: answer it in the terminal panel."),
        Reply::tool_call(
            "call_input",
            "input_command",
            json!({"session_id": "cmd-1", "yield_ms": 1500}),
        ),
        Reply::text("Deployment confirmed."),
    ]
}

/// A long word typed in one go: reordered keystrokes would garble it.
const FAST: &str =
    "the-quick-brown-fox-jumps-over-the-lazy-dog-0123456789-abcdefghijklmnopqrstuvwxyz";

/// Text an xterm view shows (its DOM rows).
async fn screen_text(c: &Client, id: &str) -> String {
    let js = format!(
        "const el = document.querySelector('[data-testid=terminal-view][data-terminal=\"{id}\"] .xterm-rows'); return el === null ? '' : el.textContent"
    );
    c.execute(&js, vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_string()
}

async fn wait_screen(c: &Client, id: &str, needle: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let text = screen_text(c, id).await;
        if text.contains(needle) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "terminal {id} never showed `{needle}`; it shows: {text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Types into the xterm view of `id` (its hidden input).
async fn type_into(c: &Client, id: &str, text: &str) {
    let css = format!("[data-testid=terminal-view][data-terminal='{id}'] textarea");
    let input = find(c, &css).await;
    input.send_keys(text).await.unwrap();
    input.send_keys(&Key::Enter.to_string()).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminals_are_read_by_the_agent_and_answer_its_prompts() {
    let server = Arc::new(MockLlmServer::with_script(terminal_script()).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("deployer");
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        with_var(
            app_env(state.path(), &server, "mock-model"),
            "CAIRN_TEST_APPROVER",
            Some("allow"),
        ),
        "SHELL",
        Some("/bin/bash"),
    );
    let s = server.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        // Right after a dialog closed with Esc, the first click on `>_` opens the panel.
        let composer = find(&c, "[data-testid=composer]").await;
        composer
            .send_keys(&format!("{}/", Key::Control))
            .await
            .unwrap();
        find(&c, "[data-testid=help]").await;
        c.active_element()
            .await
            .unwrap()
            .send_keys(&Key::Escape.to_string())
            .await
            .unwrap();
        wait_js(
            &c,
            "the help dialog closed",
            "return document.querySelector('[data-testid=help]') === null",
        )
        .await;
        // Its hint is the page's own: shown on hover, gone with the click (a native tooltip
        // would stay on screen), and no element carries a native `title`.
        let button = find(&c, "[data-testid=toggle-terminal]").await;
        use fantoccini::actions::InputSource;
        let hover = fantoccini::actions::MouseActions::new("mouse".into()).then(
            fantoccini::actions::PointerAction::MoveToElement {
                element: button,
                duration: Some(Duration::from_millis(100)),
                x: 0.0,
                y: 0.0,
            },
        );
        c.perform_actions(hover).await.unwrap();
        wait_js(
            &c,
            "the terminal button's hint",
            "const t = document.querySelector('[data-testid=tip]'); \
             return t !== null && t.textContent.includes('Ctrl+`')",
        )
        .await;
        click(&c, "[data-testid=toggle-terminal]").await;
        find(&c, "[data-testid=terminal-panel]").await;
        wait_js(
            &c,
            "the hint hidden by the click",
            "return document.querySelector('[data-testid=tip]') === null",
        )
        .await;
        let titled = c
            .execute("return document.querySelectorAll('[title]').length", vec![])
            .await
            .unwrap();
        assert_eq!(titled.as_u64(), Some(0), "no native title tooltips");
        // The panel opens with a shell of its own (no "+" needed).
        find(
            &c,
            "[data-testid=terminal-tab][data-terminal='term-1'][data-kind=user]",
        )
        .await;
        find(
            &c,
            "[data-testid=terminal-view][data-terminal='term-1'] .xterm-rows",
        )
        .await;
        // Typed fast, every key reaches the shell in order (one write in flight at a time).
        type_into(&c, "term-1", &format!("echo typed-by-user-$((6*7)) {FAST}")).await;
        wait_screen(&c, "term-1", &format!("typed-by-user-42 {FAST}")).await;

        // The agent reads the user's terminal.
        send(&c, "What did I just run?").await;
        wait_turns(&c, "completed", 1).await;

        // The agent's command session waits for input; the user answers it in the panel.
        send(&c, "Deploy it").await;
        wait_turns(&c, "completed", 2).await;
        click(&c, "[data-testid=terminal-tab][data-kind=agent]").await;
        find(
            &c,
            "[data-testid=terminal-view][data-terminal='cmd-1'][data-active=true]",
        )
        .await;
        wait_screen(&c, "cmd-1", "Deploy now? [y/n]").await;
        screenshot(&c, "terminal.png").await;
        type_into(&c, "cmd-1", "yes").await;
        wait_screen(&c, "cmd-1", "answer=yes").await;
        find(
            &c,
            "[data-testid=terminal-tab][data-terminal='cmd-1'][data-running=false]",
        )
        .await;

        send(&c, "Did it go through?").await;
        wait_turns(&c, "completed", 3).await;
    })
    .await;
    if !ran {
        return;
    }
    let bodies: Vec<String> = s.requests().iter().map(|r| r.body.to_string()).collect();
    // Request 2 carries terminal_read's result: what the user typed and what it printed.
    assert!(
        bodies[2].contains("typed-by-user-42"),
        "terminal_read saw the user's terminal: {}",
        bodies[2]
    );
    assert!(bodies[1].contains("term-1"), "terminal_list listed it");
    // The last request carries input_command's result: the answer typed in the panel.
    let last = bodies.last().unwrap();
    assert!(
        last.contains("answer=yes"),
        "the agent saw the answer: {last}"
    );
}

/// Ctrl+Shift+V pastes the clipboard into a terminal tab (through Cairn's clipboard command
/// and xterm's paste), and the shell runs what was pasted; Ctrl+Shift+C copies the selection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_paste_reaches_the_shell_and_copy_fills_the_clipboard() {
    let server = Arc::new(MockLlmServer::with_script(vec![]).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("paster");
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "SHELL",
        Some("/bin/bash"),
    );
    with_app(env, move |c| async move {
        open_recent(&c).await;
        click(&c, "[data-testid=toggle-terminal]").await;
        find(
            &c,
            "[data-testid=terminal-view][data-terminal='term-1'] .xterm-rows",
        )
        .await;
        c.execute(
            "return window.__TAURI_INTERNALS__.invoke('clipboard_write', {text: 'echo pasted-$((6*7))'})",
            vec![],
        )
        .await
        .unwrap();
        let css = "[data-testid=terminal-view][data-terminal='term-1'] textarea";
        let input = find(&c, css).await;
        input
            .send_keys(&format!("{}{}v", Key::Control, Key::Shift))
            .await
            .unwrap();
        input.send_keys(&Key::Enter.to_string()).await.unwrap();
        wait_screen(&c, "term-1", "pasted-42").await;

        // Copy: select the terminal's text with xterm's own selection, then Ctrl+Shift+C.
        c.execute(
            "return window.__TAURI_INTERNALS__.invoke('clipboard_write', {text: 'before-copy'})",
            vec![],
        )
        .await
        .unwrap();
        // A real drag across the first rows selects them (xterm's own selection).
        let screen = find(
            &c,
            "[data-testid=terminal-view][data-terminal='term-1'] .xterm-screen",
        )
        .await;
        let (w, h) = screen.rectangle().await.map(|r| (r.2, r.3)).unwrap();
        use fantoccini::actions::InputSource;
        let drag = fantoccini::actions::MouseActions::new("mouse".into())
            .then(fantoccini::actions::PointerAction::MoveToElement {
                element: screen.clone(),
                duration: None,
                x: -(w / 2.0) + 3.0,
                y: -(h / 2.0) + 6.0,
            })
            .then(fantoccini::actions::PointerAction::Down {
                button: fantoccini::actions::MOUSE_BUTTON_LEFT,
            })
            .then(fantoccini::actions::PointerAction::MoveBy {
                duration: Some(Duration::from_millis(300)),
                x: w - 10.0,
                y: 20.0,
            })
            .then(fantoccini::actions::PointerAction::Up {
                button: fantoccini::actions::MOUSE_BUTTON_LEFT,
            });
        c.perform_actions(drag).await.unwrap();
        input
            .send_keys(&format!("{}{}c", Key::Control, Key::Shift))
            .await
            .unwrap();
        wait_clipboard(&c, "pasted-").await;
    })
    .await;
}
