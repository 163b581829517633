//! E2E: the first week of a heavy user (issue 45), one app start for several checks. With 20
//! saved sessions of similar prompts, a session waiting for an approval and one running:
//! at 640x480 both are pinned on top of the board and visible without scrolling; typing
//! three characters of a name (real X keys) puts it in the first three rows and Enter opens
//! it, and leaving it (only looked at) keeps its save time and every row's place; a session
//! another process saves on the same state folder appears within 2 s. Then an
//! answer's markdown: task lists are disabled checkboxes, table alignment holds, a relative
//! link shows the file in the files panel, a web link asks first and shows its address,
//! Copy says "Copied". Ctrl+` puts the focus in the terminal (what is typed right away
//! reaches the shell) and the shortcut sheet does not list Ctrl+O in a workspace.

use super::*;

use super::history::seed;

const ANSWER: &str = "Plan:\n\n- [ ] write the test\n- [x] read the code\n\n\
| name | size |\n|:--|--:|\n| app.py | 12 |\n\n\
Edit [src/app.py](src/app.py) as the [guide](https://example.com/guide) says.\n\n\
```sh\necho COPY-ME-45\n```\n";

/// The window's X title (`<workspace> — Cairn`), as xdotool finds it.
const TITLE: &str = "^week — Cairn$";

/// Sends real X key events to the app's window: a chord, or text typed.
fn keys(chord: Option<&str>, text: Option<&str>) {
    let id = xdotool(&["search", "--onlyvisible", "--name", TITLE])
        .and_then(|ids| ids.lines().last().map(str::to_string))
        .expect("the app's window");
    xdotool(&["windowfocus", "--sync", &id]).unwrap();
    if let Some(chord) = chord {
        xdotool(&["key", "--clearmodifiers", chord]).unwrap();
    }
    if let Some(text) = text {
        xdotool(&["type", "--delay", "30", text]).unwrap();
    }
}

async fn resize(c: &Client, width: u32, height: u32) {
    c.set_window_size(width, height).await.unwrap();
    wait_js(
        c,
        &format!("the page to be {width} px wide"),
        &format!("return Math.abs(window.innerWidth - {width}) <= 16"),
    )
    .await;
}

