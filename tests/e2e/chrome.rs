//! E2E: window chrome. Windows are titled "<workspace> — Cairn"; File → Close Window
//! (Ctrl+Shift+W) closes the focused window; Quit (Ctrl+Q) stops the app cleanly, saving its
//! session; the next start reopens the last workspace and its conversation.

use super::*;

/// Sends a key chord to the X window named exactly `title`, focused first.
fn press(title: &str, chord: &str) {
    let pattern = format!("^{}$", regex_escape(title));
    let id = xdotool(&["search", "--onlyvisible", "--name", &pattern])
        .and_then(|ids| ids.lines().last().map(str::to_string))
        .unwrap_or_else(|| panic!("no visible window titled `{title}`"));
    xdotool(&["windowfocus", "--sync", &id]).unwrap();
    xdotool(&["key", "--clearmodifiers", chord]).unwrap();
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\^$.|?*+()[]{}".contains(c);
            special
                .then_some('\\')
                .into_iter()
                .chain(std::iter::once(c))
        })
        .collect()
}

/// Waits until no visible window is titled `title`.
async fn wait_gone(title: &str) {
    let pattern = format!("^{}$", regex_escape(title));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while window_visible(&pattern) {
        assert!(
            std::time::Instant::now() < deadline,
            "the window `{title}` is still open"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn titles_close_window_quit_and_reopening_the_last_conversation() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![Reply::text("Remember me after a restart.")])
            .await
            .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("chromey");
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let state_dir = state.path().to_path_buf();
    let ran = with_app(env.clone(), move |c| async move {
        // Before a workspace the window is just "Cairn"; with one it is named after it.
        find(&c, "[data-testid=recent-workspace]").await;
        wait_window("^Cairn$").await;
        open_recent(&c).await;
        wait_window("^chromey — Cairn$").await;
        send(&c, "Please remember this conversation").await;
        wait_turns(&c, "completed", 1).await;
        // The key came from the environment, yet the running app's environment block holds
        // none (it restarted itself without it: WebKit starts a thread before `main`).
        let pid = app_pid(&state_dir).expect("the running app");
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        assert!(
            !String::from_utf8_lossy(&environ).contains(KEY),
            "the API key is in /proc/{pid}/environ"
        );

        // A second window, closed from the keyboard (File → Close Window).
        let main = c.window().await.unwrap();
        click(&c, "[data-testid=new-window]").await;
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while c.windows().await.unwrap().len() < 2 {
            assert!(std::time::Instant::now() < deadline, "no second window");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        wait_window("^Cairn$").await;
        press("Cairn", "ctrl+shift+w");
        wait_gone("Cairn").await;
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while c.windows().await.unwrap().len() > 1 {
            assert!(
                std::time::Instant::now() < deadline,
                "the second window stayed"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        c.switch_to_window(main).await.unwrap();
        find(&c, "[data-testid=composer]").await;

        // Ctrl+Q quits the whole app: the process ends on its own, having saved its session.
        let pid = app_pid(&state_dir).expect("the running app");
        press("chromey — Cairn", "ctrl+q");
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while Path::new(&format!("/proc/{pid}/status")).exists()
            && std::fs::read_to_string(format!("/proc/{pid}/status"))
                .is_ok_and(|s| !s.contains("State:\tZ"))
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the app did not quit on Ctrl+Q"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    if !ran {
        return;
    }
    assert_eq!(
        server.requests()[0].api_key(),
        Some(KEY),
        "the sealed key was used"
    );
    let logs: String = std::fs::read_dir(state.path().join("logs"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        logs.contains("Cairn desktop stopped"),
        "the app went through its clean exit; its log ends with:\n{}",
        &logs[logs.len().saturating_sub(3000)..]
    );

    // The next start reopens the workspace and the conversation, with nothing to click.
    with_app(env, move |c| async move {
        wait_window("^chromey — Cairn$").await;
        find(&c, "[data-testid=composer]").await;
        assert_eq!(text_of(&c, "[data-testid=workspace-name]").await, "chromey");
        wait_turns(&c, "completed", 1).await;
        assert_eq!(
            text_of(&c, "[data-testid=user-message] .msg-text").await,
            "Please remember this conversation"
        );
        let said = last_text(&c, "[data-testid=assistant-text]").await;
        assert!(said.contains("Remember me after a restart."), "{said}");
        // Closing the workspace returns to the welcome screen for the next start too.
        click(&c, "[data-testid=close-workspace]").await;
        find(&c, "[data-testid=recent-workspace]").await;
        wait_window("^Cairn$").await;
    })
    .await;
    // The app's memory lives in the config folder (XDG_CONFIG_HOME of `app_env`), not the
    // state dir.
    let memory = state.path().join("config/cairn/desktop.json");
    let settings: serde_json::Value =
        serde_json::from_slice(&std::fs::read(memory).unwrap()).unwrap();
    assert_eq!(
        settings["mainWorkspace"],
        serde_json::Value::Null,
        "{settings}"
    );
}
