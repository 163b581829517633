//! HTTP for the login, behind [`AuthHttp`], and the rule for where it may go: HTTPS except on
//! loopback, and no address on this machine or its local network (cloud metadata, LAN hosts)
//! unless the MCP server itself is there. The classification is `web_fetch`'s
//! (`cairn_policy::net`); names are resolved before connecting and the connection is pinned
//! to the addresses checked. Redirects are never followed.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use async_trait::async_trait;
use url::Url;

use super::AuthError;

/// One request of the login.
#[derive(Clone)]
pub struct AuthRequest {
    /// `GET` or `POST`.
    pub post: bool,
    /// Where.
    pub url: Url,
    /// Headers (name, value); values may be secret and are never logged.
    pub headers: Vec<(String, String)>,
    /// The body, when posting.
    pub body: Option<Vec<u8>>,
}

impl std::fmt::Debug for AuthRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The URL only: headers and bodies carry secrets (codes, verifiers, tokens).
        write!(f, "{} {}", if self.post { "POST" } else { "GET" }, self.url)
    }
}

impl AuthRequest {
    /// A `GET` asking for JSON.
    pub fn get(url: Url) -> AuthRequest {
        AuthRequest {
            post: false,
            url,
            headers: vec![("Accept".into(), "application/json".into())],
            body: None,
        }
    }

    /// A form `POST` (`application/x-www-form-urlencoded`).
    pub fn form(url: Url, fields: &[(&str, &str)]) -> AuthRequest {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        AuthRequest {
            post: true,
            url,
            headers: vec![
                (
                    "Content-Type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
                ("Accept".into(), "application/json".into()),
            ],
            body: Some(body.into_bytes()),
        }
    }

    /// A JSON `POST`.
    pub fn json(url: Url, value: &serde_json::Value) -> AuthRequest {
        AuthRequest {
            post: true,
            url,
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                (
                    "Accept".into(),
                    "application/json, text/event-stream".into(),
                ),
            ],
            body: Some(value.to_string().into_bytes()),
        }
    }

    /// Adds a header.
    pub fn header(mut self, name: &str, value: &str) -> AuthRequest {
        self.headers.push((name.into(), value.into()));
        self
    }
}

