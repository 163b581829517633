//! The HTTP side shared by every client: building the reqwest client (timeouts, headers,
//! `SOCKS5_PROXY`) and POSTing one streaming request with its failure classified.

use std::time::Duration;

use cairn_engine::{LlmOutcome, OutcomeStatus};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT};

use crate::classify::{
    display_base, outcome_for_http, outcome_for_transport, parse_retry_after, HttpFailure,
};
use crate::error::ProviderError;
use crate::redact::Redactor;

/// Most bytes of an error body that are read.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Why a POST did not produce a streamable response.
pub(crate) enum Failure {
    /// The server answered with an error status.
    Http(HttpFailure),
    /// No usable answer (timeout, network); already an outcome.
    Outcome(LlmOutcome),
}

/// How a request authenticates.
#[derive(Clone)]
pub(crate) enum Auth {
    /// No credential (local servers).
    None,
    /// `Authorization: Bearer <key>`.
    Bearer(String),
    /// A header carrying the key (Anthropic's `x-api-key`).
    Header(&'static str, String),
}

impl Auth {
    /// Whether a credential is sent.
    pub(crate) fn is_some(&self) -> bool {
        !matches!(self, Auth::None)
    }

    /// The credential, for the redactor.
    pub(crate) fn secret(&self) -> Option<&str> {
        match self {
            Auth::None => None,
            Auth::Bearer(k) | Auth::Header(_, k) => Some(k),
        }
    }
}

/// Whether a header carries a credential (its value is then scrubbed from messages).
pub(crate) fn is_secret_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    ["key", "auth", "token", "secret", "cookie"]
        .iter()
        .any(|w| n.contains(w))
}

/// Normalises a `SOCKS5_PROXY` value: `host:port` becomes `socks5h://host:port` (names
/// resolved by the proxy), URLs with a `socks5`/`socks5h` scheme are kept.
pub(crate) fn socks_proxy_url(value: &str) -> Result<String, ProviderError> {
    let v = value.trim();
    let url = if v.contains("://") {
        v.to_string()
    } else {
        format!("socks5h://{v}")
    };
    let parsed = reqwest::Url::parse(&url).map_err(|_| {
        ProviderError::InvalidConfig("SOCKS5_PROXY must be `host:port` or a socks5:// URL".into())
    })?;
    if !matches!(parsed.scheme(), "socks5" | "socks5h") || parsed.host_str().is_none() {
        return Err(ProviderError::InvalidConfig(format!(
            "SOCKS5_PROXY must be a socks5:// or socks5h:// URL with a host, not `{}`",
            display_base(&url)
        )));
    }
    Ok(url)
}

/// What a [`Transport`] is built from.
pub(crate) struct TransportConfig<'a> {
    pub base_url: &'a str,
    pub request_timeout: Duration,
    pub extra_headers: &'a [(String, String)],
    pub proxy: Option<&'a str>,
    pub auth: Auth,
}

/// A reqwest client bound to one endpoint and credential.
/// `builder` with the process's one TLS set-up: what reqwest builds for each client itself
/// (system roots, HTTP/2 and 1.1 offered, names and certificates verified), built once. Each
/// session's client loaded the system's certificates again, about 0.9 MiB apiece. When it
/// cannot be built the client builds its own, as before.
pub(crate) fn with_shared_tls(builder: reqwest::ClientBuilder) -> reqwest::ClientBuilder {
    static TLS: std::sync::OnceLock<Option<native_tls::TlsConnector>> = std::sync::OnceLock::new();
    let tls = TLS.get_or_init(|| {
        match native_tls::TlsConnector::builder()
            .request_alpns(&["h2", "http/1.1"])
            .build()
        {
            Ok(tls) => Some(tls),
            Err(e) => {
                tracing::warn!(
                    "cannot build the shared TLS set-up ({e}); each client builds its own"
                );
                None
            }
        }
    });
    match tls {
        Some(tls) => builder.tls_backend_preconfigured(tls.clone()),
        None => builder,
    }
}

pub(crate) struct Transport {
    http: reqwest::Client,
    base: String,
    request_timeout: Duration,
    auth: Auth,
    redactor: Redactor,
    /// The SOCKS5 proxy in use, credentials removed, for messages.
    proxy: Option<String>,
}

