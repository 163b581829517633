//! The one place where failures of every provider become [`LlmOutcome`]s: HTTP errors,
//! errors reported inside a stream, transport failures (success answers that are not a
//! stream: [`crate::answer`]). The engine's retry policy then only
//! looks at the outcome (status and kind).

use std::time::{Duration, SystemTime};

use cairn_engine::{FailureKind, LlmOutcome, OutcomeStatus};
use reqwest::header::HeaderMap;

pub(crate) use crate::errinfo::ErrorInfo;
use crate::redact::Redactor;

/// Longest provider error text kept in an outcome message.
pub(crate) const MAX_PROVIDER_MESSAGE: usize = 500;

/// A non-success HTTP answer, body read.
#[derive(Debug, Clone)]
pub(crate) struct HttpFailure {
    /// HTTP status code.
    pub status: u16,
    /// Parsed `Retry-After` / `retry-after-ms`.
    pub retry_after: Option<Duration>,
    /// Response body (possibly cut).
    pub body: String,
}

/// Whether a failed `/responses` request may be retried on Chat Completions for this request only.
pub(crate) fn is_parameter_incompatibility(f: &HttpFailure) -> bool {
    let info = ErrorInfo::parse(&f.body);
    matches!(f.status, 400 | 422)
        && !info.is_context_overflow()
        && info.is_parameter_incompatibility()
}

/// `base_url` without credentials, query or fragment, for messages.
pub(crate) fn display_base(base_url: &str) -> String {
    match reqwest::Url::parse(base_url) {
        Ok(mut url) => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.as_str().trim_end_matches('/').to_string()
        }
        Err(_) => "the configured endpoint".to_string(),
    }
}

/// The text of a quota failure: retrying cannot help, the user must act.
fn quota_text(base: &str, detail: &str) -> String {
    format!(
        "quota exhausted at {base}: {detail} (add credits or raise the limit; retrying will not help)"
    )
}

/// The outcome of a non-success HTTP answer.
pub(crate) fn outcome_for_http(
    f: &HttpFailure,
    base_url: &str,
    has_key: bool,
    redactor: &Redactor,
) -> LlmOutcome {
    let info = ErrorInfo::parse(&f.body);
    let detail = info
        .message
        .as_deref()
        .map(|m| redactor.scrub_truncated(m, MAX_PROVIDER_MESSAGE))
        .unwrap_or_else(|| "no error message".to_string());
    let base = display_base(base_url);
    let code = f.status;
    let hint = f.retry_after.or_else(|| info.retry_hint());
    let (status, kind, text, retry_after) = match code {
        401 | 403 if has_key => (
            OutcomeStatus::Auth,
            None,
            format!("the API key was rejected by {base}: {detail}"),
            None,
        ),
        401 | 403 => (
            OutcomeStatus::Auth,
            None,
            format!("{base} requires an API key and none is configured: {detail}"),
            None,
        ),
        _ if info.is_quota_exhausted(code, hint.is_some()) => (
            OutcomeStatus::Failed,
            Some(FailureKind::QuotaExhausted),
            quota_text(&base, &detail),
            None,
        ),
        408 => (
            OutcomeStatus::Timeout,
            None,
            format!("{base} timed out the request: {detail}"),
            hint,
        ),
        429 => (
            OutcomeStatus::Failed,
            Some(FailureKind::RateLimited),
            format!("rate limited by {base}: {detail}"),
            hint,
        ),
        // Not implemented / version not supported: retrying cannot help.
        501 | 505 => (
            OutcomeStatus::Failed,
            Some(FailureKind::BadRequest),
            format!("{base} does not support this request (is the base URL right?): {detail}"),
            None,
        ),
        500..=599 if code == 529 || info.is_overloaded() => (
            OutcomeStatus::Failed,
            Some(FailureKind::Server),
            format!("{base} is overloaded: {detail}"),
            hint,
        ),
        500..=599 => (
            OutcomeStatus::Failed,
            Some(FailureKind::Server),
            format!("server error from {base}: {detail}"),
            hint,
        ),
        400 | 413 | 422 if info.is_context_overflow() => (
            OutcomeStatus::Failed,
            Some(FailureKind::ContextOverflow),
            format!("the prompt does not fit the model's context window: {detail}"),
            None,
        ),
        _ => (
            OutcomeStatus::Failed,
            Some(FailureKind::BadRequest),
            format!("request rejected by {base}: {detail}"),
            None,
        ),
    };
    let mut out = LlmOutcome::new(status, Some(text)).with_http_status(code);
    out.kind = kind;
    out.retry_after = retry_after;
    out
}