fn week_script() -> Vec<Reply> {
    vec![
        // The first chat asks to write a file and waits for the approval.
        Reply::tool_call(
            "call_plan",
            "write_file",
            json!({"path": "plan.md", "content": "# Plan\n"}),
        ),
        // The second streams for a long while (running throughout the board checks).
        Reply::text(&"Still thinking about the cache. ".repeat(60))
            .chunk_size(8)
            .delay_between_chunks(Duration::from_millis(150)),
        Reply::text(ANSWER),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_week_board_markdown_terminal_and_shortcuts() {
    let server = Arc::new(MockLlmServer::with_script(week_script()).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("week");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/app.py"), "print('hi')\n").unwrap();
    for i in 0..20 {
        let name = if i == 13 {
            "Refactor the parser module".to_string()
        } else {
            format!("Fix the failing test in module {i}")
        };
        seed::session(state.path(), &ws, &format!("s{i:02}"), &name, 1);
    }
    seed_recent(state.path(), &ws, json!({}));
    let opened = state.path().join("opened.txt");
    let env = with_var(
        with_var(
            app_env(state.path(), &server, "mock-model"),
            "CAIRN_TEST_OPENED",
            Some(&opened.display().to_string()),
        ),
        "SHELL",
        Some("/bin/bash"),
    );
    let srv = server.clone();
    let state_dir = state.path().to_path_buf();
    let ws_path = ws.clone();
    let opened_file = opened.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        wait_js(
            &c,
            "the 20 saved sessions on the board",
            "return document.querySelectorAll('[data-testid=session-item]').length >= 20",
        )
        .await;
        // One chat waits for an approval, another runs.
        new_chat(&c).await;
        send(&c, "Write the plan").await;
        srv.wait_for_requests(1, Duration::from_secs(20)).await;
        find(&c, "[data-testid=session-item][data-state=approval]").await;
        new_chat(&c).await;
        send(&c, "Think about the cache").await;
        srv.wait_for_requests(2, Duration::from_secs(20)).await;
        find(&c, "[data-testid=session-item][data-state=running]").await;

        // The saved sessions' order on the board, by last activity.
        let seeded_order = "return [...document.querySelectorAll('[data-testid=sessions-board] [data-testid=session-item]')] \
             .map((r) => r.dataset.sessionId).filter((id) => /^s\\d\\d$/.test(id))";
        let order_before = c.execute(seeded_order, vec![]).await.unwrap();
        let s13_state = state_dir.join("sessions").join("s13").join("state.json");
        let s13_saved_at = std::fs::read_to_string(&s13_state).unwrap();
        let s13_modified = std::fs::metadata(&s13_state).unwrap().modified().unwrap();

        // 640x480: the drawer's pinned group holds both, visible without scrolling.
        resize(&c, 640, 480).await;
        click(&c, "[data-testid=toggle-sidebar]").await;
        find(&c, "[data-testid=pinned-sessions]").await;
        let pinned = c
            .execute(
                "const rows = [...document.querySelectorAll('[data-testid=pinned-sessions] [data-testid=session-item]')]; \
                 const side = document.querySelector('[data-testid=sidebar]'); \
                 return { states: rows.map((r) => r.dataset.state).sort(), \
                   visible: rows.every((r) => { const b = r.getBoundingClientRect(); return b.top >= 0 && b.bottom <= window.innerHeight; }), \
                   scrolled: side.scrollTop };",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(pinned["states"], json!(["approval", "running"]), "{pinned}");
        assert_eq!(pinned["visible"], json!(true), "{pinned}");
        assert_eq!(pinned["scrolled"].as_f64(), Some(0.0), "{pinned}");
        screenshot(&c, "board-20-sessions-640x480.png").await;

        // Ctrl+K, then three characters typed as a person would: the session is in the first
        // three rows; Enter opens it.
        keys(Some("ctrl+k"), None);
        wait_js(
            &c,
            "the focus in the board's search",
            "return document.activeElement?.dataset.testid === 'session-search'",
        )
        .await;
        keys(None, Some("ref"));
        wait_js(
            &c,
            "the refactor session among the first three results",
            "const rows = [...document.querySelectorAll('[data-testid=search-results] [data-testid=session-item]')].slice(0, 3); \
             return rows.some((r) => r.dataset.sessionId === 's13')",
        )
        .await;
        keys(Some("Return"), None);
        wait_js(
            &c,
            "the refactor session shown",
            "return document.querySelector('[data-testid=session-title]')?.textContent === 'Refactor the parser module'",
        )
        .await;

        // A session saved by another process on the same state folder shows within 2 s.
        resize(&c, 1280, 800).await;
        let started = std::time::Instant::now();
        seed::session(&state_dir, &ws_path, "cli-started", "Started from the CLI", 1);
        wait_css(&c, "[data-testid=session-item][data-session-id='cli-started']").await;
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "the CLI's session took {took:?}");
        screenshot(&c, "board-20-sessions.png").await;

        // Leaving s13 (only looked at) saves it as it was: its save time stays, and so does
        // its place on the board.
        new_chat(&c).await;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::fs::metadata(&s13_state).unwrap().modified().unwrap() == s13_modified {
            assert!(std::time::Instant::now() < deadline, "s13 was never saved on close");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let updated_at = |text: &str| {
            serde_json::from_str::<serde_json::Value>(text).unwrap()["updatedAt"].clone()
        };
        assert!(updated_at(&s13_saved_at).is_string());
        assert_eq!(
            updated_at(&std::fs::read_to_string(&s13_state).unwrap()),
            updated_at(&s13_saved_at),
            "viewing is not activity"
        );

        // An answer's markdown.
        send(&c, "Show me the plan").await;
        wait_turns(&c, "completed", 1).await;
        let md = c
            .execute(
                "const a = document.querySelector('[data-testid=assistant-text]'); \
                 return { boxes: [...a.querySelectorAll('input')].map((b) => [b.type, b.disabled, b.checked]), \
                   raw: a.textContent.includes('[ ]'), \
                   right: a.querySelector('td.md-align-right')?.textContent, \
                   styled: a.querySelectorAll('[style]').length };",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            md["boxes"],
            json!([["checkbox", true, false], ["checkbox", true, true]]),
            "{md}"
        );
        assert_eq!(md["raw"], json!(false), "{md}");
        assert_eq!(md["right"], json!("12"), "{md}");
        assert_eq!(md["styled"], json!(0), "{md}");
        // The relative link shows the file in Cairn's files panel.
        click(&c, "[data-testid=assistant-text] a[data-link=file]").await;
        find(
            &c,
            "[data-testid=file-node][data-path='src/app.py'][data-revealed=true]",
        )
        .await;
        // The web link asks first, showing where it goes; nothing opens on Cancel.
        click(&c, "[data-testid=assistant-text] a[data-link=web]").await;
        let url = text_of(&c, "[data-testid=link-confirm-url]").await;
        assert_eq!(url, "https://example.com/guide");
        click(&c, "[data-testid=link-confirm-cancel]").await;
        assert!(!opened_file.exists(), "nothing opened on Cancel");
        click(&c, "[data-testid=assistant-text] a[data-link=web]").await;
        click(&c, "[data-testid=link-confirm-open]").await;
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !std::fs::read_to_string(&opened_file)
            .unwrap_or_default()
            .contains("https://example.com/guide")
        {
            assert!(std::time::Instant::now() < deadline, "the page never opened");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Copy says Copied, and copies the code only; Copy answer copies the whole answer.
        click(&c, "[data-testid=code-copy]").await;
        wait_js(
            &c,
            "Copied on the code's button",
            "return document.querySelector('[data-testid=code-copy]').textContent === 'Copied'",
        )
        .await;
        wait_clipboard(&c, "echo COPY-ME-45").await;
        click(&c, "[data-testid=copy-answer]").await;
        wait_clipboard(&c, "- [ ] write the test").await;

        // Ctrl+` and type at once: the command reaches the shell.
        keys(Some("ctrl+grave"), Some("echo typed-$((40+5))\n"));
        wait_js(
            &c,
            "the typed command's output in the terminal",
            "const el = document.querySelector('[data-testid=terminal-view] .xterm-rows'); \
             return el !== null && el.textContent.includes('typed-45')",
        )
        .await;

        // The board kept the saved sessions in their order throughout.
        assert_eq!(c.execute(seeded_order, vec![]).await.unwrap(), order_before);

        // The shortcut sheet lists what works here (asked from the composer: the terminal
        // keeps its keys).
        click(&c, "[data-testid=composer]").await;
        keys(Some("ctrl+slash"), None);
        let sheet = text_of(&c, "[data-testid=help]").await;
        assert!(!sheet.contains("Open folder"), "{sheet}");
        assert!(sheet.contains("Search sessions"), "{sheet}");
    })
    .await;
    if ran {
        assert!(server.requests().len() >= 3);
    }
}
