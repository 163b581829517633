//! Where MCP logins are kept for both faces: the OS keyring (the entries of
//! `cairn_secrets`), or where there is none (a headless machine, `CAIRN_KEYSTORE=memory` in
//! tests) the encrypted file `<config dir>/cairn/mcp-logins.enc`, whose key is
//! `<data dir>/cairn/mcp-logins.key` (two folders, so a copy of the config folder alone
//! reveals nothing). The fallback is said once per process.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cairn_mcp::auth::net::ReqwestAuthHttp;
use cairn_mcp::auth::store::{choose, EncryptedFileTokens};
use cairn_mcp::auth::{Authenticator, SystemEnv};
use cairn_secrets::KeyStore;

use crate::llm_setup::EnvFn;

static SAID: AtomicBool = AtomicBool::new(false);

/// The encrypted token file and its key file.
pub fn token_files() -> Option<(PathBuf, PathBuf)> {
    let config = crate::reserved::config_dir()?;
    let data = dirs::data_dir()
        .map(|d| d.join("cairn"))
        .unwrap_or_else(|| config.join("keys"));
    Some((config.join("mcp-logins.enc"), data.join("mcp-logins.key")))
}

/// The authenticator for this process, and (the first time only) a sentence saying that the
/// encrypted file is used instead of the keyring.
pub fn authenticator(env: &EnvFn) -> Result<(Authenticator, Option<String>), String> {
    let (file, key) = token_files()
        .ok_or_else(|| "no config folder on this system for MCP logins".to_string())?;
    let envr = Arc::new(SystemEnv);
    let keyring: Option<Arc<dyn KeyStore>> = if env("CAIRN_KEYSTORE").as_deref() == Some("memory") {
        None
    } else {
        Some(crate::keys::key_store_from_env(env))
    };
    let (store, note) = choose(keyring, EncryptedFileTokens::new(file, key, envr.clone()));
    let note = note.filter(|_| !SAID.swap(true, Ordering::SeqCst));
    if let Some(n) = &note {
        tracing::info!("{n}");
    }
    Ok((
        Authenticator {
            http: Arc::new(ReqwestAuthHttp),
            env: envr,
            store,
        },
        note,
    ))
}

/// The words every "needs a login" failure of a server ends with (before the name).
pub const LOGIN_HINT: &str = "run `cairn mcp login ";

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
    let (auth, _) = authenticator(&crate::tooling::process_env)?;
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
            cairn_mcp::ServerStatus::Failed { reason } if reason.contains(LOGIN_HINT) => {
                Some((info.name, reason))
            }
            _ => None,
        })
        .collect()
}
