//! The HTTP client shared by the web tools: timeouts, redirect limit, proxy (`SOCKS5_PROXY`).

use std::time::Duration;

/// Why a web tool could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The proxy setting is not a usable URL.
    #[error("invalid proxy `{proxy}`: {message}")]
    Proxy {
        /// The proxy as configured.
        proxy: String,
        /// What is wrong with it.
        message: String,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    /// The search configuration is incomplete.
    #[error("web search is misconfigured: {0}")]
    Config(String),
}

/// Connection settings of the web tools.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Time allowed to connect.
    pub connect_timeout: Duration,
    /// SOCKS5 proxy for every request (`host:port` or a `socks5://`/`socks5h://` URL).
    pub socks5_proxy: Option<String>,
    /// Also honour the usual `HTTP(S)_PROXY` / `NO_PROXY` variables.
    pub system_proxy: bool,
    /// User-Agent header.
    pub user_agent: String,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            connect_timeout: Duration::from_secs(10),
            socks5_proxy: None,
            system_proxy: true,
            user_agent: format!("Cairn/{} (+coding agent)", env!("CARGO_PKG_VERSION")),
        }
    }
}

impl HttpConfig {
    /// Defaults, with `SOCKS5_PROXY` from the environment.
    pub fn from_env() -> Self {
        HttpConfig {
            socks5_proxy: std::env::var("SOCKS5_PROXY")
                .ok()
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty()),
            ..HttpConfig::default()
        }
    }

    /// The proxy URL reqwest gets: DNS resolved through the proxy unless a scheme says otherwise.
    pub fn socks5_url(&self) -> Option<String> {
        let p = self.socks5_proxy.as_deref()?;
        Some(if p.contains("://") {
            p.to_string()
        } else {
            format!("socks5h://{p}")
        })
    }

    /// Builds a client following at most `max_redirects` redirects.
    pub fn client(&self, max_redirects: usize) -> Result<reqwest::Client, WebError> {
        self.builder()?
            .redirect(reqwest::redirect::Policy::limited(max_redirects))
            .build()
            .map_err(|e| WebError::Client(e.to_string()))
    }

    /// Whether a proxy that resolves host names itself may carry requests: `socks5h` (the
    /// default for `SOCKS5_PROXY`) or, when honoured, one of the `*_PROXY` variables.
    pub(crate) fn proxied(&self) -> bool {
        let socks_resolves = self
            .socks5_url()
            .is_some_and(|u| !u.starts_with("socks5://") && !u.starts_with("socks4://"));
        let system = self.system_proxy
            && [
                "http_proxy",
                "HTTP_PROXY",
                "https_proxy",
                "HTTPS_PROXY",
                "all_proxy",
                "ALL_PROXY",
            ]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()));
        socks_resolves || system
    }

    /// A client builder with these settings (timeouts, user agent, proxy), before redirects.
    pub(crate) fn builder(&self) -> Result<reqwest::ClientBuilder, WebError> {
        let mut b = reqwest::Client::builder()
            .connect_timeout(self.connect_timeout)
            .user_agent(self.user_agent.clone());
        if !self.system_proxy {
            b = b.no_proxy();
        }
        if let Some(url) = self.socks5_url() {
            let proxy = reqwest::Proxy::all(&url).map_err(|e| WebError::Proxy {
                proxy: url.clone(),
                message: e.to_string(),
            })?;
            b = b.proxy(proxy);
        }
        Ok(b)
    }
}

/// A reqwest error in words, without the URL's query (it may carry secrets).
pub(crate) fn describe(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else if e.is_redirect() {
        "too many redirects (the site may be in a redirect loop)"
    } else if e.is_body() || e.is_decode() {
        "the response body could not be read"
    } else {
        "request failed"
    };
    let mut source = std::error::Error::source(e);
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    if detail.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {detail}")
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn socks5_proxy_gets_a_scheme() {
        let c = HttpConfig {
            socks5_proxy: Some("127.0.0.1:1080".into()),
            ..HttpConfig::default()
        };
        assert_eq!(c.socks5_url().unwrap(), "socks5h://127.0.0.1:1080");
        assert!(c.client(5).is_ok());
        let c = HttpConfig {
            socks5_proxy: Some("socks5://h:1".into()),
            ..HttpConfig::default()
        };
        assert_eq!(c.socks5_url().unwrap(), "socks5://h:1");
    }
}