/// The outcome of an error reported inside the stream (chat `{"error":…}`, Responses
/// `error` / `response.failed`, Anthropic `event: error`).
pub(crate) fn outcome_for_stream_error(info: &ErrorInfo, redactor: &Redactor) -> LlmOutcome {
    let detail = info
        .message
        .as_deref()
        .map(|m| redactor.scrub_truncated(m, MAX_PROVIDER_MESSAGE))
        .unwrap_or_else(|| "unknown error".to_string());
    let tags = info.tags();
    if tags.contains("invalid_api_key") || tags.contains("authentication_error") {
        return LlmOutcome::new(
            OutcomeStatus::Auth,
            Some(format!("the API key was rejected: {detail}")),
        );
    }
    let hint = info.retry_hint();
    if info.is_quota_exhausted(0, hint.is_some()) {
        return LlmOutcome::new(
            OutcomeStatus::Failed,
            Some(quota_text("the provider", &detail)),
        )
        .with_kind(FailureKind::QuotaExhausted);
    }
    let (kind, what) = if info.is_context_overflow() {
        (FailureKind::ContextOverflow, "an error")
    } else if tags.contains("rate_limit") {
        (FailureKind::RateLimited, "a rate limit")
    } else if info.is_overloaded() {
        (FailureKind::Server, "overload")
    } else if tags.trim().is_empty()
        || ["server_error", "internal", "api_error", "unavailable"]
            .iter()
            .any(|t| tags.contains(t))
    {
        (FailureKind::Server, "an error")
    } else {
        (FailureKind::BadRequest, "an error")
    };
    let mut out = LlmOutcome::new(
        OutcomeStatus::Failed,
        Some(format!("the provider reported {what} mid-stream: {detail}")),
    )
    .with_kind(kind);
    if matches!(kind, FailureKind::RateLimited | FailureKind::Server) {
        out.retry_after = hint;
    }
    out
}

/// `err` and its sources, joined.
fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut cur = err.source();
    while let Some(e) = cur {
        let s = e.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        cur = e.source();
    }
    parts.join(": ")
}

/// [`chain`] of a reqwest error without the request URL (which names an API path, such as
/// `/responses`, that the user never configured) and without the generic wrappers.
fn chain_without_url(err: &reqwest::Error) -> String {
    let mut full = chain(err);
    if let Some(url) = err.url() {
        full = full.replacen(&format!(" for url ({url})"), "", 1);
    }
    let mut rest = full.as_str();
    for wrapper in ["error sending request: ", "client error (Connect): "] {
        rest = rest.strip_prefix(wrapper).unwrap_or(rest);
    }
    rest.to_string()
}

/// The innermost source of `err` (usually the OS error: "Connection refused (os error 111)").
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The kind of the first I/O error among `err`'s sources.
fn io_kind(err: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut cur = err.source();
    while let Some(e) = cur {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        cur = e.source();
    }
    None
}

/// The host of `base_url`, for messages.
fn host_of(base_url: &str) -> String {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| "of the base URL".to_string())
}

/// The outcome of a request that got no HTTP answer. `proxy` is the SOCKS5 proxy in use
/// (credentials removed). A failure to connect (refused, DNS, unreachable) is `failed`
/// with kind `Network` — retried by the policy, but never labelled a timeout; messages
/// name the base URL, not the API path that happened to be tried.
pub(crate) fn outcome_for_transport(
    err: &reqwest::Error,
    base_url: &str,
    proxy: Option<&str>,
    redactor: &Redactor,
) -> LlmOutcome {
    let base = display_base(base_url);
    let detail = redactor.scrub_truncated(&chain_without_url(err), MAX_PROVIDER_MESSAGE);
    let reason = redactor.scrub_truncated(&root_cause(err), MAX_PROVIDER_MESSAGE);
    let network = |text: String| {
        LlmOutcome::new(OutcomeStatus::Failed, Some(text)).with_kind(FailureKind::Network)
    };
    if err.is_timeout() {
        let what = if err.is_connect() {
            "timed out connecting to"
        } else {
            "timed out talking to"
        };
        return LlmOutcome::new(
            OutcomeStatus::Timeout,
            Some(format!("{what} {base}: {detail}")),
        );
    }
    let refused = io_kind(err) == Some(std::io::ErrorKind::ConnectionRefused);
    match proxy {
        Some(proxy) if refused => {
            return network(format!(
                "could not connect to the SOCKS5 proxy {proxy}: connection refused — is the proxy running?"
            ))
        }
        Some(proxy) if err.is_connect() => {
            return network(format!(
                "could not connect to {base} through the SOCKS5 proxy {proxy}: {detail} — is the proxy running?"
            ))
        }
        _ => {}
    }
    if err.is_dns() {
        let host = host_of(base_url);
        return network(format!(
            "could not resolve host {host} (base URL {base}): {reason} — is the host name right and the network up?"
        ));
    }
    if refused {
        return network(format!(
            "could not connect to {base}: connection refused — is the server running?"
        ));
    }
    if err.is_connect() {
        return network(format!("could not connect to {base}: {detail}"));
    }
    LlmOutcome::new(
        OutcomeStatus::Timeout,
        Some(format!(
            "lost the connection to {base} before it answered: {detail}"
        )),
    )
    .with_kind(FailureKind::Network)
}

