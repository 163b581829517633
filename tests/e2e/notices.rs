//! E2E: what the transcript says when things go wrong or need a hand. A rejected key is one
//! plain sentence with an "Open Settings" action (no nested parentheses); a code block in an
//! answer has a Copy button that fills the clipboard with the code alone.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_key_opens_settings_and_code_blocks_copy() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::fault(cairn_testkit::Fault::unauthorized()),
            Reply::text("Run this:\n\n```sh\necho COPY-ME-42\n```\n"),
            // A model the endpoint does not serve (issue 45): words and an action.
            Reply::fault(cairn_testkit::Fault::Status {
                code: 404,
                retry_after: None,
                body: Some(
                    r#"{"error":{"message":"The model `mock-model` does not exist","type":"invalid_request_error","code":"model_not_found"}}"#
                        .into(),
                ),
            }),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("keys");
    seed_recent(state.path(), &ws, json!({}));
    with_app(
        app_env(state.path(), &server, "mock-model"),
        move |c| async move {
            open_recent(&c).await;
            send(&c, "hello").await;
            wait_turns(&c, "error", 1).await;
            let notice = last_text(&c, "[data-testid=notice]").await;
            assert!(notice.contains("Set a valid API key"), "{notice}");
            assert!(!notice.contains("(auth"), "{notice}");
            assert!(
                !notice.contains(KEY),
                "the echoed key is redacted: {notice}"
            );
            click(&c, "[data-testid=notice-open-settings]").await;
            find(&c, "[data-testid=settings]").await;
            click(&c, "[data-testid=overlay-close]").await;

            send(&c, "again").await;
            wait_turns(&c, "completed", 1).await;
            click(&c, "[data-testid=code-copy]").await;
            let copied = wait_clipboard(&c, "echo COPY-ME-42").await;
            assert!(!copied.contains("Run this"), "only the code: {copied:?}");

            send(&c, "once more").await;
            wait_turns(&c, "error", 2).await;
            let notice = last_text(&c, "[data-testid=notice]").await;
            assert!(notice.contains("does not know the model"), "{notice}");
            for leak in ["{\"error\"", "failed: failed", "os error", "cairn "] {
                assert!(!notice.contains(leak), "no `{leak}` in the card: {notice}");
            }
            let actions = c
                .execute(
                    "const n = [...document.querySelectorAll('[data-testid=notice]')].pop(); \
                     return n.querySelector('[data-testid=notice-open-settings]') !== null",
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(actions, json!(true), "an unknown model offers Settings");
            // The README's error card: words and the action, nothing internal.
            c.execute(
                "[...document.querySelectorAll('[data-testid=notice]')].pop().scrollIntoView({block: 'center'})",
                vec![],
            )
            .await
            .unwrap();
            screenshot(&c, "error-card.png").await;
        },
    )
    .await;
}
