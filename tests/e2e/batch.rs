//! E2E: several worktree sessions started at once from the board (issue 44): the New worktree
//! form with a count shows what the batch may cost before it starts, then makes one worktree
//! and session per count, each given the same first message, under one shared dollar cap. On
//! a priced mock the batch as a whole reaches the cap: every session's turn stops with
//! `budget_exceeded` before its next request, each offers to raise the (batch's) cap, and
//! no request goes out past it.

use super::worktrees::group;
use super::*;
use cairn_testkit::git;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_worktree_sessions_shows_its_estimate_and_stops_together_at_its_cap() {
    // $1 per million tokens in and out: each request costs $0.011; the cap is $0.015.
    let script = (0..6)
        .map(|i| {
            Reply::tool_call(&format!("c{i}"), "list_files", json!({"path": "."}))
                .with_usage(10_000, 1_000)
        })
        .collect();
    let server = Arc::new(MockLlmServer::with_script(script).await.unwrap());
    let state = tempfile::tempdir().unwrap();
    let trees = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("batched");
    git::repo_with(&ws, &[("README.md", "# Batched\n")]);
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        with_var(
            app_env(state.path(), &server, "mock-model"),
            "CAIRN_WORKTREES_DIR",
            Some(&trees.path().display().to_string()),
        ),
        "CAIRN_PRICE_PER_MTOK",
        Some("1,1"),
    );
    let srv = server.clone();
    with_app(env, move |c| async move {
        open_recent(&c).await;
        click(&c, "[data-testid=new-worktree]:not([disabled])").await;
        find(&c, "[data-testid=worktree-name]")
            .await
            .send_keys("try")
            .await
            .unwrap();
        // A count above one: the first message, the batch's cap and the estimate.
        let count = find(&c, "[data-testid=worktree-count]").await;
        count.clear().await.unwrap();
        count.send_keys("2").await.unwrap();
        find(&c, "[data-testid=worktree-prompt]")
            .await
            .send_keys("List the files")
            .await
            .unwrap();
        find(&c, "[data-testid=worktree-cap]")
            .await
            .send_keys("0.015")
            .await
            .unwrap();
        let estimate = text_of(&c, "[data-testid=worktree-estimate]").await;
        assert!(
            estimate.contains("No estimate yet") && estimate.contains("$0.0150"),
            "{estimate}"
        );
        assert_eq!(
            text_of(&c, "[data-testid=worktree-create]").await,
            "Start 2 sessions"
        );
        click(&c, "[data-testid=worktree-create]").await;

        // One worktree and session per count, each stopped by the batch's cap.
        for name in ["try-1", "try-2"] {
            wait_css(&c, &group(name)).await;
        }
        wait_js(
            &c,
            "both batch sessions to stop",
            "return [...document.querySelectorAll('[data-testid=worktree-group] [data-testid=session-item]')]\
             .filter(r => r.dataset.state === 'error').length === 2",
        )
        .await;
        let sent = srv.requests().len();
        assert!((2..=3).contains(&sent), "no request past the cap: {sent}");

        // The session shown offers to raise the cap, the batch's: what both spent.
        find(&c, "[data-testid=budget-raise]").await;
        let raise = text_of(&c, "[data-testid=budget-raise]").await;
        assert!(
            raise.contains("$0.0220 of $0.0150") && raise.contains("2 sessions share"),
            "the batch's spending against its cap: {raise}"
        );
        let errors = text_of(&c, "[data-testid=transcript]").await;
        assert!(errors.contains("batch"), "{errors}");
        screenshot(&c, "worktree-batch-capped.png").await;
    })
    .await;
}
