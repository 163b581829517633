//! E2E: the transcript follows new content at its bottom. Scrolls that layout or code cause
//! never stop it (a race once left the view above a whole new turn); the user's own prompt
//! brings the view down to it even when they had scrolled up (what the user scrolling up
//! does to streamed content is `ui/src/follow.test.ts`).

use super::*;

/// An answer taller than the transcript.
fn long_answer(tag: &str) -> String {
    (1..=40)
        .map(|i| format!("{tag}: line {i} of a long answer."))
        .collect::<Vec<_>>()
        .join("\n\n")
}

const TRANSCRIPT: &str = "document.querySelector('[data-testid=transcript]')";

/// Waits until the transcript's view is at its bottom.
async fn wait_bottom(c: &Client, what: &str) {
    let js = format!(
        "const el = {TRANSCRIPT}; return el !== null && el.scrollHeight > el.clientHeight * 2 \
         && el.scrollHeight - el.scrollTop - el.clientHeight < 80"
    );
    wait_js(c, what, &js).await;
}

/// Scrolls the transcript to `top`; `by_user` sends a wheel event first, as a user's scroll does.
async fn scroll_to(c: &Client, top: &str, by_user: bool) {
    let wheel = if by_user {
        "el.dispatchEvent(new WheelEvent('wheel', { deltaY: -400, bubbles: true }));"
    } else {
        ""
    };
    let js = format!("const el = {TRANSCRIPT}; {wheel} el.scrollTop = {top}; return true");
    c.execute(&js, vec![]).await.unwrap();
    // Let the scroll event fire before anything else happens.
    tokio::time::sleep(Duration::from_millis(300)).await;
}

async fn scroll_top(c: &Client) -> f64 {
    let js = format!("return {TRANSCRIPT}.scrollTop");
    c.execute(&js, vec![]).await.unwrap().as_f64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transcript_follows_new_turns_and_comes_down_to_the_users_own_prompt() {
    let server = Arc::new(
        MockLlmServer::with_script(
            ["one", "two", "three", "four"]
                .iter()
                .map(|t| Reply::text(&long_answer(t)))
                .collect(),
        )
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("scroller");
    seed_recent(state.path(), &ws, json!({}));
    with_app(
        app_env(state.path(), &server, "mock-model"),
        move |c| async move {
            open_recent(&c).await;
            send(&c, "first").await;
            wait_turns(&c, "completed", 1).await;
            wait_bottom(&c, "the first answer followed to its end").await;

            // A scroll that is not the user's (here: code) leaves the view pinned.
            scroll_to(&c, "0", false).await;
            send(&c, "second").await;
            wait_turns(&c, "completed", 2).await;
            wait_bottom(
                &c,
                "the second turn followed although a non-user scroll moved the view",
            )
            .await;

            // The user scrolls up to read, then sends: the view comes down to the new prompt
            // and its answer.
            scroll_to(&c, "0", true).await;
            assert!(scroll_top(&c).await < 50.0, "the user scrolled up");
            send(&c, "third").await;
            wait_turns(&c, "completed", 3).await;
            wait_bottom(&c, "the user's own prompt brought the view down").await;

            // Back at the bottom, it follows again.
            scroll_to(&c, "el.scrollHeight", true).await;
            send(&c, "fourth").await;
            wait_turns(&c, "completed", 4).await;
            wait_bottom(&c, "the fourth turn followed after the user came back down").await;
            wait_css(&c, "[data-testid=turn-end][data-status=completed]").await;
            let text = text_of(&c, "[data-testid=transcript]").await;
            assert!(
                text.contains("four: line 40 of"),
                "the end of the last answer is shown"
            );
        },
    )
    .await;
}
