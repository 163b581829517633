//! E2E: a worktree's ways out end somewhere the user can act, clicked with real X input
//! (xdotool, as a user's mouse) in one app start. "Continue in folder" lands on the folder
//! chat holding the handed-over history, selected on the board, with a notice saying what
//! happened; after "Remove worktree" its chat stays on the board marked "worktree removed"
//! and opening it goes on in the folder with its history; an apply conflict lists the file
//! with "Keep folder's version" / "Take worktree's version", and taking the worktree's
//! completes the apply, recorded in the worktree's own folder chat, while the review's
//! buttons never move.

use super::worktrees::{group, new_worktree, worktree_path};
use super::*;
use cairn_testkit::git;

/// The window's X title (`<workspace> — Cairn`).
const TITLE: &str = "^ends — Cairn$";

/// Clicks the element matching `css` with the X pointer, where a user would: at its centre on
/// the screen (scrolled into view first; the page sits at the bottom of the window, under its
/// menu bar).
async fn x_click(c: &Client, css: &str) {
    find(c, css).await;
    let js = format!(
        "const e = document.querySelector({}); e.scrollIntoView({{block: 'center'}}); \
         const r = e.getBoundingClientRect(); \
         return [r.left + r.width / 2, r.top + r.height / 2, window.innerHeight]",
        serde_json::to_string(css).unwrap()
    );
    let v = c.execute(&js, vec![]).await.unwrap();
    let n = |i: usize| v[i].as_f64().unwrap().round() as i64;
    let win = wait_window(TITLE).await;
    let (x, y, _, h) = geometry(&win);
    let (sx, sy) = (x + n(0), y + (h - n(2)) + n(1));
    xdotool(&["mousemove", &sx.to_string(), &sy.to_string()]).unwrap();
    xdotool(&["click", "1"]).unwrap();
}

/// Waits until the board shows a folder chat (not `not`) holding a user message with `text`.
async fn wait_folder_chat_with(c: &Client, not: &str, text: &str) -> String {
    wait_js(
        c,
        &format!("a folder chat with `{text}`, selected on the board"),
        &format!(
            "const r = document.querySelector('[data-testid=session-item][aria-current=true]'); \
             const m = [...document.querySelectorAll('[data-testid=user-message]')].map(e => e.textContent); \
             return r !== null && r.dataset.sessionId !== {not} && r.dataset.worktree === undefined \
               && m.some(t => t.includes({text}))",
            not = serde_json::to_string(not).unwrap(),
            text = serde_json::to_string(text).unwrap(),
        ),
    )
    .await;
    shown_id(c).await
}

/// Opens worktree `name`'s review from its board group and waits for the dialog listing
/// `file` (the board's Review button shares the dialog's test id).
async fn review_listing(c: &Client, name: &str, file: &str) {
    x_click(c, &format!("{} [data-testid=worktree-review]", group(name))).await;
    wait_js(
        c,
        &format!("the review of {name} listing {file}"),
        &format!(
            "return document.querySelector({}) !== null",
            serde_json::to_string(&format!(
                "[role=dialog][data-testid=worktree-review] [data-testid=review-file][data-path='{file}']"
            ))
            .unwrap()
        ),
    )
    .await;
}

