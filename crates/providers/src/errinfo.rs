//! Reads provider error bodies (OpenAI, Anthropic, Gemini, gateways) into one shape.

use std::time::Duration;

use serde_json::Value;

/// The interesting fields of an error body, whichever provider sent it.
#[derive(Debug, Default, Clone, PartialEq)]
pub(crate) struct ErrorInfo {
    /// Human-readable message.
    pub message: Option<String>,
    /// OpenAI `code` (`rate_limit_exceeded`, `insufficient_quota`, …).
    pub code: Option<String>,
    /// OpenAI `type` / Anthropic `error.type` (`overloaded_error`, …) / Google `status`.
    pub kind: Option<String>,
    /// A wait the body asks for (Google `RetryInfo.retryDelay`).
    pub retry_delay: Option<Duration>,
}

fn as_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

impl ErrorInfo {
    /// Reads `{"error":{"message","code","type"}}` (OpenAI, Anthropic, Google), a list of
    /// those (Gemini), `{"error":"…"}`, `{"message":"…"}`, `{"detail":"…"}`, or keeps the
    /// raw text.
    pub(crate) fn parse(body: &str) -> ErrorInfo {
        match serde_json::from_str::<Value>(body) {
            Ok(v) => Self::from_value(&v),
            Err(_) => {
                let text = body.trim();
                let message = if looks_like_html(text) {
                    Some(html_summary(text))
                } else {
                    (!text.is_empty()).then(|| text.to_string())
                };
                ErrorInfo {
                    message,
                    ..ErrorInfo::default()
                }
            }
        }
    }

    /// Reads an error object, an object holding one under `error`, or a list of those.
    pub(crate) fn from_value(v: &Value) -> ErrorInfo {
        if let Some(first) = v.as_array().and_then(|a| a.first()) {
            return Self::from_value(first);
        }
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
            kind: e.get("type").or_else(|| e.get("status")).and_then(as_text),
            retry_delay: google_retry_delay(e),
        }
    }

    fn message_lower(&self) -> String {
        self.message.as_deref().unwrap_or("").to_ascii_lowercase()
    }

    /// `code` and `type` together, lower-cased, for keyword checks.
    pub(crate) fn tags(&self) -> String {
        format!(
            "{} {}",
            self.code.as_deref().unwrap_or(""),
            self.kind.as_deref().unwrap_or("")
        )
        .to_ascii_lowercase()
    }

    /// Whether this error says the prompt exceeds the context window.
    pub(crate) fn is_context_overflow(&self) -> bool {
        if self.tags().contains("context_length_exceeded") {
            return true;
        }
        let m = self.message_lower();
        [
            "maximum context length",
            "context_length_exceeded",
            "context length exceeded",
            "context window",
            "prompt is too long",
            "too many tokens",
            "input is too long",
            "exceeds the maximum number of tokens",
        ]
        .iter()
        .any(|p| m.contains(p))
    }

    /// Whether this error says the account is out of credit or quota (retrying cannot help).
    /// A quota message that comes with a retry delay is a per-minute limit, not billing.
    pub(crate) fn is_quota_exhausted(&self, status: u16, has_retry_hint: bool) -> bool {
        if status == 402 || self.tags().contains("insufficient_quota") {
            return true;
        }
        let m = self.message_lower();
        if [
            "credit balance",
            "insufficient balance",
            "insufficient credits",
        ]
        .iter()
        .any(|p| m.contains(p))
        {
            return true;
        }
        m.contains("exceeded your current quota") && !has_retry_hint
    }

    /// Whether this error says the service is overloaded (Anthropic 529 `overloaded_error`).
    pub(crate) fn is_overloaded(&self) -> bool {
        self.tags().contains("overloaded") || self.message_lower().contains("overloaded")
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
        let m = self.message_lower();
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

    /// The wait this error asks for: Google's `retryDelay`, else "try again in 11.05s" in
    /// the message.
    pub(crate) fn retry_hint(&self) -> Option<Duration> {
        self.retry_delay
            .or_else(|| try_again_in(self.message.as_deref().unwrap_or("")))
    }
}

/// `error.details[].retryDelay` of a Google `RetryInfo` ("11s", "0.5s").
fn google_retry_delay(e: &Value) -> Option<Duration> {
    e.get("details")?
        .as_array()?
        .iter()
        .filter_map(|d| d.get("retryDelay").and_then(Value::as_str))
        .find_map(|s| parse_duration_text(s.trim()))
}

