//! E2E: a native approval dialog does not lock the window. With the dialog open, real X
//! input (xdotool, as a user's mouse) still scrolls the transcript and presses Stop, which
//! interrupts the turn and closes the dialog. The dialog shows a short diff of the edit, sits
//! clear of the chat card it refers to (geometry, no window manager moving it), and offers
//! the card's choices, "in this project" included: pressed with its key, the rule is kept for
//! the project and the call runs.

use super::*;

/// The screen rectangle `(x, y, width, height)` of the element matching `css` in `win`.
async fn screen_rect(c: &Client, win: &str, css: &str) -> (i64, i64, i64, i64) {
    let js = format!(
        "const r = document.querySelector({}).getBoundingClientRect(); \
         return [r.left, r.top, r.width, r.height, window.innerHeight]",
        serde_json::to_string(css).unwrap()
    );
    let v = c.execute(&js, vec![]).await.unwrap();
    let n = |i: usize| v[i].as_f64().unwrap().round() as i64;
    let (x, y, _, h) = geometry(win);
    (x + n(0), y + (h - n(4)) + n(1), n(2), n(3))
}

/// Whether two rectangles `(x, y, width, height)` overlap.
fn overlap(a: (i64, i64, i64, i64), b: (i64, i64, i64, i64)) -> bool {
    a.0 < b.0 + b.2 && b.0 < a.0 + a.2 && a.1 < b.1 + b.3 && b.1 < a.1 + a.3
}

/// The screen position of the centre of the element matching `css` in the window `win`
/// (the page sits at the bottom of the window, under its menu bar).
pub(super) async fn screen_point(c: &Client, win: &str, css: &str) -> (i64, i64) {
    let js = format!(
        "const r = document.querySelector({}).getBoundingClientRect(); \
         return [r.left + r.width / 2, r.top + r.height / 2, window.innerHeight]",
        serde_json::to_string(css).unwrap()
    );
    let v = c.execute(&js, vec![]).await.unwrap();
    let n = |i: usize| v[i].as_f64().unwrap().round() as i64;
    let (x, y, _, h) = geometry(win);
    (x + n(0), y + (h - n(2)) + n(1))
}

async fn scroll_top(c: &Client) -> f64 {
    c.execute(
        "return document.querySelector('[data-testid=transcript]').scrollTop",
        vec![],
    )
    .await
    .unwrap()
    .as_f64()
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_window_stays_usable_while_a_native_approval_is_open() {
    let essay: String = (0..160)
        .map(|i| format!("Line {i} of a long answer.\n\n"))
        .collect();
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::text(&essay),
            Reply::tool_call(
                "call_edit",
                "write_file",
                json!({"path": "plan.md", "content": "# Plan\nstep one\nstep two\n"}),
            ),
            Reply::tool_call(
                "call_touch",
                "run_shell",
                json!({"command": "touch kept.txt"}),
            ),
            Reply::text("Made it."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let perms = tempfile::tempdir().unwrap();
    let file = perms.path().join("permissions.toml");
    let (_ws_dir, ws) = named_workspace("usable");
    std::fs::write(ws.join("plan.md"), "# Plan\nold step\n").unwrap();
    seed_recent(state.path(), &ws, json!({}));
    // Native approvals: no test hook.
    let env = with_var(
        with_var(
            app_env(state.path(), &server, "mock-model"),
            "CAIRN_TEST_APPROVER",
            None,
        ),
        "CAIRN_PERMISSIONS_FILE",
        Some(&file.display().to_string()),
    );
    let (w, f) = (ws.clone(), file.clone());
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Write a long answer").await;
        wait_turns(&c, "completed", 1).await;
        send(&c, "Now edit the plan").await;

        let dialog = wait_window("allow write_file").await;
        find(&c, &format!("{} [data-testid=approval]", card("write_file", "awaiting"))).await;
        let main = wait_window("^usable — Cairn$").await;
        // No window manager under Xvfb: where the dialog is, Cairn put it. It does not cover
        // its card, nor the Stop button.
        // The whole tool card: its header, the diff and the approval buttons.
        let awaiting = card("write_file", "awaiting");
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        let (d, card_rect) = loop {
            let d = geometry(&dialog);
            let card_rect = screen_rect(&c, &main, &awaiting).await;
            if !overlap(d, card_rect) || std::time::Instant::now() > deadline {
                break (d, card_rect);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        screen_shot("approval-window-usable.png");
        assert!(d.2 > 0 && d.3 > 0, "the dialog has a size: {d:?}");
        assert!(!overlap(d, card_rect), "the dialog {d:?} covers its card {card_rect:?}");
        let stop = screen_rect(&c, &main, "[data-testid=stop]").await;
        assert!(!overlap(d, stop), "the dialog {d:?} covers Stop {stop:?}");

        // The wheel over the transcript scrolls it back, with the dialog still open.
        let before = scroll_top(&c).await;
        let (x, y) = screen_point(&c, &main, "[data-testid=transcript]").await;
        xdotool(&["mousemove", &x.to_string(), &(y + 120).to_string()]).unwrap();
        for _ in 0..8 {
            xdotool(&["click", "4"]).unwrap();
        }
        wait_js(
            &c,
            "the transcript to scroll up under the wheel",
            &format!(
                "return document.querySelector('[data-testid=transcript]').scrollTop < {before} - 40"
            ),
        )
        .await;
        assert!(window_visible("allow write_file"), "the dialog is still open");

        // Stop, clicked like a user: the turn ends interrupted and the dialog goes away.
        let (sx, sy) = screen_point(&c, &main, "[data-testid=stop]").await;
        xdotool(&["mousemove", &sx.to_string(), &sy.to_string()]).unwrap();
        xdotool(&["click", "1"]).unwrap();
        wait_turns(&c, "interrupted", 1).await;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while window_visible("allow write_file") {
            assert!(std::time::Instant::now() < deadline, "the dialog stayed open after Stop");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        // The dialog offers the card's fourth choice; its key keeps the rule for the project.
        send(&c, "Make the kept file").await;
        let dialog = wait_window("allow run_shell").await;
        find(&c, &format!("{} [data-testid=approve-project]", card("run_shell", "awaiting"))).await;
        xdotool(&["windowfocus", "--sync", &dialog]).unwrap();
        xdotool(&["key", "--window", &dialog, "alt+p"]).unwrap();
        wait_turns(&c, "completed", 2).await;
        assert!(w.join("kept.txt").exists(), "the call ran");
        let kept = std::fs::read_to_string(&f).unwrap_or_default();
        assert!(
            kept.contains("run_shell(touch:*)") && kept.contains("project ="),
            "the dialog's choice is the card's: {kept}"
        );
        assert!(!window_visible("allow run_shell"), "the dialog closed");
    })
    .await;
    if ran {
        assert_eq!(
            std::fs::read_to_string(ws.join("plan.md")).unwrap(),
            "# Plan\nold step\n",
            "nothing was written"
        );
    }
}