impl Transport {
    /// Builds the client; fails on a bad base URL, header or proxy.
    pub(crate) fn new(cfg: TransportConfig<'_>) -> Result<Transport, ProviderError> {
        let base = cfg.base_url.trim().trim_end_matches('/').to_string();
        const EXAMPLE: &str = "e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1";
        // The text itself is not repeated: it may hold a key pasted by mistake.
        let url = reqwest::Url::parse(&base).map_err(|e| {
            ProviderError::InvalidConfig(format!(
                "the base URL is not a full URL ({e}); write it with its scheme, {EXAMPLE}"
            ))
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ProviderError::InvalidConfig(format!(
                "the base URL must start with http:// or https:// (it starts with `{}:`), {EXAMPLE}",
                url.scheme()
            )));
        }
        let mut headers = HeaderMap::new();
        for (k, v) in cfg.extra_headers {
            let name = HeaderName::from_bytes(k.as_bytes())
                .map_err(|_| ProviderError::InvalidConfig(format!("invalid header name `{k}`")))?;
            let mut value = HeaderValue::from_str(v).map_err(|_| {
                ProviderError::InvalidConfig(format!("invalid value for header `{k}`"))
            })?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let mut builder = with_shared_tls(reqwest::Client::builder())
            .connect_timeout(cfg.request_timeout)
            .default_headers(headers)
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")));
        let mut proxy_shown = None;
        if let Some(p) = cfg.proxy.filter(|p| !p.trim().is_empty()) {
            let url = socks_proxy_url(p)?;
            proxy_shown = Some(display_base(&url));
            let proxy = reqwest::Proxy::all(&url).map_err(|_| {
                ProviderError::InvalidConfig(format!(
                    "unusable SOCKS5_PROXY `{}`",
                    display_base(&url)
                ))
            })?;
            builder = builder.proxy(proxy);
        }
        let http = builder.build()?;
        let secret_headers = cfg
            .extra_headers
            .iter()
            .filter(|(k, _)| is_secret_header(k))
            .map(|(_, v)| v.as_str());
        let redactor = Redactor::new(cfg.auth.secret().into_iter().chain(secret_headers));
        Ok(Transport {
            http,
            base,
            request_timeout: cfg.request_timeout,
            auth: cfg.auth,
            redactor,
            proxy: proxy_shown,
        })
    }

    /// The redactor that knows this transport's secrets.
    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// POSTs a streaming request to `{base}/{path}`; a non-2xx answer comes back with its
    /// body read (bounded), any other failure as an outcome.
    pub(crate) async fn post(
        &self,
        path: &str,
        body: &serde_json::Value,
        headers: &[(&'static str, &str)],
        req_id: &str,
    ) -> Result<reqwest::Response, Failure> {
        let url = format!("{}/{path}", self.base);
        tracing::debug!(req_id, url = %display_base(&url), model = %body["model"], "sending LLM request");
        let mut rb = self
            .http
            .post(&url)
            .header(ACCEPT, "text/event-stream")
            .json(body);
        for (k, v) in headers {
            rb = rb.header(*k, *v);
        }
        rb = match &self.auth {
            Auth::None => rb,
            Auth::Bearer(key) => rb.bearer_auth(key),
            Auth::Header(name, key) => match HeaderValue::from_str(key) {
                Ok(mut v) => {
                    v.set_sensitive(true);
                    rb.header(*name, v)
                }
                Err(_) => {
                    return Err(Failure::Outcome(LlmOutcome::new(
                        OutcomeStatus::Auth,
                        Some(
                            "the configured API key contains characters a header cannot carry"
                                .into(),
                        ),
                    )))
                }
            },
        };
        let resp = match tokio::time::timeout(self.request_timeout, rb.send()).await {
            Err(_) => {
                return Err(Failure::Outcome(LlmOutcome::new(
                    OutcomeStatus::Timeout,
                    Some(format!(
                        "no response from {} within {} ms",
                        display_base(&self.base),
                        self.request_timeout.as_millis()
                    )),
                )))
            }
            Ok(Err(e)) => {
                return Err(Failure::Outcome(outcome_for_transport(
                    &e,
                    &self.base,
                    self.proxy.as_deref(),
                    &self.redactor,
                )))
            }
            Ok(Ok(resp)) => resp,
        };
        if resp.status().is_success() {
            return Ok(resp);
        }
        let status = resp.status().as_u16();
        let retry_after = parse_retry_after(resp.headers());
        let body = tokio::time::timeout(self.request_timeout, read_limited(resp))
            .await
            .unwrap_or_default();
        tracing::debug!(req_id, status, "LLM request rejected");
        Err(Failure::Http(HttpFailure {
            status,
            retry_after,
            body,
        }))
    }

    /// The outcome of a failed POST.
    pub(crate) fn outcome(&self, f: Failure) -> LlmOutcome {
        match f {
            Failure::Http(h) => {
                outcome_for_http(&h, &self.base, self.auth.is_some(), &self.redactor)
            }
            Failure::Outcome(o) => o,
        }
    }
}

/// Reads at most [`MAX_ERROR_BODY`] bytes of a body as text; a read failure keeps what arrived.
async fn read_limited(mut resp: reqwest::Response) -> String {
    let mut buf = Vec::new();
    while let Ok(Some(chunk)) = resp.chunk().await {
        buf.extend_from_slice(&chunk);
        if buf.len() >= MAX_ERROR_BODY {
            buf.truncate(MAX_ERROR_BODY);
            break;
        }
    }
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn proxy_values() {
        assert_eq!(
            socks_proxy_url("127.0.0.1:1080").unwrap(),
            "socks5h://127.0.0.1:1080"
        );
        assert_eq!(
            socks_proxy_url(" socks5://proxy.test:9050 ").unwrap(),
            "socks5://proxy.test:9050"
        );
        let e = socks_proxy_url("http://user:pw@proxy.test:8080")
            .unwrap_err()
            .to_string();
        assert!(e.contains("socks5") && !e.contains("pw"), "{e}");
        assert!(socks_proxy_url("::::").is_err());
    }

    #[test]
    fn a_base_url_without_its_scheme_says_how_to_write_it() {
        let build = |base_url: &str| {
            Transport::new(TransportConfig {
                base_url,
                request_timeout: Duration::from_secs(1),
                extra_headers: &[],
                proxy: None,
                auth: Auth::None,
            })
        };
        for (bad, says) in [
            ("localhost:11434/v1", "it starts with `localhost:`"),
            ("ftp://host/v1", "it starts with `ftp:`"),
            ("api.example.com/v1?key=sk-secret", "not a full URL"),
        ] {
            let e = build(bad).err().unwrap().to_string();
            assert!(e.contains(says), "{bad}: {e}");
            assert!(e.contains("http://127.0.0.1:11434/v1"), "{bad}: {e}");
            assert!(!e.contains("sk-secret"), "{e}");
        }
        assert!(build(" http://127.0.0.1:11434/v1/ ").is_ok());
    }
}