/// Parses the duration after "try again in" (OpenAI: `11.05s`, `120ms`, `1m30s`, `2m`).
pub(crate) fn try_again_in(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    let at = lower.find("try again in")? + "try again in".len();
    let rest = lower[at..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .unwrap_or(rest.len());
    let token = rest[..end].trim_end_matches('.');
    parse_duration_text(token).or_else(|| {
        // "try again in 20 seconds"
        let mut words = rest.split_whitespace();
        let n: f64 = words.next()?.parse().ok()?;
        let unit = words.next()?;
        let secs = match unit.trim_end_matches(['.', ',']) {
            u if u.starts_with("ms") || u.starts_with("millisecond") => n / 1000.0,
            u if u.starts_with("sec") || u == "s" => n,
            u if u.starts_with("min") => n * 60.0,
            _ => return None,
        };
        (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
    })
}

/// Parses `1h2m3.5s`, `11.05s`, `120ms`, `2m` (at least one unit required).
pub(crate) fn parse_duration_text(s: &str) -> Option<Duration> {
    let mut total = 0.0f64;
    let mut rest = s;
    let mut any = false;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let (factor, unit_len) = if rest.starts_with("ms") {
            (0.001, 2)
        } else if rest.starts_with('h') {
            (3600.0, 1)
        } else if rest.starts_with('m') {
            (60.0, 1)
        } else if rest.starts_with('s') {
            (1.0, 1)
        } else {
            return None;
        };
        total += n * factor;
        rest = &rest[unit_len..];
        any = true;
    }
    (any && total.is_finite()).then(|| Duration::from_secs_f64(total))
}

/// Whether an error body is a web page (a proxy's or web server's error page).
fn looks_like_html(text: &str) -> bool {
    let head: String = text
        .chars()
        .take(200)
        .collect::<String>()
        .to_ascii_lowercase();
    head.starts_with("<!doctype html") || head.starts_with("<html") || head.contains("<body")
}

/// A web page reduced to what a person needs: its title (or first text), one line.
fn html_summary(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let title = lower.find("<title>").and_then(|start| {
        let from = start + "<title>".len();
        let end = lower[from..].find("</title>")? + from;
        html.get(from..end)
    });
    let text = match title {
        Some(t) => t.to_string(),
        None => {
            // The page's text without its tags.
            let mut out = String::new();
            let mut in_tag = false;
            for c in html.chars() {
                match c {
                    '<' => in_tag = true,
                    '>' => {
                        in_tag = false;
                        out.push(' ');
                    }
                    c if !in_tag => out.push(c),
                    _ => {}
                }
            }
            out
        }
    };
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line: String = line.chars().take(160).collect();
    format!("an HTML page: {line}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_body_shape() {
        let a = ErrorInfo::parse(
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(a.kind.as_deref(), Some("overloaded_error"));
        assert!(a.is_overloaded());
        let g = ErrorInfo::parse(
            r#"[{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED",
               "details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"11s"}]}}]"#,
        );
        assert_eq!(g.code.as_deref(), Some("429"));
        assert_eq!(g.kind.as_deref(), Some("RESOURCE_EXHAUSTED"));
        assert_eq!(g.retry_hint(), Some(Duration::from_secs(11)));
        assert_eq!(
            ErrorInfo::parse(r#"{"detail":"nope"}"#).message.as_deref(),
            Some("nope")
        );
        assert_eq!(
            ErrorInfo::parse("<html>bad</html>").message.as_deref(),
            Some("an HTML page: bad")
        );
        assert_eq!(
            ErrorInfo::parse("plain text error").message.as_deref(),
            Some("plain text error")
        );
    }

    #[test]
    fn try_again_hints() {
        let cases = [
            ("Please try again in 11.05s. Visit …", Some(11_050)),
            ("Please try again in 120ms.", Some(120)),
            ("Please try again in 1m30s.", Some(90_000)),
            ("try again in 2m", Some(120_000)),
            ("Try again in 20 seconds.", Some(20_000)),
            ("please try again later", None),
            ("no hint here", None),
        ];
        for (m, want) in cases {
            assert_eq!(try_again_in(m).map(|d| d.as_millis() as u64), want, "{m}");
        }
        assert_eq!(parse_duration_text("1h"), Some(Duration::from_secs(3600)));
        assert_eq!(parse_duration_text("s"), None);
        assert_eq!(parse_duration_text("5x"), None);
    }

    #[test]
    fn quota_versus_rate_limit() {
        let q = ErrorInfo::parse(
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
        );
        assert!(q.is_quota_exhausted(429, false));
        assert!(q.is_quota_exhausted(429, true), "the code wins over hints");
        let credit = ErrorInfo::parse(
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API."}}"#,
        );
        assert!(credit.is_quota_exhausted(400, false));
        let gemini_minute = ErrorInfo {
            message: Some("You exceeded your current quota, please check your plan".into()),
            ..ErrorInfo::default()
        };
        assert!(!gemini_minute.is_quota_exhausted(429, true));
        assert!(gemini_minute.is_quota_exhausted(429, false));
        assert!(ErrorInfo::default().is_quota_exhausted(402, false));
        assert!(!ErrorInfo::parse("slow down").is_quota_exhausted(429, false));
    }

    #[test]
    fn context_overflow_phrasings() {
        for m in [
            r#"{"error":{"message":"x","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 208595 tokens > 200000 maximum"}}"#,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens"}}"#,
            r#"[{"error":{"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}}]"#,
        ] {
            assert!(ErrorInfo::parse(m).is_context_overflow(), "{m}");
        }
        assert!(
            !ErrorInfo::parse(r#"{"error":{"message":"image too large"}}"#).is_context_overflow()
        );
    }
}
