//! A session's MCP logins, for the faces: "Connect" (log in, then reconnect the server) and
//! the servers that need a login. Kept apart from [`crate::mcp_auth`] so the session modules
//! do not import the host (the runtime's modules form a DAG).

/// Logs in to HTTP server `name` of session `h` through `step` (a face's browser step), then
/// reconnects it so its tools appear. The error is in words.
pub async fn connect(
    h: &crate::host::SessionHandle,
    name: &str,
    step: &dyn cairn_mcp::auth::login::UserStep,
) -> Result<(), String> {
    let manager = h
        .assembled()
        .mcp
        .manager()
        .ok_or_else(|| "no MCP servers run in this chat".to_string())?;
    let url = match crate::mcp::load_config(h.workspace())
        .get(name)
        .and_then(|s| s.transport.clone())
    {
        Some(cairn_mcp::TransportConfig::Http { url, .. }) => url,
        Some(_) => return Err(format!("`{name}` is not an HTTP server: it needs no login")),
        None => return Err(format!("no MCP server named `{name}` is configured")),
    };
    let (auth, _) = crate::mcp_auth::authenticator(&crate::tooling::process_env)?;
    auth.login(&url, &cairn_mcp::auth::flow::ClientChoice::default(), step)
        .await
        .map_err(|e| format!("the login to `{name}` failed: {e}"))?;
    manager
        .refresh(name)
        .await
        .map_err(|e| format!("logged in, but `{name}` did not start: {e}"))
}

/// [`connect`] with the system browser opening the authorization page (a face's "Connect");
/// development builds take `CAIRN_TEST_BROWSER=http`: the page is followed over HTTP at the
/// OS-open boundary (E2E tests, no browser).
pub async fn connect_in_browser(h: &crate::host::SessionHandle, name: &str) -> Result<(), String> {
    use cairn_mcp::auth::redirect::{Browser, BrowserStep, HttpBrowser, SystemBrowser};
    let test_http = cfg!(debug_assertions)
        && crate::tooling::process_env("CAIRN_TEST_BROWSER").is_some_and(|v| v == "http");
    let browser: Box<dyn Browser> = if test_http {
        Box::new(HttpBrowser)
    } else {
        Box::new(SystemBrowser)
    };
    let step = BrowserStep {
        browser,
        announce: Box::new(|url| tracing::info!(%url, "MCP login: opening the authorization page")),
        within: std::time::Duration::from_secs(300),
    };
    connect(h, name, &step).await
}

/// Session `h`'s HTTP servers that failed for want of a login (name, reason in words), once
/// every server started or failed (waiting at most the startup grace the first model request
/// waits anyway); empty when no server runs.
pub async fn logins_needed(h: &crate::host::SessionHandle) -> Vec<(String, String)> {
    let Some(manager) = h.assembled().mcp.manager() else {
        return Vec::new();
    };
    // Only Streamable HTTP servers log in: without one there is nothing to wait for.
    if !manager.status().iter().any(|i| i.transport == "http") {
        return Vec::new();
    }
    manager.wait_settled(crate::mcp::startup_grace()).await;
    manager
        .status()
        .into_iter()
        .filter_map(|info| match info.status {
            cairn_mcp::ServerStatus::Failed { reason }
                if reason.contains(crate::mcp_auth::LOGIN_HINT) =>
            {
                Some((info.name, reason))
            }
            _ => None,
        })
        .collect()
}
