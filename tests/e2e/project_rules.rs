//! E2E: "Always allow in this project" on the approval card keeps the allowance for the
//! project: a new chat of the same folder is not asked, the rule is in the user's file (not
//! the folder), Settings shows it as limited to this project, and revoking removes it.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_in_this_project_spares_the_next_chat_and_is_revoked_in_settings() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::tool_call("call_p1", "run_shell", json!({"command": "touch a.txt"})),
            Reply::text("Made a."),
            Reply::tool_call("call_p2", "run_shell", json!({"command": "touch b.txt"})),
            Reply::text("Made b."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let perms = tempfile::tempdir().unwrap();
    let file = perms.path().join("permissions.toml");
    let (_ws_dir, ws) = named_workspace("kept");
    seed_recent(state.path(), &ws, json!({}));
    let env = with_var(
        app_env(state.path(), &server, "mock-model"),
        "CAIRN_PERMISSIONS_FILE",
        Some(&file.display().to_string()),
    );
    let (w, f) = (ws.clone(), file.clone());
    with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "make a").await;
        let shell = card("run_shell", "awaiting");
        find(&c, &format!("{shell} [data-testid=approval]")).await;
        assert_eq!(
            text_of(&c, &format!("{shell} [data-testid=approve-project]")).await,
            "Always allow `touch` in this project"
        );
        click(&c, &format!("{shell} [data-testid=approve-project]")).await;
        wait_turns(&c, "completed", 1).await;
        assert!(w.join("a.txt").exists());
        let kept = std::fs::read_to_string(&f).unwrap();
        assert!(
            kept.contains("run_shell(touch:*)") && kept.contains("project ="),
            "{kept}"
        );
        assert!(!w.join(".agent/permissions.toml").exists());

        // A new chat of the folder runs the same program without asking.
        new_chat(&c).await;
        send(&c, "make b").await;
        wait_turns(&c, "completed", 1).await;
        assert!(w.join("b.txt").exists());
        assert_eq!(count(&c, "[data-testid=approval]").await, 0);

        // Settings: limited to this project; revoking removes it.
        click(&c, "[data-testid=open-settings]").await;
        let rule = "[data-testid=rule][data-project=current]";
        assert_eq!(
            text_of(&c, &format!("{rule} [data-testid=rule-project]")).await,
            "this project"
        );
        click(&c, &format!("{rule} [data-testid=rule-revoke]")).await;
        wait_js(
            &c,
            "the rule to go",
            "return document.querySelector('[data-testid=rule][data-project=current]') === null",
        )
        .await;
        let left = std::fs::read_to_string(&f).unwrap();
        assert!(!left.contains("touch"), "{left}");
    })
    .await;
}
