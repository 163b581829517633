//! E2E: a slow or stalled model never leaves the transcript silent. Right after sending, the
//! user's message and a working indicator ("Waiting for the model", elapsed time) show, the
//! elapsed time ticks, and Stop ends the turn and the indicator.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_stream_shows_a_working_indicator_with_elapsed_time_within_a_second() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![Reply::fault(cairn_testkit::Fault::Stall(
            Duration::from_secs(60),
        ))])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("stalled");
    seed_recent(state.path(), &ws, json!({}));
    with_app(
        app_env(state.path(), &server, "mock-model"),
        move |c| async move {
            open_recent(&c).await;
            // Measured in the page: from the Enter that sends to the indicator's first paint.
            c.execute(
                "window.__sent = null; window.__working = null; \
                 document.addEventListener('keydown', e => { \
                   if (e.key === 'Enter' && window.__sent === null) window.__sent = performance.now(); \
                 }, true); \
                 new MutationObserver(() => { \
                   if (window.__working === null && document.querySelector('[data-testid=working]')) \
                     window.__working = performance.now(); \
                 }).observe(document.body, { childList: true, subtree: true }); \
                 return true",
                vec![],
            )
            .await
            .unwrap();
            send(&c, "why is the build slow?").await;
            wait_js(
                &c,
                "the working indicator",
                "return window.__working !== null && window.__sent !== null",
            )
            .await;
            let ms = c
                .execute("return window.__working - window.__sent", vec![])
                .await
                .unwrap()
                .as_f64()
                .unwrap();
            assert!(ms < 1000.0, "the indicator took {ms} ms to show");
            let phase = c
                .execute(
                    "const w = document.querySelector('[data-testid=working]'); \
                     return w === null ? document.querySelector('[data-testid=transcript]').textContent \
                     : w.dataset.phase",
                    vec![],
                )
                .await
                .unwrap();
            assert_eq!(phase, json!("model"));
            // The user's own message is there from the first moment.
            wait_js(
                &c,
                "the user's message",
                "return document.querySelector('[data-testid=transcript]').textContent \
                 .includes('why is the build slow?')",
            )
            .await;
            // The elapsed time ticks while the model stays silent.
            wait_js(
                &c,
                "the elapsed time at 2s or more",
                "const e = document.querySelector('[data-testid=working] .working-elapsed'); \
                 return e !== null && /^([2-9]|[1-9][0-9])s$/.test(e.textContent)",
            )
            .await;
            screenshot(&c, "working.png").await;
            click(&c, "[data-testid=stop]").await;
            wait_turns(&c, "interrupted", 1).await;
            wait_js(
                &c,
                "the indicator gone after Stop",
                "return document.querySelector('[data-testid=working]') === null",
            )
            .await;
        },
    )
    .await;
}

/// The mode can be picked before the first message: the session the message creates runs in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mode_is_picked_before_the_first_message() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![Reply::text("A plan first.")])
            .await
            .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("planned");
    seed_recent(state.path(), &ws, json!({}));
    let dir = state.path().to_path_buf();
    with_app(
        app_env(state.path(), &server, "mock-model"),
        move |c| async move {
            open_recent(&c).await;
            // No session exists yet, and the switcher is there.
            find(&c, "[data-testid=mode-switcher][data-mode=interactive]").await;
            click(&c, "[data-testid=mode-plan]").await;
            find(&c, "[data-testid=mode-switcher][data-mode=plan]").await;
            send(&c, "how should we split the parser?").await;
            wait_turns(&c, "completed", 1).await;
            find(&c, "[data-testid=mode-switcher][data-mode=plan]").await;
            // The engine ran the session in that mode: its saved permissions say so.
            let sessions: Vec<_> = std::fs::read_dir(dir.join("sessions"))
                .unwrap()
                .flatten()
                .filter(|e| e.path().join("state.json").exists())
                .collect();
            assert_eq!(sessions.len(), 1);
            let saved: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(sessions[0].path().join("state.json")).unwrap(),
            )
            .unwrap();
            assert_eq!(saved["permissions"]["mode"], json!("plan"), "{saved}");
        },
    )
    .await;
}
