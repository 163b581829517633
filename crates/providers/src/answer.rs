//! Success answers that are not an event stream: a whole JSON body (a server that ignored
//! `stream: true`, or answered an error with a success status) is read as one event;
//! anything else (a captive portal, a base URL pointing at a web page) fails at once with
//! what answered and a short, printable excerpt. The declared content type decides; when it
//! is missing or unexpected, the first bytes do.

use cairn_engine::{FailureKind, LlmOutcome, OutcomeStatus};
use serde_json::Value;

use crate::classify::{display_base, ErrorInfo};
use crate::redact::Redactor;

/// Longest excerpt of an unexpected body quoted in a message (characters).
pub(crate) const MAX_EXCERPT: usize = 200;

/// Bytes of an undeclared body looked at, at most, before calling it neither SSE nor JSON.
const SNIFF_BYTES: usize = 64;

/// Most bytes of an unexpected body read for its excerpt.
pub(crate) const EXCERPT_BYTES: usize = 1024;

/// Longest content type quoted in a message.
const MAX_CONTENT_TYPE: usize = 80;

/// What a success body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A server-sent event stream.
    Sse,
    /// One whole JSON document.
    Json,
    /// Something else (HTML, plain text, …).
    Other,
}

/// Who answered and how, for messages.
#[derive(Debug, Clone)]
pub(crate) struct Answer {
    /// The URL that answered, without credentials or query.
    pub url: String,
    /// HTTP status (2xx).
    pub status: u16,
    /// The `Content-Type` header, if any (printable).
    pub content_type: Option<String>,
}

impl Answer {
    /// The facts of `response` that messages quote.
    pub(crate) fn of(response: &reqwest::Response) -> Answer {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .map(|v| printable(&String::from_utf8_lossy(v.as_bytes()), MAX_CONTENT_TYPE))
            .filter(|ct| !ct.is_empty());
        Answer {
            url: display_base(response.url().as_str()),
            status: response.status().as_u16(),
            content_type,
        }
    }

    /// The shape the content type declares; `None` when only the body can tell.
    pub(crate) fn declared(&self) -> Option<Shape> {
        let ct = self.content_type.as_deref()?;
        let essence = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        if essence == "text/event-stream" {
            Some(Shape::Sse)
        } else if essence == "application/json" || essence.ends_with("+json") {
            Some(Shape::Json)
        } else {
            None
        }
    }

    fn content_type_text(&self) -> String {
        match &self.content_type {
            Some(ct) => ct.clone(),
            None => "no content type".to_string(),
        }
    }
}

/// The SSE field prefixes a stream can start with.
const SSE_FIELDS: [&[u8]; 4] = [b"data:", b"event:", b"id:", b"retry:"];

/// What the first bytes of an undeclared body look like; `None` while too few arrived to
/// tell. `ended`: no more bytes will come. An empty body counts as a (dropped) stream.
pub(crate) fn sniff(head: &[u8], ended: bool) -> Option<Shape> {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let rest = &head[start..];
    match rest.first() {
        None if ended => return Some(Shape::Sse),
        None => return None,
        Some(b'{' | b'[') => return Some(Shape::Json),
        Some(b':') => return Some(Shape::Sse),
        Some(_) => {}
    }
    let line_end = rest.iter().position(|&b| b == b'\n' || b == b'\r');
    let line = &rest[..line_end.unwrap_or(rest.len())];
    if SSE_FIELDS.iter().any(|f| line.starts_with(f)) {
        return Some(Shape::Sse);
    }
    let complete = line_end.is_some() || ended || rest.len() >= SNIFF_BYTES;
    if !complete && SSE_FIELDS.iter().any(|f| f.starts_with(line)) {
        return None;
    }
    Some(Shape::Other)
}

/// Whether `c` is an invisible formatting character (zero-width, bidirectional override).
fn is_format(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}')
}

/// `text` on one line: control and formatting characters and runs of whitespace become
/// one space; cut to at most `max` characters.
fn printable(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut gap = false;
    for c in text.chars() {
        if c.is_whitespace() || c.is_control() || is_format(c) {
            gap = !out.is_empty();
            continue;
        }
        if gap {
            out.push(' ');
            gap = false;
        }
        out.push(c);
        if out.len() > max * 4 {
            break;
        }
    }
    crate::redact::truncate(&out, max)
}

/// A short, printable, secret-free excerpt of `bytes`.
pub(crate) fn excerpt(bytes: &[u8], redactor: &Redactor) -> String {
    let text = String::from_utf8_lossy(bytes);
    // Scrub before cutting (a cut secret would no longer match).
    let clean = redactor.scrub(&printable(&text, MAX_EXCERPT * 4));
    redactor.scrub_truncated(&clean, MAX_EXCERPT)
}

/// A failure no retry can mend: the endpoint is not an LLM API.
fn wrong_endpoint(text: String) -> LlmOutcome {
    LlmOutcome::new(OutcomeStatus::Failed, Some(text)).with_kind(FailureKind::BadRequest)
}

/// The outcome of a success answer that is neither an event stream nor JSON.
pub(crate) fn not_a_stream(answer: &Answer, head: &[u8], redactor: &Redactor) -> LlmOutcome {
    let first = if head.iter().all(u8::is_ascii_whitespace) {
        "an empty body".to_string()
    } else {
        format!("first bytes: {}", excerpt(head, redactor))
    };
    wrong_endpoint(format!(
        "the endpoint {} answered {} with {}, not an event stream: is the base URL right? ({first})",
        answer.url,
        answer.status,
        answer.content_type_text()
    ))
}

