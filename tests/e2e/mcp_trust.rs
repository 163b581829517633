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
        // Settings fills its sections as their data arrives: on a loaded machine a section
        // above can grow between finding the button and the click landing, so a click that
        // changed nothing is given again (at most three times; the trust must then be there).
        let gone = "return document.querySelectorAll('[data-testid=mcp-trust]').length === 0";
        for attempt in 1..=3 {
            click(&c, "[data-testid=mcp-trust]").await;
            let deadline = std::time::Instant::now() + Duration::from_secs(5);
            let mut done = false;
            while !done && std::time::Instant::now() < deadline {
                done = c.execute(gone, vec![]).await.unwrap().as_bool() == Some(true);
                if !done {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
            if done || attempt == 3 {
                break;
            }
            eprintln!("the Trust click changed nothing (attempt {attempt}); clicking again");
        }
        wait_js(&c, "the trust to be recorded", gone).await;
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
