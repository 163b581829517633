//! E2E: an HTTP MCP server behind an OAuth login (the testkit authorization server on
//! 127.0.0.1) shows "Connect" in Settings; the click completes the login (the browser step
//! faked at the OS-open boundary: `CAIRN_TEST_BROWSER=http` follows the authorization page
//! over HTTP) and the server's tools appear.

use super::*;

use cairn_testkit::oauth::{OAuthFaults, OAuthServer};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_in_settings_logs_in_and_the_tools_appear() {
    let server = Arc::new(
        MockLlmServer::with_script(vec![Reply::text("First answer.")])
            .await
            .unwrap(),
    );
    let svc = cairn_mcp::testing::http_service(cairn_mcp::testing::Faults::default());
    let oauth = OAuthServer::start(
        OAuthFaults::default(),
        axum::Router::new().route_service("/", svc),
    )
    .await
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let (_ws_dir, ws) = named_workspace("hosted-mcp");
    seed_recent(state.path(), &ws, json!({}));
    // The user's own file: no trust needed.
    let user_mcp = state.path().join("user-mcp.json");
    std::fs::write(
        &user_mcp,
        json!({"mcpServers": {"hosted": {"type": "http", "url": oauth.mcp_url()}}}).to_string(),
    )
    .unwrap();
    let mut env = app_env(state.path(), &server, "mock-model");
    env.push(("CAIRN_MCP_CONFIG".into(), user_mcp.display().to_string()));
    env.push((
        "XDG_DATA_HOME".into(),
        state.path().join("data").display().to_string(),
    ));
    env.push(("CAIRN_TEST_BROWSER".into(), "http".into()));
    env.push(("CAIRN_MCP_STARTUP_GRACE_MS".into(), "2000".into()));
    let issued = oauth.clone();
    with_app(env, move |c| async move {
        open_recent(&c).await;
        send(&c, "hello").await;
        wait_turns(&c, "completed", 1).await;

        click(&c, "[data-testid=open-settings]").await;
        wait_css(&c, "[data-testid=mcp-connect]").await;
        click(&c, "[data-testid=mcp-connect]").await;
        let ready = "return [...document.querySelectorAll('.rule')].some(r => \
                     r.textContent.includes('hosted') && r.textContent.includes('ready · '))";
        let settled = "return [...document.querySelectorAll('.rule')].some(r => \
                       r.textContent.includes('hosted') && r.textContent.includes('ready · ')) \
                       || document.querySelector('[data-testid=settings-error]') !== null";
        wait_js(&c, "the login to finish", settled).await;
        let error: Option<String> = c
            .execute(
                "const e = document.querySelector('[data-testid=settings-error]'); \
                 return e ? e.textContent : null",
                vec![],
            )
            .await
            .unwrap()
            .as_str()
            .map(str::to_string);
        assert_eq!(error, None, "the Connect click failed");
        wait_js(&c, "the server to be ready after the login", ready).await;
        assert_eq!(count(&c, "[data-testid=mcp-connect]").await, 0);
        assert!(!issued.issued().is_empty(), "no token was issued");
    })
    .await;
}
