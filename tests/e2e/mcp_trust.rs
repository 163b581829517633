//! E2E: a project's MCP server does not start until the user trusts it in Settings; once
//! trusted, it starts with the next chat.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_mcp_server_starts_only_after_trust_in_settings() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![
            Reply::text("First answer."),
            Reply::text("Second answer."),
        ])
        .await
        .unwrap(),
    );
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("cloned-repo");
    let started = ws.join("MCP-STARTED");
    std::fs::create_dir_all(ws.join(".agent")).unwrap();
    std::fs::write(
        ws.join(".agent/mcp.json"),
        json!({"mcpServers": {"probe": {"command": "sh", "args": ["-c", format!("touch '{}'; sleep 30", started.display())]}}})
            .to_string(),
    )
    .unwrap();
    seed_recent(state.path(), &ws, json!({}));
    let trust_file = state.path().join("mcp-trust.json");
    let mut env = app_env(state.path(), &server, "mock-model");
    env.push(("CAIRN_MCP_TRUST".into(), trust_file.display().to_string()));
    env.push((
        "CAIRN_MCP_CONFIG".into(),
        state.path().join("no-user-mcp.json").display().to_string(),
    ));
    env.push(("CAIRN_MCP_STARTUP_GRACE_MS".into(), "500".into()));
    let (marker, trust) = (started.clone(), trust_file.clone());
    with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "hello").await;
        wait_turns(&c, "completed", 1).await;
        assert!(!marker.exists(), "an untrusted project server started");

        click(&c, "[data-testid=open-settings]").await;
        click(&c, "[data-testid=mcp-trust]").await;
        wait_js(
            &c,
            "the trust to be recorded",
            "return document.querySelectorAll('[data-testid=mcp-trust]').length === 0",
        )
        .await;
        click(&c, "[data-testid=overlay-close]").await;
        assert!(std::fs::read_to_string(&trust).unwrap().contains("probe"));

        // The next chat starts it.
        click(&c, "[data-testid=new-chat]").await;
        send(&c, "again").await;
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !marker.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the trusted server never started"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
}
