//! The browser step: opening the authorization URL ([`Browser`]) and catching the redirect on
//! a one-shot listener bound to 127.0.0.1 on a random port, or reading a pasted redirect URL.

use std::time::Duration;

use async_trait::async_trait;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

use super::AuthError;

/// Opens the authorization URL (the system browser; tests drive it over HTTP).
#[async_trait]
pub trait Browser: Send + Sync {
    /// Opens `url`; an error means the user must open it themselves.
    async fn open(&self, url: &Url) -> Result<(), String>;
}

/// The system browser: `xdg-open` / `open` / `start`.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemBrowser;

#[async_trait]
impl Browser for SystemBrowser {
    async fn open(&self, url: &Url) -> Result<(), String> {
        let (program, args) = opener(url);
        let status = tokio::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .await
            .map_err(|e| format!("cannot run {program}: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("{program} failed ({status})"))
        }
    }
}

/// The system's opener for `url`: `xdg-open` / `open` / `start`.
fn opener(url: &Url) -> (&'static str, Vec<&str>) {
    if cfg!(target_os = "macos") {
        ("open", vec![url.as_str()])
    } else if cfg!(windows) {
        ("cmd", vec!["/C", "start", "", url.as_str()])
    } else {
        ("xdg-open", vec![url.as_str()])
    }
}

/// Opens an http(s) page a server asked the user to visit (an elicitation in URL mode), in
/// the system browser, without waiting for it; anything but http(s) is refused.
pub fn open_web_page(url: &str) -> Result<(), String> {
    let url = Url::parse(url).map_err(|e| format!("not a valid address ({e})"))?;
    if !matches!(url.scheme(), "https" | "http") {
        return Err(format!(
            "only http(s) pages are opened, not {}:",
            url.scheme()
        ));
    }
    let (program, args) = opener(&url);
    std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("cannot run {program}: {e}"))
}

/// The path the redirect comes back to.
pub const CALLBACK_PATH: &str = "/callback";

/// A listener on 127.0.0.1 that takes exactly one redirect.
pub struct RedirectListener {
    listener: TcpListener,
    uri: String,
}

