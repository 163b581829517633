//! E2E: steering typed while a turn runs, then Stop. The queued messages do not linger as
//! stale chips to be injected after the next prompt: they come back into the composer in
//! the order they were typed, and sending them reaches the model in that order.

use super::*;

const COMPOSER_VALUE: &str = "return document.querySelector('[data-testid=composer]').value";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_queued_then_stop_comes_back_in_typed_order() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::fault(cairn_testkit::Fault::Stall(Duration::from_secs(60))),
            Reply::text("Both noted."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("steered");
    seed_recent(state.path(), &ws, json!({}));
    let srv = server.clone();
    with_app(
        app_env(state.path(), &server, "mock-model"),
        move |c| async move {
            open_recent(&c).await;
            send(&c, "refactor the parser").await;
            find(&c, "[data-testid=stop]").await;
            srv.wait_for_requests(1, Duration::from_secs(20)).await;
            send(&c, "first: keep the API").await;
            send(&c, "second: add tests").await;
            wait_js(
                &c,
                "two queued chips",
                "return document.querySelectorAll('[data-testid=steering-chip][data-state=queued]').length === 2",
            )
            .await;
            click(&c, "[data-testid=stop]").await;
            wait_turns(&c, "interrupted", 1).await;
            wait_js(
                &c,
                "the queued messages back in the composer, in typed order",
                &format!("{COMPOSER_VALUE} === 'first: keep the API\\nsecond: add tests'"),
            )
            .await;
            wait_js(
                &c,
                "no stale queued chip",
                "return document.querySelectorAll('[data-testid=steering-chip][data-state=queued]').length === 0",
            )
            .await;
            // Sent as they are: the model gets them after the stopped prompt, in typed order.
            let composer = find(&c, "[data-testid=composer]").await;
            composer.send_keys(&Key::Enter.to_string()).await.unwrap();
            wait_turns(&c, "completed", 1).await;
            let requests = srv.requests();
            let last = requests.last().unwrap().body.to_string();
            let at = |s: &str| last.find(s).unwrap_or_else(|| panic!("`{s}` not in {last}"));
            assert!(at("refactor the parser") < at("first: keep the API"));
            assert!(at("first: keep the API") < at("second: add tests"));
            assert_eq!(
                last.matches("first: keep the API").count(),
                1,
                "sent once, not also injected: {last}"
            );
        },
    )
    .await;
}