/// Whether a whole JSON body is a (possibly unfinished) completion of some API: the parser
/// then had its say, and the body simply ended early.
pub(crate) fn is_completion_like(body: &str) -> bool {
    serde_json::from_str::<Value>(body).is_ok_and(|v| {
        ["choices", "output", "content"]
            .iter()
            .any(|k| v.get(k).is_some())
    })
}

/// The outcome of a whole JSON success answer that is neither a completion nor an error the
/// parser recognised; its message (`message`, `detail`, …) is quoted when it has one.
pub(crate) fn not_a_completion(answer: &Answer, body: &str, redactor: &Redactor) -> LlmOutcome {
    let says = match ErrorInfo::parse(body).message {
        Some(m) if serde_json::from_str::<Value>(body).is_ok() => {
            format!("it says: {}", excerpt(m.as_bytes(), redactor))
        }
        _ => format!("first bytes: {}", excerpt(body.as_bytes(), redactor)),
    };
    wrong_endpoint(format!(
        "the endpoint {} answered {} with JSON that is not a completion: is the base URL right? ({says})",
        answer.url, answer.status
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(ct: Option<&str>) -> Answer {
        Answer {
            url: "http://127.0.0.1:9/v1/chat/completions".into(),
            status: 200,
            content_type: ct.map(str::to_string),
        }
    }

    #[test]
    fn content_types_declare_a_shape() {
        let shape = |ct| answer(ct).declared();
        assert_eq!(
            shape(Some("text/event-stream; charset=utf-8")),
            Some(Shape::Sse)
        );
        assert_eq!(shape(Some(" Application/JSON")), Some(Shape::Json));
        assert_eq!(shape(Some("application/problem+json")), Some(Shape::Json));
        assert_eq!(shape(Some("text/html; charset=utf-8")), None);
        assert_eq!(shape(None), None);
    }

    #[test]
    fn first_bytes_tell_the_shape() {
        assert_eq!(sniff(b"<html><body>", false), Some(Shape::Other));
        assert_eq!(
            sniff(b"\xEF\xBB\xBF\n data: {}\n\n", false),
            Some(Shape::Sse)
        );
        assert_eq!(sniff(b": keep-alive\n", false), Some(Shape::Sse));
        assert_eq!(sniff(b"event: message_start\n", false), Some(Shape::Sse));
        assert_eq!(sniff(b"  {\"choices\"", false), Some(Shape::Json));
        assert_eq!(sniff(b"da", false), None, "a field name split across reads");
        assert_eq!(sniff(b"da", true), Some(Shape::Other));
        assert_eq!(sniff(b"data\n", false), Some(Shape::Other));
        assert_eq!(sniff(b"Hello", false), Some(Shape::Other));
        assert_eq!(sniff(b"  ", false), None);
        assert_eq!(sniff(b"", true), Some(Shape::Sse));
    }

    #[test]
    fn excerpts_are_short_printable_and_secret_free() {
        let r = Redactor::new(["hunter2-secret"]);
        let body = format!(
            "<html>\r\n\t<body>\u{1b}[31mLogin\u{202E} page\u{0}  token=hunter2-secret sk-abcdefghijkl {}",
            "x".repeat(1000)
        );
        let e = excerpt(body.as_bytes(), &r);
        assert!(
            e.starts_with("<html> <body> [31mLogin page token=[redacted]"),
            "{e}"
        );
        assert!(!e.contains("sk-abcdefghijkl"), "{e}");
        assert!(!e.chars().any(|c| c.is_control() || is_format(c)), "{e:?}");
        assert!(
            e.chars().count() <= MAX_EXCERPT + 1,
            "{}",
            e.chars().count()
        );
        assert_eq!(excerpt(b"\xff\xfeok", &r), "\u{FFFD}\u{FFFD}ok");
    }

    #[test]
    fn wrong_endpoints_fail_without_retry() {
        let r = Redactor::default();
        let o = not_a_stream(&answer(Some("text/html")), b"<html><body>Login page", &r);
        assert_eq!(
            (o.status, o.kind),
            (OutcomeStatus::Failed, Some(FailureKind::BadRequest))
        );
        let m = o.message.unwrap_or_default();
        assert!(m.contains("http://127.0.0.1:9/v1/chat/completions answered 200 with text/html, not an event stream: is the base URL right? (first bytes: <html><body>Login page)"), "{m}");
        let o = not_a_stream(&answer(None), b" \n", &r);
        assert!(o.message.unwrap_or_default().contains(
            "with no content type, not an event stream: is the base URL right? (an empty body)"
        ));
        let o = not_a_completion(
            &answer(Some("application/json")),
            r#"{"detail":"Not\nFound"}"#,
            &r,
        );
        assert!(o
            .message
            .unwrap_or_default()
            .ends_with("(it says: Not Found)"));
        let o = not_a_completion(&answer(Some("application/json")), r#"{"ok":true}"#, &r);
        assert!(o
            .message
            .unwrap_or_default()
            .ends_with(r#"(first bytes: {"ok":true})"#));
        assert!(is_completion_like(r#"{"choices":[]}"#));
        assert!(!is_completion_like(r#"{"detail":"x"}"#));
    }
}
