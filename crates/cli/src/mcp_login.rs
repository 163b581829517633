//! `cairn mcp login NAME` and `cairn mcp logout NAME`: OAuth logins of HTTP MCP servers. The
//! login prints the authorization URL, opens the browser and waits for the redirect on
//! 127.0.0.1; a redirect URL pasted on stdin (a browser on another machine) works too.

use std::process::ExitCode;
use std::time::Duration;

use async_trait::async_trait;
use cairn_mcp::auth::flow::ClientChoice;
use cairn_mcp::auth::login::UserStep;
use cairn_mcp::auth::redirect::{
    parse_pasted, Browser, HttpBrowser, RedirectListener, SystemBrowser,
};
use cairn_mcp::auth::AuthError;
use cairn_mcp::TransportConfig;
use clap::{Args, ValueEnum};
use url::Url;

use crate::mcp::{workspace, WorkspaceArg};

/// How the authorization URL is opened.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BrowserKind {
    /// The system browser (`xdg-open`, `open`, `start`).
    System,
    /// None: open the printed URL yourself (or paste the redirect URL back).
    None,
    /// No page: follow the authorization server's redirects over HTTP (servers that approve
    /// without a sign-in page, such as test and conformance servers).
    Http,
}

/// Options of `cairn mcp login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// Server name.
    name: String,
    #[command(flatten)]
    ws: WorkspaceArg,
    /// A client id registered with the authorization server (else dynamic registration).
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// The environment variable holding that client's secret (a confidential client).
    #[arg(long, value_name = "VAR", requires = "client_id")]
    client_secret_env: Option<String>,
    /// Scopes to ask for (space-separated) instead of the ones the server names.
    #[arg(long)]
    scope: Option<String>,
    /// How the authorization URL is opened.
    #[arg(long, value_enum, default_value = "system")]
    browser: BrowserKind,
    /// Seconds to wait for the redirect.
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    timeout: u64,
}

/// The URL of HTTP server `name`, or why not.
pub fn server_url(name: &str, ws: &WorkspaceArg) -> Result<String, String> {
    let ws = workspace(ws)?;
    let loaded = cairn_runtime::mcp::load_config(&ws);
    match loaded.get(name).and_then(|s| s.transport.as_ref()) {
        Some(TransportConfig::Http { url, .. }) => Ok(url.clone()),
        Some(_) => Err(format!(
            "`{name}` is not a Streamable HTTP server: only those log in (OAuth)"
        )),
        None => Err(format!("no MCP server named `{name}` is configured")),
    }
}

fn authenticator() -> Result<cairn_mcp::auth::Authenticator, String> {
    let (a, note) = cairn_runtime::mcp_auth::authenticator(&cairn_runtime::tooling::process_env)?;
    if let Some(n) = note {
        errln!("note: {n}");
    }
    Ok(a)
}

