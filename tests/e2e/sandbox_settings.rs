//! E2E: "Run sandboxed commands without asking" in Settings is `--shell-policy sandbox`.
//! Before it, a command that writes asks; once it is on, the same kind of command runs
//! unasked inside the sandbox in the open chat, and the switch is kept in the user's
//! `sandbox.toml` (the one settings file the CLI reads too).

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_settings_switch_lets_sandboxed_commands_run_unasked() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call(
                "call_s1",
                "run_shell",
                json!({"command": "touch first.txt"}),
            ),
            Reply::text("Asked first."),
            Reply::tool_call(
                "call_s2",
                "run_shell",
                json!({"command": "touch second.txt"}),
            ),
            Reply::text("Ran unasked."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("switch");
    seed_recent(state.path(), &ws, json!({}));
    let env = app_env(state.path(), &server, "mock-model");
    let file = state.path().join("config/cairn/sandbox.toml");
    let w = ws.clone();
    with_app(env, move |c| async move {
        open_recent(&c).await;
        // Before: a command that writes waits for an answer (denied here).
        send(&c, "make the first file").await;
        let shell = card("run_shell", "awaiting");
        click(&c, &format!("{shell} [data-testid=approve-deny]")).await;
        wait_turns(&c, "completed", 1).await;
        assert!(!w.join("first.txt").exists());
        find(&c, "[data-testid=sandbox-pill][data-state=on]").await;

        // The switch, off by default, turned on and saved.
        click(&c, "[data-testid=open-settings]").await;
        let switch = find(&c, "[data-testid=sandboxed-unasked]").await;
        assert!(!switch.is_selected().await.unwrap(), "off by default");
        switch.click().await.unwrap();
        click(&c, "[data-testid=settings-save]").await;
        find(&c, "[data-testid=settings] .saved").await;
        let kept = std::fs::read_to_string(&file).unwrap();
        assert!(kept.contains("shellPolicy = \"sandbox\""), "{kept}");
        click(&c, "[data-testid=overlay-close]").await;

        // After: the same kind of command runs unasked, inside the sandbox.
        send(&c, "make the second file").await;
        wait_turns(&c, "completed", 2).await;
        assert!(w.join("second.txt").exists());
        assert_eq!(count(&c, "[data-testid=approval]").await, 0);
    })
    .await;
}
