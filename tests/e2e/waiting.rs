//! E2E (issue 45): a prompt whose turn waits for a free turn slot is shown at once, marked as
//! waiting, instead of the empty start screen (one slot here; the first chat holds it).

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_waiting_for_a_slot_shows_the_users_message() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![Reply::fault(cairn_testkit::Fault::Stall(
            Duration::from_secs(60),
        ))])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(state.path().join("turn-slots")).unwrap();
    std::fs::write(state.path().join("turn-slots/limit"), "1").unwrap();
    let (_ws_dir, ws) = named_workspace("waiting");
    seed_recent(state.path(), &ws, json!({}));
    let srv = server.clone();
    with_app(
        app_env(state.path(), &server, "mock-model"),
        move |c| async move {
            open_recent(&c).await;
            send(&c, "first chat holds the only slot").await;
            find(&c, "[data-testid=stop]").await;
            srv.wait_for_requests(1, Duration::from_secs(20)).await;
            new_chat(&c).await;
            send(&c, "second chat waits its turn").await;
            wait_js(
                &c,
                "the waiting prompt shown as the user's message",
                "const m = document.querySelector('[data-testid=user-message][data-waiting=true]'); \
                 return m !== null && m.textContent.includes('second chat waits its turn')",
            )
            .await;
            wait_css(&c, "[data-testid=queued-banner]").await;
            assert_eq!(srv.requests().len(), 1, "the second turn has not started");
        },
    )
    .await;
}
