//! E2E: tool cards show the user facts, not the model's payloads: a denied call shows its
//! reason (no `{"error": …}` JSON), an applied overwrite shows one diff (the real one, both
//! sides), and a write that changes nothing says so instead of an empty diff box.

use super::*;

fn cards_script() -> Vec<Reply> {
    vec![
        Reply::tool_call(
            "call_same",
            "write_file",
            json!({"path": "same.txt", "content": "unchanged\n"}),
        ),
        Reply::tool_call(
            "call_over",
            "write_file",
            json!({"path": "notes.txt", "content": "new line\n"}),
        ),
        Reply::tool_call("call_rm", "run_shell", json!({"command": "rm -rf build"})),
        Reply::text("All three done."),
    ]
}

/// The text of the tool card of call `id`.
async fn card_text(c: &Client, id: &str) -> String {
    let js = format!(
        "const cards = [...document.querySelectorAll('[data-testid=tool-card]')]; \
         const card = cards.find((el) => el.querySelector('[data-testid=tool-status]') && el.dataset.callId === {id:?}); \
         return card ? card.textContent : null"
    );
    c.execute(&js, vec![])
        .await
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_cards_show_reasons_and_edits_show_one_real_diff() {
    let server = Arc::new(MockLlmServer::with_script(cards_script()).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("cards");
    std::fs::write(ws.join("same.txt"), "unchanged\n").unwrap();
    std::fs::write(ws.join("notes.txt"), "old line\n").unwrap();
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let w = ws.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Tidy up").await;

        // Writing the content the file already has: "No change", not an empty diff box.
        let same = card("write_file", "awaiting");
        wait_js(
            &c,
            "the no-change note",
            &format!(
                "const d = document.querySelector({:?}); return d !== null && d.textContent.includes('No change')",
                format!("{same} [data-testid=edit-diff]")
            ),
        )
        .await;
        click(&c, &format!("{same} [data-testid=approve-once]")).await;

        // An overwrite: approved, its card shows exactly one diff, with both sides.
        let over = "[data-testid=tool-card][data-call-id=call_over]";
        find(&c, &format!("{over}[data-state=awaiting] [data-testid=approve-once]")).await;
        click(&c, &format!("{over} [data-testid=approve-once]")).await;
        find(&c, &format!("{over}[data-state=ok]")).await;
        assert_eq!(count(&c, &format!("{over} pre.diff")).await, 1, "one diff per edit");
        let diff = text_of(&c, &format!("{over} pre.diff")).await;
        assert!(diff.contains("old line") && diff.contains("new line"), "{diff}");

        // A denied command: the reason, never the model's JSON payload.
        let rm = "[data-testid=tool-card][data-call-id=call_rm]";
        click(&c, &format!("{rm}[data-state=awaiting] [data-testid=approve-deny]")).await;
        find(&c, &format!("{rm}[data-state=denied]")).await;
        wait_turns(&c, "completed", 1).await;
        let denied = card_text(&c, "call_rm").await;
        assert!(!denied.is_empty(), "the denied card is in the page");
        assert!(!denied.contains("{\"error\""), "{denied}");
        assert!(!denied.contains("error_type"), "{denied}");
        assert!(denied.contains("denied") || denied.contains("Denied"), "{denied}");
        screenshot(&c, "cards.png").await;
    })
    .await;
    if ran {
        assert_eq!(
            std::fs::read_to_string(w.join("notes.txt")).unwrap(),
            "new line\n"
        );
        assert!(server.requests().len() >= 4);
    }
}