/// The outcome of a transport error inside a streamed body.
pub(crate) fn outcome_for_body_error(
    err: &(dyn std::error::Error + 'static),
    redactor: &Redactor,
) -> LlmOutcome {
    let detail = redactor.scrub_truncated(&chain(err), MAX_PROVIDER_MESSAGE);
    LlmOutcome::new(
        OutcomeStatus::Timeout,
        Some(format!("stream dropped: {detail}")),
    )
    .with_kind(FailureKind::Network)
}

/// Reads `retry-after-ms`, then `Retry-After` (seconds or an HTTP date).
pub(crate) fn parse_retry_after(headers: &HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    parse_retry_after_value(text("retry-after")?, SystemTime::now())
}

/// Parses one `Retry-After` value relative to `now`.
pub(crate) fn parse_retry_after_value(v: &str, now: SystemTime) -> Option<Duration> {
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = httpdate::parse_http_date(v).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(status: u16, body: &str) -> HttpFailure {
        HttpFailure {
            status,
            retry_after: Some(Duration::from_secs(3)),
            body: body.to_string(),
        }
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(
            parse_retry_after_value("12", now),
            Some(Duration::from_secs(12))
        );
        assert_eq!(
            parse_retry_after_value("1.5", now),
            Some(Duration::from_millis(1500))
        );
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        assert_eq!(
            parse_retry_after_value(&later, now),
            Some(Duration::from_secs(30))
        );
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(parse_retry_after_value(&earlier, now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after_value("soon", now), None);
        assert_eq!(parse_retry_after_value("-1", now), None);
    }

    #[test]
    fn classifies_statuses() {
        let r = Redactor::new(["sk-secret-1234"]);
        let base = "https://user:pw@api.example.test/v1?key=abc";
        let o = outcome_for_http(
            &fail(
                401,
                r#"{"error":{"message":"Incorrect API key provided: sk-secret-1234"}}"#,
            ),
            base,
            true,
            &r,
        );
        assert_eq!(o.status, OutcomeStatus::Auth);
        let m = o.message.unwrap_or_default();
        assert!(
            m.contains("https://api.example.test/v1") && m.contains("rejected"),
            "{m}"
        );
        assert!(
            !m.contains("sk-secret") && !m.contains("pw") && !m.contains("abc"),
            "{m}"
        );
        let o = outcome_for_http(&fail(429, "slow down"), base, true, &r);
        assert_eq!(
            (o.status, o.kind, o.retry_after),
            (
                OutcomeStatus::Failed,
                Some(FailureKind::RateLimited),
                Some(Duration::from_secs(3))
            )
        );
        let mut bad_gateway = fail(502, "<html>bad gateway</html>");
        bad_gateway.retry_after = None;
        let o = outcome_for_http(&bad_gateway, base, true, &r);
        assert_eq!(
            (o.kind, o.http_status, o.retry_after),
            (Some(FailureKind::Server), Some(502), None)
        );
        // A web server's error page is summarised, not quoted whole; 501 is not retried.
        let page = "<!DOCTYPE HTML>\n<html><head><title>Error response</title></head>\n\
                    <body><h1>Error response</h1><p>Error code: 501</p>\n<p>Message: \
                    Unsupported method ('POST').</p></body></html>";
        let mut not_implemented = fail(501, page);
        not_implemented.retry_after = None;
        let o = outcome_for_http(&not_implemented, base, true, &r);
        assert_eq!(o.kind, Some(FailureKind::BadRequest));
        let m = o.message.unwrap_or_default();
        assert!(m.contains("an HTML page: Error response"), "{m}");
        assert!(!m.contains('<') && !m.contains('\n'), "{m}");
        assert!(m.contains("is the base URL right?"), "{m}");
        let o = outcome_for_http(
            &fail(
                400,
                r#"{"error":{"message":"This model's maximum context length is 8192 tokens","code":null}}"#,
            ),
            base,
            true,
            &r,
        );
        assert_eq!(o.kind, Some(FailureKind::ContextOverflow));
        let o = outcome_for_http(&fail(404, r#"{"error":"model not found"}"#), base, true, &r);
        assert_eq!(o.kind, Some(FailureKind::BadRequest));
        assert!(o.message.unwrap_or_default().contains("model not found"));
    }

    #[test]
    fn long_error_bodies_are_cut() {
        let body = format!(r#"{{"error":{{"message":"{}"}}}}"#, "x".repeat(5000));
        let o = outcome_for_http(
            &fail(400, &body),
            "https://a.test/v1",
            true,
            &Redactor::default(),
        );
        assert!(o.message.unwrap_or_default().len() < 700);
    }

    /// A resolver that knows no name, so DNS failures are tested without the network.
    struct NoNames;

    impl reqwest::dns::Resolve for NoNames {
        fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
            let msg = format!(
                "failed to lookup address information: {} not known",
                name.as_str()
            );
            Box::pin(async move { Err(msg.into()) })
        }
    }

    /// The error of one POST to `url` with `client`.
    async fn send_error(client: reqwest::Client, url: &str) -> reqwest::Error {
        match client.post(url).body("{}").send().await {
            Err(e) => e,
            Ok(r) => panic!("unexpected answer {}", r.status()),
        }
    }

    #[tokio::test]
    async fn dns_failure_names_the_host_not_the_api_path() {
        let client = reqwest::Client::builder().dns_resolver(NoNames).build();
        let Ok(client) = client else { panic!("client") };
        let base = "http://llm.nowhere.test:8080/v1";
        let err = send_error(client, &format!("{base}/responses")).await;
        let o = outcome_for_transport(&err, base, None, &Redactor::default());
        assert_eq!(
            (o.status, o.kind),
            (OutcomeStatus::Failed, Some(FailureKind::Network))
        );
        let m = o.message.unwrap_or_default();
        assert!(
            m.starts_with("could not resolve host llm.nowhere.test (base URL http://llm.nowhere.test:8080/v1): "),
            "{m}"
        );
        assert!(
            m.ends_with("is the host name right and the network up?"),
            "{m}"
        );
        assert!(!m.contains("/responses") && !m.contains("timeout"), "{m}");
    }

    #[tokio::test]
    async fn connection_refused_names_the_base_url() {
        let Ok(listener) = std::net::TcpListener::bind("127.0.0.1:0") else {
            panic!("bind")
        };
        let base = match listener.local_addr() {
            Ok(a) => format!("http://{a}/v1"),
            Err(e) => panic!("{e}"),
        };
        drop(listener);
        let err = send_error(reqwest::Client::new(), &format!("{base}/chat/completions")).await;
        let o = outcome_for_transport(&err, &base, None, &Redactor::default());
        assert_eq!(
            o.message.as_deref(),
            Some(
                format!("could not connect to {base}: connection refused — is the server running?")
                    .as_str()
            )
        );
        assert_eq!(o.status, OutcomeStatus::Failed);
    }

    #[test]
    fn parameter_incompatibility() {
        assert!(is_parameter_incompatibility(&fail(
            400,
            r#"{"error":{"message":"Unsupported parameter: 'reasoning.summary'","code":"unsupported_parameter"}}"#
        )));
        assert!(is_parameter_incompatibility(&fail(
            422,
            r#"{"detail":"store: Extra inputs are not permitted"}"#
        )));
        assert!(!is_parameter_incompatibility(&fail(
            400,
            r#"{"error":{"message":"maximum context length exceeded, unsupported"}}"#
        )));
        assert!(!is_parameter_incompatibility(&fail(
            400,
            r#"{"error":{"message":"image too large"}}"#
        )));
        assert!(!is_parameter_incompatibility(&fail(
            401,
            r#"{"error":{"message":"unsupported"}}"#
        )));
    }
}