impl RedirectListener {
    /// Binds 127.0.0.1 on a port the system picks.
    pub async fn bind() -> Result<RedirectListener, AuthError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| AuthError::Redirect(format!("cannot listen on 127.0.0.1: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| AuthError::Redirect(format!("cannot listen on 127.0.0.1: {e}")))?
            .port();
        Ok(RedirectListener {
            listener,
            uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// The `redirect_uri` to register and send.
    pub fn redirect_uri(&self) -> &str {
        &self.uri
    }

    /// Waits up to `within` for the redirect, answers the browser, and closes: other paths get
    /// a 404 and the wait goes on.
    pub async fn wait(self, within: Duration) -> Result<Url, AuthError> {
        let base =
            Url::parse(&self.uri).map_err(|_| AuthError::Redirect("bad redirect URI".into()))?;
        let work = async {
            loop {
                let (mut sock, _) = self.listener.accept().await.map_err(|e| {
                    AuthError::Redirect(format!("the redirect listener failed: {e}"))
                })?;
                let Some(target) = read_target(&mut sock).await else {
                    continue;
                };
                let Ok(url) = base.join(&target) else {
                    let _ = respond(&mut sock, 400, "Bad request").await;
                    continue;
                };
                if url.path() != CALLBACK_PATH {
                    let _ = respond(&mut sock, 404, "Not found").await;
                    continue;
                }
                let _ = respond(
                    &mut sock,
                    200,
                    "Cairn got the answer from the sign-in page. You can close this tab.",
                )
                .await;
                return Ok(url);
            }
        };
        match tokio::time::timeout(within, work).await {
            Ok(r) => r,
            Err(_) => Err(AuthError::Redirect(format!(
                "no redirect came back within {} s",
                within.as_secs()
            ))),
        }
    }
}

/// The request target of an HTTP request head (the first line's second word).
async fn read_target(sock: &mut tokio::net::TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
        let n = tokio::time::timeout(Duration::from_secs(5), sock.read(&mut chunk))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf);
    let line = head.lines().next()?;
    let mut words = line.split(' ');
    let method = words.next()?;
    let target = words.next()?;
    (method == "GET" && target.starts_with('/')).then(|| target.to_string())
}

async fn respond(sock: &mut tokio::net::TcpStream, status: u16, text: &str) -> std::io::Result<()> {
    let body = format!("<!doctype html><meta charset=utf-8><title>Cairn</title><p>{text}</p>");
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    sock.write_all(head.as_bytes()).await?;
    sock.write_all(body.as_bytes()).await?;
    sock.shutdown().await
}

/// A redirect URL the user pasted (from a browser on another machine).
pub fn parse_pasted(text: &str) -> Result<Url, AuthError> {
    Url::parse(text.trim()).map_err(|_| {
        AuthError::Redirect(
            "that is not a URL: paste the whole address the browser ended on \
             (http://127.0.0.1:…/callback?code=…)"
                .into(),
        )
    })
}

/// Follows `url`'s redirects (no page is rendered, nothing is clicked) until one points at a
/// redirect listener (`http://127.0.0.1:PORT/callback`), and returns that URL: the headless
/// browser step for authorization servers that approve at once (test and conformance servers).
pub async fn follow_to_callback(url: &Url) -> Result<Url, AuthError> {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| AuthError::Redirect(format!("cannot set up HTTP: {e}")))?;
    let mut at = url.clone();
    for _ in 0..10 {
        let resp = client
            .get(at.clone())
            .send()
            .await
            .map_err(|_| AuthError::Redirect(format!("{at} did not answer")))?;
        let status = resp.status();
        let Some(loc) = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
        else {
            return Err(AuthError::Redirect(format!(
                "the authorization page {at} answered HTTP {} without redirecting back",
                status.as_u16()
            )));
        };
        let next = at
            .join(loc)
            .map_err(|_| AuthError::Redirect(format!("{at} redirected to a bad URL")))?;
        if next.host_str() == Some("127.0.0.1") && next.path() == CALLBACK_PATH {
            return Ok(next);
        }
        at = next;
    }
    Err(AuthError::Redirect("too many redirects".into()))
}

/// A [`Browser`] without a screen: follows the redirects itself and delivers the last one to
/// the listener (for authorization servers that approve at once).
#[derive(Debug, Default, Clone, Copy)]
pub struct HttpBrowser;

#[async_trait]
impl Browser for HttpBrowser {
    async fn open(&self, url: &Url) -> Result<(), String> {
        let last = follow_to_callback(url).await.map_err(|e| e.to_string())?;
        reqwest::get(last.clone())
            .await
            .map(|_| ())
            .map_err(|_| "could not deliver the redirect to the listener".to_string())
    }
}

/// The usual [`super::login::UserStep`]: `announce` shows the URL, the browser opens it, and
/// the listener waits up to `within`.
pub struct BrowserStep<B: Browser> {
    /// Opens the URL.
    pub browser: B,
    /// Shows the URL to the user (always, in case the browser does not open).
    pub announce: Box<dyn Fn(&Url) + Send + Sync>,
    /// How long to wait for the redirect.
    pub within: Duration,
}

#[async_trait]
impl<B: Browser> super::login::UserStep for BrowserStep<B> {
    async fn authorize(&self, url: &Url, listener: RedirectListener) -> Result<Url, AuthError> {
        (self.announce)(url);
        // Both at once: a browser that delivers the redirect itself needs the listener up.
        let open = async {
            if let Err(e) = self.browser.open(url).await {
                tracing::info!("MCP login: could not open a browser: {e}");
            }
        };
        let ((), got) = tokio::join!(open, listener.wait(self.within));
        got
    }
}

#[async_trait]
impl Browser for Box<dyn Browser> {
    async fn open(&self, url: &Url) -> Result<(), String> {
        (**self).open(url).await
    }
}
