//! The GET of `web_fetch` and its redirects, followed one by one so every hop is checked (see
//! [`super::resolve`]) and its host name pinned to the addresses checked.

use std::net::SocketAddr;
use std::time::Instant;

use cairn_engine::ToolError;
use reqwest::header::{HeaderValue, LOCATION, REFERER};
use reqwest::StatusCode;

use super::client::describe;
use super::fetch::WebFetchConfig;
use super::resolve::{check, Rules};

/// Sends a GET to `url` and follows its redirects (up to `config.max_redirects`) until a
/// response that is not one, all before `deadline`. Returns that response.
pub(crate) async fn get(
    config: &WebFetchConfig,
    url: url::Url,
    deadline: Instant,
) -> Result<reqwest::Response, ToolError> {
    let rules = Rules {
        local_fetch: cairn_policy::net::local_address(url.as_str()).is_some(),
        proxied: config.http.proxied(),
    };
    let timeout = |what: String| ToolError::Timeout {
        ms: config.timeout.as_millis() as u64,
        detail: format!("; {what} within {:.0} s", config.timeout.as_secs_f64()),
    };
    let first = url.clone();
    let mut current = url;
    let mut previous: Option<url::Url> = None;
    // The client of the current host: a host keeps its checked addresses for the whole fetch.
    let mut pinned: Option<(String, reqwest::Client)> = None;
    let mut redirects = 0;
    loop {
        let host = current.host_str().unwrap_or_default().to_string();
        let client = match &pinned {
            Some((h, c)) if *h == host => c.clone(),
            _ => {
                let checking = check(&current, previous.as_ref(), rules, &*config.resolver);
                let addrs = tokio::time::timeout_at(deadline.into(), checking)
                    .await
                    .map_err(|_| timeout(format!("{host} did not resolve")))?
                    .map_err(ToolError::Failed)?;
                let c = client_for(config, &host, &addrs)?;
                pinned = Some((host, c.clone()));
                c
            }
        };
        let mut request = client.get(current.clone());
        if let Some(r) = previous.as_ref().and_then(|p| referer(&current, p)) {
            request = request.header(REFERER, r);
        }
        let resp = match tokio::time::timeout_at(deadline.into(), request.send()).await {
            Err(_) => return Err(timeout(format!("{current} did not answer"))),
            Ok(Err(e)) => {
                return Err(ToolError::Failed(format!(
                    "web_fetch: {current}: {}",
                    describe(&e)
                )))
            }
            Ok(Ok(r)) => r,
        };
        let Some(next) = redirect_target(&resp, &current) else {
            return Ok(resp);
        };
        drop(resp);
        if redirects >= config.max_redirects {
            return Err(ToolError::Failed(format!(
                "web_fetch: {first}: too many redirects (more than {}; the site may be in a \
                 redirect loop)",
                config.max_redirects
            )));
        }
        redirects += 1;
        if !matches!(next.scheme(), "http" | "https") {
            return Err(ToolError::Failed(format!(
                "web_fetch: {current} redirected to {next}, which is not an http or https URL; \
                 the redirect was not followed."
            )));
        }
        previous = Some(std::mem::replace(&mut current, next));
    }
}

/// A client that does not follow redirects and connects `host` only to `addrs` (when any).
fn client_for(
    config: &WebFetchConfig,
    host: &str,
    addrs: &[SocketAddr],
) -> Result<reqwest::Client, ToolError> {
    let failed = |e: String| ToolError::Failed(format!("web_fetch: {e}"));
    let mut b = config
        .http
        .builder()
        .map_err(|e| failed(e.to_string()))?
        .redirect(reqwest::redirect::Policy::none());
    if !addrs.is_empty() {
        b = b.resolve_to_addrs(host, addrs);
    }
    b.build()
        .map_err(|e| failed(format!("cannot build the HTTP client: {e}")))
}

/// Where a redirect response sends the request; `None` when `resp` is not a redirect to
/// follow (not 301, 302, 303, 307 or 308, or without a usable `Location`), as reqwest does.
fn redirect_target(resp: &reqwest::Response, current: &url::Url) -> Option<url::Url> {
    let follow = matches!(
        resp.status(),
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    );
    if !follow {
        return None;
    }
    let location = resp.headers().get(LOCATION)?.to_str().ok()?;
    current.join(location).ok()
}

/// The `Referer` of a redirected request, as reqwest sets it (none from https to http).
fn referer(next: &url::Url, previous: &url::Url) -> Option<HeaderValue> {
    if next.scheme() == "http" && previous.scheme() == "https" {
        return None;
    }
    let mut r = previous.clone();
    let _ = r.set_username("");
    let _ = r.set_password(None);
    r.set_fragment(None);
    HeaderValue::from_str(r.as_str()).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn referer_drops_credentials_and_downgrades() {
        let prev = url::Url::parse("https://u:p@a.test/x#frag").unwrap();
        let next = url::Url::parse("https://b.test/").unwrap();
        assert_eq!(referer(&next, &prev).unwrap(), "https://a.test/x");
        let plain = url::Url::parse("http://b.test/").unwrap();
        assert!(referer(&plain, &prev).is_none());
    }
}