/// An answer.
#[derive(Debug, Clone)]
pub struct AuthReply {
    /// HTTP status.
    pub status: u16,
    /// `WWW-Authenticate`, when present.
    pub www_authenticate: Option<String>,
    /// `Location`, when present.
    pub location: Option<String>,
    /// `Mcp-Session-Id`, when present.
    pub session_id: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

impl AuthReply {
    /// The body as JSON, or why not.
    pub fn json(&self, what: &str) -> Result<serde_json::Value, AuthError> {
        serde_json::from_slice(&self.body)
            .map_err(|_| AuthError::Discovery(format!("{what} is not JSON (HTTP {})", self.status)))
    }
}

/// Sends the login's requests (reqwest with the address rule; a fake in tests).
#[async_trait]
pub trait AuthHttp: Send + Sync {
    /// Sends `req` after checking it against the rule for `server` (the MCP server's URL).
    async fn send(&self, req: AuthRequest, server: &Url) -> Result<AuthReply, AuthError>;
}

/// Whether `url` names this machine (127.0.0.0/8, ::1, `localhost`).
pub fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Checks `url`'s text: HTTPS unless loopback; a local or LAN address only when the MCP
/// server is on that same host (or both are on this machine).
pub fn check_url(url: &Url, server: &Url) -> Result<(), AuthError> {
    match url.scheme() {
        "https" => {}
        "http" if is_loopback(url) => {}
        _ => {
            return Err(AuthError::Refused(format!(
                "refused {url}: the login uses HTTPS only (plain HTTP only on this machine)"
            )))
        }
    }
    if let Some(host) = cairn_policy::net::local_address(url.as_str()) {
        if !same_place(url, server) {
            return Err(AuthError::Refused(format!(
                "refused {url}: it is on this machine or its local network ({host}), and the \
                 MCP server is not"
            )));
        }
    }
    Ok(())
}

/// Whether a local `url` is allowed because the server is there too.
fn same_place(url: &Url, server: &Url) -> bool {
    url.host_str() == server.host_str() || (is_loopback(url) && is_loopback(server))
}

/// The rule applied to resolved addresses: a name may lead to a local address only when the
/// server is on that host.
pub fn check_addresses(url: &Url, server: &Url, ips: &[IpAddr]) -> Result<(), AuthError> {
    if same_place(url, server) {
        return Ok(());
    }
    match ips.iter().find(|ip| cairn_policy::net::local_ip(**ip)) {
        Some(ip) => Err(AuthError::Refused(format!(
            "refused {url}: {} resolves to {ip}, an address on this machine or its local network",
            url.host_str().unwrap_or("")
        ))),
        None => Ok(()),
    }
}

/// The real client: reqwest, the address rule, no redirects, a 30 s limit per request.
#[derive(Debug, Default, Clone, Copy)]
pub struct ReqwestAuthHttp;

/// Largest body read from any login endpoint.
const MAX_BODY: usize = 1024 * 1024;

#[async_trait]
impl AuthHttp for ReqwestAuthHttp {
    async fn send(&self, req: AuthRequest, server: &Url) -> Result<AuthReply, AuthError> {
        check_url(&req.url, server)?;
        let mut builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30));
        if let Some(url::Host::Domain(d)) = req.url.host() {
            let ips: Vec<IpAddr> = tokio::net::lookup_host((d, 0))
                .await
                .map_err(|e| AuthError::Server(format!("could not resolve {d}: {e}")))?
                .map(|a| a.ip())
                .collect();
            check_addresses(&req.url, server, &ips)?;
            let addrs: Vec<SocketAddr> = ips.into_iter().map(|ip| SocketAddr::new(ip, 0)).collect();
            builder = builder.resolve_to_addrs(d, &addrs);
        }
        let client = builder
            .build()
            .map_err(|e| AuthError::Server(format!("cannot set up HTTP: {e}")))?;
        let mut r = if req.post {
            client.post(req.url.clone())
        } else {
            client.get(req.url.clone())
        };
        for (k, v) in &req.headers {
            r = r.header(k, v);
        }
        if let Some(b) = req.body {
            r = r.body(b);
        }
        let resp = r
            .send()
            .await
            .map_err(|e| AuthError::Server(format!("{} failed: {}", req.url, without_url(&e))))?;
        let header = |name: reqwest::header::HeaderName| {
            resp.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let status = resp.status().as_u16();
        let www_authenticate = header(reqwest::header::WWW_AUTHENTICATE);
        let location = header(reqwest::header::LOCATION);
        let session_id = header(reqwest::header::HeaderName::from_static("mcp-session-id"));
        let mut body = Vec::new();
        let mut resp = resp;
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| AuthError::Server(format!("{}: {}", req.url, without_url(&e))))?
        {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(AuthError::Server(format!(
                    "{}: the answer is larger than 1 MB",
                    req.url
                )));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(AuthReply {
            status,
            www_authenticate,
            location,
            session_id,
            body,
        })
    }
}

/// A reqwest error in words, without its URL (said once by the caller).
fn without_url(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    if let Some(u) = e.url() {
        s = s.replace(&format!(" ({u})"), "").replace(u.as_str(), "");
    }
    if e.is_timeout() {
        "no answer within 30 s".into()
    } else if e.is_connect() {
        "could not connect".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn u(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn the_address_rule() {
        let remote = u("https://mcp.example.com/mcp");
        let local = u("http://127.0.0.1:4000/mcp");
        assert!(check_url(&u("https://auth.example.com/x"), &remote).is_ok());
        assert!(check_url(&u("http://auth.example.com/x"), &remote).is_err());
        assert!(check_url(&u("http://169.254.169.254/latest"), &remote).is_err());
        assert!(check_url(&u("http://169.254.169.254/latest"), &local).is_err());
        assert!(check_url(&u("https://192.168.1.4/x"), &remote).is_err());
        assert!(check_url(&u("http://127.0.0.1:5000/x"), &remote).is_err());
        assert!(check_url(&u("http://127.0.0.1:5000/x"), &local).is_ok());
        assert!(check_url(&u("http://localhost:5000/x"), &local).is_ok());
        let lan = u("https://10.0.0.5/mcp");
        assert!(check_url(&u("https://10.0.0.5/.well-known/x"), &lan).is_ok());
        assert!(check_url(&u("https://10.0.0.6/x"), &lan).is_err());
        let ip: IpAddr = "169.254.169.254".parse().unwrap();
        assert!(check_addresses(&u("https://evil.example/x"), &remote, &[ip]).is_err());
        let public: IpAddr = "93.184.216.34".parse().unwrap();
        assert!(check_addresses(&u("https://ok.example/x"), &remote, &[public]).is_ok());
    }
}