/// Runs `cairn mcp login`.
pub async fn login(a: LoginArgs) -> Result<ExitCode, String> {
    let url = server_url(&a.name, &a.ws)?;
    let secret = match &a.client_secret_env {
        // The sealed copy: a name like `*_SECRET` is no longer in the environment block.
        Some(var) => Some(cairn_runtime::tooling::process_env(var).ok_or_else(|| {
            format!("the environment variable {var} (the client secret) is not set")
        })?),
        None => None,
    };
    let choice = ClientChoice {
        client_id: a.client_id.clone(),
        client_secret: secret,
        scope: a.scope.clone(),
    };
    let done = log_in(
        &a.name,
        &url,
        &choice,
        a.browser,
        Duration::from_secs(a.timeout),
    )
    .await?;
    Ok(if done {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Logs in to server `name` at `url` with the terminal's user step, saying what happened;
/// `Ok(false)`: the login failed (said on stderr).
pub async fn log_in(
    name: &str,
    url: &str,
    choice: &ClientChoice,
    browser: BrowserKind,
    within: Duration,
) -> Result<bool, String> {
    let auth = authenticator()?;
    let step = CliStep { browser, within };
    match auth.login(url, choice, &step).await {
        Ok(done) if done.not_needed => {
            outln!("`{name}` needs no login: it answered without one");
            Ok(true)
        }
        Ok(done) => {
            outln!(
                "logged in to `{name}` at {}{} (kept in {})",
                done.issuer,
                done.scope
                    .map(|s| format!(", scopes: {s}"))
                    .unwrap_or_default(),
                auth.store.describe()
            );
            Ok(true)
        }
        Err(e) => {
            errln!("error: the login to `{name}` failed: {e}");
            Ok(false)
        }
    }
}

/// Whether server `url`'s kept login lacks scopes a refused call asked for (a step-up is due).
pub fn step_up_due(url: &str) -> Result<bool, String> {
    Ok(authenticator()?
        .stored(url)
        .map_err(|e| e.to_string())?
        .is_some_and(|a| a.wanted_scope.is_some()))
}

/// Runs `cairn mcp logout`.
pub async fn logout(name: &str, ws: &WorkspaceArg) -> Result<ExitCode, String> {
    let url = server_url(name, ws)?;
    match authenticator()?
        .logout(&url)
        .await
        .map_err(|e| e.to_string())?
    {
        Some(what) => outln!("`{name}`: login {what}"),
        None => outln!("`{name}`: no login was kept"),
    }
    Ok(ExitCode::SUCCESS)
}

/// After `cairn mcp remove`: the removed server's login is revoked and forgotten.
pub async fn forget(name: &str, url: &str) {
    let a = match cairn_runtime::mcp_auth::authenticator(&cairn_runtime::tooling::process_env) {
        Ok((a, _)) => a,
        Err(e) => {
            errln!("warning: could not check for a login of `{name}`: {e}");
            return;
        }
    };
    match a.logout(url).await {
        Ok(Some(what)) => outln!("`{name}`: login {what}"),
        Ok(None) => {}
        Err(e) => errln!("warning: `{name}`'s login could not be forgotten: {e}"),
    }
}

/// The terminal's part of the login: the URL on stderr, the browser, and whichever comes
/// first of the redirect and a pasted URL.
struct CliStep {
    browser: BrowserKind,
    within: Duration,
}

#[async_trait]
impl UserStep for CliStep {
    async fn authorize(&self, url: &Url, listener: RedirectListener) -> Result<Url, AuthError> {
        errln!("Open this URL to log in:\n  {url}");
        errln!(
            "Waiting for the sign-in to finish (or paste the address the browser ended on, \
             http://127.0.0.1:…/callback?…, then Enter)."
        );
        let browser: Option<Box<dyn Browser>> = match self.browser {
            BrowserKind::System => Some(Box::new(SystemBrowser)),
            BrowserKind::Http => Some(Box::new(HttpBrowser)),
            BrowserKind::None => None,
        };
        let open = async {
            if let Some(b) = browser {
                if let Err(e) = b.open(url).await {
                    errln!("(could not open a browser: {e}; open the URL yourself)");
                }
            }
            std::future::pending::<Result<Url, AuthError>>().await
        };
        tokio::select! {
            got = listener.wait(self.within) => got,
            pasted = pasted_line() => parse_pasted(&pasted),
            never = open => never,
        }
    }
}

/// The first non-empty line on stdin; never completes when stdin ends first. A thread of its
/// own: a blocking read must not hold the runtime's shutdown.
async fn pasted_line() -> String {
    let (tx, rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        loop {
            line.clear();
            match std::io::stdin().read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) if line.trim().is_empty() => continue,
                Ok(_) => {
                    let _ = tx.send(line);
                    return;
                }
            }
        }
    });
    match rx.await {
        Ok(line) => line,
        Err(_) => std::future::pending().await,
    }
}