/// Where each button of the review's footer is (left, top, width), in order.
async fn footer_places(c: &Client) -> String {
    c.execute(
        "return [...document.querySelectorAll('[data-testid=review-actions] button')].map(b => { \
           const r = b.getBoundingClientRect(); \
           return b.dataset.testid + '@' + Math.round(r.left) + ',' + Math.round(r.top) + ',' + Math.round(r.width); \
         }).join(' ')",
        vec![],
    )
    .await
    .unwrap()
    .as_str()
    .unwrap()
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_in_folder_remove_and_an_apply_conflict_each_end_where_the_user_can_act() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::text("Answered in worktree hand."),
            Reply::text("Answered in worktree gone."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let trees = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("ends");
    git::repo_with(&ws, &[("notes.txt", "one\ntwo\n"), ("clash.txt", "base\n")]);
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_WORKTREES_DIR",
        Some(&trees.path().display().to_string()),
    );
    let w = ws.clone();
    let started = std::time::Instant::now();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;

        // 1. Continue in folder: the folder chat with the history, selected, with a notice.
        new_worktree(&c, "hand").await;
        send(&c, "HAND-QUESTION about the notes").await;
        wait_turns(&c, "completed", 1).await;
        let hand_chat = shown_id(&c).await;
        let hand = worktree_path(&w, "hand").expect("git lists worktree hand");
        std::fs::write(hand.join("notes.txt"), "one\nTWO\n").unwrap();
        review_listing(&c, "hand", "notes.txt").await;
        x_click(&c, "[data-testid=worktree-review] [data-testid=worktree-handoff]").await;
        let folder_chat = wait_folder_chat_with(&c, &hand_chat, "HAND-QUESTION").await;
        let notice = last_text(&c, "[data-testid=notice]").await;
        assert!(notice.contains("Continued in the folder"), "{notice}");
        assert!(notice.contains("1 file"), "what was applied: {notice}");
        wait_js(
            &c,
            "the review to close",
            "return document.querySelector('[role=dialog][data-testid=worktree-review]') === null",
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(w.join("notes.txt")).unwrap(),
            "one\nTWO\n"
        );
        assert!(folder_chat != hand_chat);

        // 2. Remove: the chat stays on the board, marked, and goes on in the folder.
        new_worktree(&c, "gone").await;
        send(&c, "GONE-QUESTION before the removal").await;
        wait_turns(&c, "completed", 1).await;
        let gone_chat = shown_id(&c).await;
        x_click(&c, &format!("{} [data-testid=worktree-review]", group("gone"))).await;
        find(&c, "[role=dialog][data-testid=worktree-review]").await;
        x_click(&c, "[data-testid=worktree-review] [data-testid=worktree-remove]").await;
        wait_js(
            &c,
            "worktree gone to leave the board and its review to close",
            "return document.querySelector('[data-testid=worktree-group][data-worktree=gone]') === null \
             && document.querySelector('[role=dialog][data-testid=worktree-review]') === null",
        )
        .await;
        assert!(worktree_path(&w, "gone").is_none());
        let row = format!(
            "[data-testid=session-item][data-session-id='{gone_chat}'][data-worktree-removed=true]"
        );
        let mark = text_of(&c, &format!("{row} [data-testid=session-worktree-removed]")).await;
        assert!(mark.contains("worktree removed"), "{mark}");
        x_click(&c, &format!("{row} [data-testid=session-open]")).await;
        wait_folder_chat_with(&c, &gone_chat, "GONE-QUESTION").await;
        let notice = last_text(&c, "[data-testid=notice]").await;
        assert!(notice.contains("Worktree gone was removed"), "{notice}");
        // The original is still there, marked.
        find(&c, &row).await;

        // 3. An apply conflict offers a way to settle it; the buttons never move.
        new_worktree(&c, "clash").await;
        let clash = worktree_path(&w, "clash").expect("git lists worktree clash");
        std::fs::write(clash.join("clash.txt"), "from the worktree\n").unwrap();
        std::fs::write(clash.join("extra.txt"), "new\n").unwrap();
        std::fs::write(w.join("clash.txt"), "from the folder\n").unwrap();
        review_listing(&c, "clash", "extra.txt").await;
        let before = footer_places(&c).await;
        assert_eq!(before.matches('@').count(), 7, "{before}");
        x_click(&c, "[data-testid=worktree-apply]").await;
        let conflict = "[data-testid=apply-conflict][data-path='clash.txt'][data-resolvable=true]";
        find(&c, &format!("{conflict} [data-testid=conflict-keep]")).await;
        assert_eq!(footer_places(&c).await, before, "the buttons stay put");
        // Shown from a worktree's chat: recorded in the worktree's own folder chat.
        let recorded = text_of(&c, "[data-testid=apply-recorded]").await;
        assert!(recorded.contains("Applied from worktree clash"), "{recorded}");
        assert_eq!(
            std::fs::read_to_string(w.join("clash.txt")).unwrap(),
            "from the folder\n",
            "left alone until the user chooses"
        );
        screenshot(&c, "worktree-apply-conflict.png").await;
        x_click(&c, &format!("{conflict} [data-testid=conflict-take]")).await;
        find(&c, "[data-testid=apply-settled]").await;
        assert_eq!(count(&c, "[data-testid=apply-conflict]").await, 0);
        assert_eq!(
            std::fs::read_to_string(w.join("clash.txt")).unwrap(),
            "from the worktree\n"
        );
        assert_eq!(footer_places(&c).await, before, "the buttons stay put");
        wait_css(
            &c,
            &format!("{} [data-testid=worktree-unapplied][data-count='0']", group("clash")),
        )
        .await;

        // Both applies are change-turns of that one chat, undoable from its timeline.
        x_click(&c, "[data-testid=apply-open-chat]").await;
        wait_js(
            &c,
            "the worktree's apply chat with its two applies",
            "return document.querySelector('[role=dialog][data-testid=worktree-review]') === null \
             && document.querySelectorAll('[data-testid=checkpoint][data-kind=apply]').length === 2",
        )
        .await;
        let title = last_text(&c, "[data-testid=session-title]").await;
        assert!(title.contains("Applied from worktree clash"), "{title}");
    })
    .await;
    if ran {
        eprintln!(
            "worktree dead ends E2E: {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
}
