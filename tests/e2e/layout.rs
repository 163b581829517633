//! E2E: the window at laptop-with-scaling and tiled sizes (800x600, 640x480) keeps Send,
//! Stop, Settings and Usage on screen and clickable, and the sessions sidebar folds into a
//! drawer the header opens.

use super::*;

/// Resizes the window and waits until the page sees the new width.
async fn resize(c: &Client, width: u32, height: u32) {
    c.set_window_size(width, height).await.unwrap();
    wait_js(
        c,
        &format!("the page to be {width} px wide"),
        &format!("return Math.abs(window.innerWidth - {width}) <= 16"),
    )
    .await;
}

/// Whether the element matching `css` is inside the window, has a size, and is the element
/// a click at its centre would hit (nothing covers it, nothing clips it away).
async fn on_screen(c: &Client, css: &str) -> bool {
    let js = format!(
        "const el = document.querySelector({}); if (el === null) return false; \
         const r = el.getBoundingClientRect(); \
         if (r.width < 4 || r.height < 4) return false; \
         if (r.left < 0 || r.top < 0 || r.right > window.innerWidth + 0.5 || r.bottom > window.innerHeight + 0.5) return false; \
         const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2); \
         return hit !== null && (hit === el || el.contains(hit));",
        serde_json::to_string(css).unwrap()
    );
    c.execute(&js, vec![]).await.unwrap() == serde_json::Value::Bool(true)
}

/// Asserts `css` can be reached: on screen, or on screen once the header's "More" menu is
/// open (the menu is closed again afterwards).
async fn assert_reachable(c: &Client, css: &str, size: &str) {
    if on_screen(c, css).await {
        return;
    }
    assert!(
        on_screen(c, "[data-testid=header-more]").await,
        "{css} is not on screen at {size}, and there is no More menu to reach it"
    );
    click(c, "[data-testid=header-more]").await;
    find(c, "[data-testid=header-menu]").await;
    assert!(
        on_screen(c, &format!("[data-testid=header-menu] {css}")).await,
        "{css} is neither on screen nor in the More menu at {size}"
    );
    click(c, "[data-testid=header-more]").await;
    wait_js(
        c,
        "the More menu to close",
        "return document.querySelector('[data-testid=header-menu]') === null",
    )
    .await;
}

/// The chat column's width in CSS pixels.
async fn chat_width(c: &Client) -> f64 {
    c.execute(
        "return document.querySelector('main.chat').getBoundingClientRect().width",
        vec![],
    )
    .await
    .unwrap()
    .as_f64()
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_windows_keep_send_stop_settings_and_usage_reachable() {
    let slow = Reply::text(&"working on it ".repeat(200))
        .chunk_size(6)
        .delay_between_chunks(Duration::from_millis(60));
    let server = Arc::new(
        MockLlmServer::with_script(vec![Reply::text("Ready."), slow])
            .await
            .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("laptop-project");
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "hello").await;
        wait_turns(&c, "completed", 1).await;

        // Wide: the sidebar sits beside the chat, every action is in the header.
        resize(&c, 1280, 800).await;
        find(&c, "[data-testid=workbench][data-sidebar=docked]").await;
        for css in ["[data-testid=open-settings]", "[data-testid=open-usage]", "[data-testid=send]"] {
            assert!(on_screen(&c, css).await, "{css} at 1280x800");
        }
        // The workspace's name is whole in the header (the labels gave way, not the name).
        let whole = c
            .execute(
                "const b = document.querySelector('.brand').getBoundingClientRect(); \
                 const w = document.querySelector('.crumb-workspace').getBoundingClientRect(); \
                 return w.right <= b.right + 1 && w.width > 0",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(whole, serde_json::json!(true), "the workspace name is cut at 1280x800");

        for (w, h) in [(800, 600), (640, 480)] {
            let size = format!("{w}x{h}");
            resize(&c, w, h).await;
            // The sidebar folds away: the chat keeps (nearly) the whole width.
            find(&c, "[data-testid=workbench][data-sidebar=hidden]").await;
            let chat = chat_width(&c).await;
            assert!(chat >= f64::from(w) * 0.9, "chat column {chat} px at {size}");
            assert_reachable(&c, "[data-testid=send]", &size).await;
            assert_reachable(&c, "[data-testid=open-settings]", &size).await;
            assert_reachable(&c, "[data-testid=open-usage]", &size).await;
            if w == 800 {
                screenshot(&c, "small-800x600.png").await;
            }
            // The header opens the sidebar as a drawer over the chat; picking closes it.
            click(&c, "[data-testid=toggle-sidebar]").await;
            find(&c, "[data-testid=workbench][data-sidebar=drawer]").await;
            assert!(on_screen(&c, "[data-testid=new-chat]").await, "New chat in the drawer at {size}");
            click(&c, "[data-testid=drawer-backdrop]").await;
            find(&c, "[data-testid=workbench][data-sidebar=hidden]").await;
        }

        // The usage overlay opens from the More menu at the smallest size.
        click(&c, "[data-testid=header-more]").await;
        click(&c, "[data-testid=header-menu] [data-testid=open-usage]").await;
        find(&c, "[data-testid=overlay-close]").await;
        click(&c, "[data-testid=overlay-close]").await;

        // While a turn streams, Stop is whole and works at 640x480.
        send(&c, "keep going").await;
        find(&c, "[data-testid=stop]").await;
        assert_reachable(&c, "[data-testid=stop]", "640x480 while running").await;
        assert_reachable(&c, "[data-testid=send]", "640x480 while running").await;
        click(&c, "[data-testid=stop]").await;
        wait_turns(&c, "interrupted", 1).await;

        // The composer grows with its text (up to its cap) and stays on screen.
        let before = c
            .execute("return document.querySelector('[data-testid=composer]').offsetHeight", vec![])
            .await
            .unwrap()
            .as_f64()
            .unwrap();
        let composer = find(&c, "[data-testid=composer]").await;
        for line in ["one", "two", "three", "four", "five"] {
            composer.send_keys(line).await.unwrap();
            composer
                .send_keys(&format!("{}{}{}", Key::Shift, Key::Enter, Key::Null))
                .await
                .unwrap();
        }
        wait_js(
            &c,
            "the composer to grow",
            &format!("return document.querySelector('[data-testid=composer]').offsetHeight > {before} + 20"),
        )
        .await;
        assert_reachable(&c, "[data-testid=send]", "640x480 with a long draft").await;

        // Back to a wide window: the sidebar docks again.
        resize(&c, 1280, 800).await;
        find(&c, "[data-testid=workbench][data-sidebar=docked]").await;
    })
    .await;
    if ran {
        assert_eq!(server.requests().len(), 2, "one request per prompt");
    }
}
