//! E2E: conversation rewind and the side-by-side diff. Two turns change `lib.rs`; the diff of
//! turn 2 is shown side by side with highlighted code in both columns; "Rewind to here" on
//! turn 1 (code and conversation) restores the file and leaves only turn 1 in the
//! transcript; the third prompt's request at the mock holds no trace of turn 2.

use super::*;

const V1: &str = "pub fn answer() -> u32 {\n    let base = 40;\n    base + 1\n}\n";
const V2: &str =
    "pub fn answer() -> u32 {\n    let base = 40;\n    base + 2\n}\n\npub struct Extra;\n";

fn rewind_script() -> Vec<Reply> {
    vec![
        Reply::tool_call(
            "call_w1",
            "write_file",
            json!({"path": "lib.rs", "content": V1}),
        ),
        Reply::text("Turn one wrote lib.rs."),
        Reply::tool_call(
            "call_w2",
            "write_file",
            json!({"path": "lib.rs", "content": V2}),
        ),
        Reply::text("Turn two changed lib.rs (SECOND-REPLY)."),
        Reply::text("Turn three answered."),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_chat_and_code_to_turn_one_and_diff_side_by_side() {
    let server = Arc::new(MockLlmServer::with_script(rewind_script()).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("rewinder");
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_TEST_APPROVER",
        Some("allow"),
    );
    let w = ws.clone();
    let ran = with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "Write the FIRST-PROMPT function").await;
        wait_turns(&c, "completed", 1).await;
        send(&c, "Make it SECOND-PROMPT").await;
        wait_turns(&c, "completed", 2).await;
        wait_js(
            &c,
            "2 checkpoints",
            "return document.querySelectorAll('[data-testid=checkpoint]').length >= 2",
        )
        .await;
        assert_eq!(std::fs::read_to_string(w.join("lib.rs")).unwrap(), V2);

        // Turn 2's diff, side by side: highlighted Rust in the old and the new column.
        click(
            &c,
            "[data-testid=checkpoint][data-turn='2'] [data-testid=checkpoint-open]",
        )
        .await;
        find(&c, "[data-testid=diff-file][data-path='lib.rs']").await;
        click(&c, "[data-testid=diff-mode-split]").await;
        wait_css(&c, "[data-testid=diff-dialog] .diff-split").await;
        wait_css(&c, "[data-testid=diff-old] .hljs-keyword").await;
        wait_css(&c, "[data-testid=diff-new] .hljs-keyword").await;
        let old = last_text(&c, "[data-testid=diff-old].diff-del").await;
        let new = last_text(&c, "[data-testid=diff-new].diff-add").await;
        assert!(old.contains("base + 1"), "{old}");
        assert!(new.contains("pub struct Extra"), "{new}");
        screenshot(&c, "diff-split.png").await;
        // Back to unified: one column, still highlighted.
        click(&c, "[data-testid=diff-mode-unified]").await;
        wait_js(
            &c,
            "the unified view",
            "return document.querySelector('[data-testid=diff-dialog] .diff-split') === null \
             && document.querySelector('[data-testid=diff-text] .hljs-keyword') !== null",
        )
        .await;
        click(&c, "[data-testid=overlay-close]").await;

        // Rewind code and conversation to turn 1.
        click(
            &c,
            "[data-testid=checkpoint][data-turn='1'] [data-testid=checkpoint-rewind]",
        )
        .await;
        find(&c, "[data-testid=rewind-dialog] [data-testid=rewind-plan]").await;
        let plan = text_of(&c, "[data-testid=rewind-plan]").await;
        assert!(plan.contains("lib.rs"), "{plan}");
        // One numbering: the dialog names the checkpoint the marker shows.
        let marker = text_of(&c, "[data-testid=checkpoint][data-turn='1']").await;
        assert!(marker.contains("Checkpoint 1"), "{marker}");
        let dialog = text_of(&c, "[data-testid=rewind-dialog]").await;
        assert!(dialog.contains("Rewind to checkpoint 1"), "{dialog}");
        screenshot(&c, "rewind.png").await;
        click(&c, "[data-testid=rewind-confirm]").await;
        wait_js(
            &c,
            "the rewind dialog to close",
            "return document.querySelector('[data-testid=rewind-dialog]') === null",
        )
        .await;
        wait_js(
            &c,
            "the transcript to hold turn 1 only",
            "return document.querySelectorAll('[data-testid=user-message]').length === 1 \
             && document.querySelector('[data-testid=transcript]').dataset.turnEnds === 'completed'",
        )
        .await;
        let transcript = text_of(&c, "[data-testid=transcript]").await;
        assert!(transcript.contains("FIRST-PROMPT"), "{transcript}");
        assert!(!transcript.contains("SECOND-PROMPT"), "{transcript}");
        assert!(!transcript.contains("SECOND-REPLY"), "{transcript}");
        assert_eq!(std::fs::read_to_string(w.join("lib.rs")).unwrap(), V1);

        // What the rewind removed is listed (kept in the session folder), its answer folded.
        let removed = "[data-testid=rewound-panel] [data-testid=rewound-turn][data-turn='2']";
        wait_css(&c, removed).await;
        let shown = last_text(&c, &format!("{removed} summary")).await;
        assert!(shown.contains("SECOND-PROMPT"), "{shown}");
        let open = format!(
            "return document.querySelector({}).open",
            serde_json::to_string(&format!("{removed} details")).unwrap()
        );
        assert_eq!(
            c.execute(&open, vec![]).await.unwrap(),
            json!(false),
            "folded"
        );
        click(&c, &format!("{removed} summary")).await;
        assert_eq!(
            c.execute(&open, vec![]).await.unwrap(),
            json!(true),
            "unfolded"
        );
        let reply = last_text(&c, &format!("{removed} .rewound-reply")).await;
        assert!(reply.contains("SECOND-REPLY"), "{reply}");

        send(&c, "Now the THIRD-PROMPT").await;
        wait_turns(&c, "completed", 2).await;

        // A removed prompt can be put back in the (empty) composer to be sent again.
        click(&c, &format!("{removed} [data-testid=rewound-reuse]")).await;
        wait_js(
            &c,
            "the removed prompt in the composer",
            "return document.querySelector('[data-testid=composer]').value === 'Make it SECOND-PROMPT'",
        )
        .await;
    })
    .await;
    if !ran {
        return;
    }
    let last = server.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("FIRST-PROMPT") && last.contains("THIRD-PROMPT"),
        "{last}"
    );
    assert!(
        !last.contains("SECOND-PROMPT") && !last.contains("SECOND-REPLY"),
        "turn 2 left the history: {last}"
    );
    assert!(
        !last.contains("call_w2"),
        "turn 2's tool call left too: {last}"
    );
}
