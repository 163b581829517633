//! Maps HTTP and transport failures to [`LlmOutcome`]s.

use std::time::{Duration, SystemTime};

use cairn_engine::{FailureKind, LlmOutcome, OutcomeStatus};
use reqwest::header::HeaderMap;

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

/// The interesting fields of an OpenAI-style error body.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct ErrorInfo {
    pub message: Option<String>,
    pub code: Option<String>,
    pub kind: Option<String>,
}

fn as_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl ErrorInfo {
    /// Reads `{"error":{"message","code","type"}}`, `{"error":"…"}`, `{"message":"…"}`,
    /// `{"detail":"…"}`, or falls back to the raw text.
    pub(crate) fn parse(body: &str) -> ErrorInfo {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else {
            let text = body.trim();
            return ErrorInfo {
                message: (!text.is_empty()).then(|| text.to_string()),
                ..ErrorInfo::default()
            };
        };
        Self::from_value(&v)
    }

    /// Reads an error object or an object that has one under `error`.
    pub(crate) fn from_value(v: &serde_json::Value) -> ErrorInfo {
        let e = match v.get("error") {
            Some(e) if e.is_object() => e,
            Some(e) => {
                return ErrorInfo {
                    message: as_text(e),
                    ..ErrorInfo::default()
                }
            }
            None => v,
        };
        ErrorInfo {
            message: e
                .get("message")
                .or_else(|| e.get("detail"))
                .and_then(as_text)
                .or_else(|| (!e.is_object()).then(|| e.to_string())),
            code: e.get("code").and_then(as_text),
            kind: e.get("type").and_then(as_text),
        }
    }

    /// Whether this error says the prompt exceeds the context window.
    pub(crate) fn is_context_overflow(&self) -> bool {
        if self.code.as_deref() == Some("context_length_exceeded") {
            return true;
        }
        let m = self.message.as_deref().unwrap_or("").to_ascii_lowercase();
        [
            "maximum context length",
            "context_length_exceeded",
            "context length exceeded",
            "context window",
            "prompt is too long",
            "too many tokens",
        ]
        .iter()
        .any(|p| m.contains(p))
    }

    /// Whether this error says a request parameter is not supported (a partly compatible gateway).
    pub(crate) fn is_parameter_incompatibility(&self) -> bool {
        let code = self.code.as_deref().unwrap_or("");
        if [
            "unsupported_parameter",
            "unknown_parameter",
            "unsupported_value",
        ]
        .contains(&code)
        {
            return true;
        }
        let m = self.message.as_deref().unwrap_or("").to_ascii_lowercase();
        [
            "unsupported parameter",
            "unknown parameter",
            "unrecognized",
            "not supported",
            "unsupported",
            "unknown field",
            "extra inputs are not permitted",
            "invalid parameter",
        ]
        .iter()
        .any(|p| m.contains(p))
    }
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
    let (status, kind, text) = match code {
        401 | 403 if has_key => (
            OutcomeStatus::Auth,
            None,
            format!("the API key was rejected by {base}: {detail}"),
        ),
        401 | 403 => (
            OutcomeStatus::Auth,
            None,
            format!("{base} requires an API key and none is configured: {detail}"),
        ),
        429 => (
            OutcomeStatus::Failed,
            Some(FailureKind::RateLimited),
            format!("rate limited by {base}: {detail}"),
        ),
        500..=599 => (
            OutcomeStatus::Failed,
            Some(FailureKind::Server),
            format!("server error from {base}: {detail}"),
        ),
        400 | 413 | 422 if info.is_context_overflow() => (
            OutcomeStatus::Failed,
            Some(FailureKind::ContextOverflow),
            format!("the prompt does not fit the model's context window: {detail}"),
        ),
        _ => (
            OutcomeStatus::Failed,
            Some(FailureKind::BadRequest),
            format!("request rejected by {base}: {detail}"),
        ),
    };
    let mut out = LlmOutcome::new(status, Some(text)).with_http_status(code);
    out.kind = kind;
    if code == 429 {
        out.retry_after = f.retry_after;
    }
    out
}

/// The outcome of an error reported inside the stream (chat `{"error":…}`, Responses
/// `error` / `response.failed`).
pub(crate) fn outcome_for_stream_error(info: &ErrorInfo, redactor: &Redactor) -> LlmOutcome {
    let detail = info
        .message
        .as_deref()
        .map(|m| redactor.scrub_truncated(m, MAX_PROVIDER_MESSAGE))
        .unwrap_or_else(|| "unknown error".to_string());
    let code = info.code.as_deref().unwrap_or("");
    let kind = if info.is_context_overflow() {
        FailureKind::ContextOverflow
    } else if code.contains("rate_limit") {
        FailureKind::RateLimited
    } else if code.contains("server_error") || code.contains("internal") || code.is_empty() {
        FailureKind::Server
    } else {
        FailureKind::BadRequest
    };
    if code == "invalid_api_key" {
        return LlmOutcome::new(
            OutcomeStatus::Auth,
            Some(format!("the API key was rejected: {detail}")),
        );
    }
    LlmOutcome::new(
        OutcomeStatus::Failed,
        Some(format!(
            "the provider reported an error mid-stream: {detail}"
        )),
    )
    .with_kind(kind)
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

/// The outcome of a request that got no HTTP answer.
pub(crate) fn outcome_for_transport(
    err: &reqwest::Error,
    base_url: &str,
    redactor: &Redactor,
) -> LlmOutcome {
    let base = display_base(base_url);
    let detail = redactor.scrub_truncated(&chain(err), MAX_PROVIDER_MESSAGE);
    if err.is_timeout() {
        return LlmOutcome::new(
            OutcomeStatus::Timeout,
            Some(format!("timed out talking to {base}: {detail}")),
        );
    }
    LlmOutcome::new(
        OutcomeStatus::Timeout,
        Some(format!("could not reach {base}: {detail}")),
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
        let o = outcome_for_http(&fail(502, "<html>bad gateway</html>"), base, true, &r);
        assert_eq!(
            (o.kind, o.http_status, o.retry_after),
            (Some(FailureKind::Server), Some(502), None)
        );
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
