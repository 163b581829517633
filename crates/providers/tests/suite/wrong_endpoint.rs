//! A base URL that does not lead to an LLM API: a web page answering 200 (captive portal),
//! other non-stream success answers, a dead port. Each ends with a clear outcome that names
//! the base URL; the ones no retry can mend are not retried.

use crate::common;

use std::time::Duration;

use cairn_engine::{FailureKind, LlmOutcome, OutcomeStatus, RetryPolicy, ToolRegistry};
use cairn_protocol::{Event, TurnStatus};
use cairn_providers::{build_client, ApiMode};
use common::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A local HTTP server answering every request with `status`, `content_type` (none when
/// `None`) and `body`, after reading the request whole. Returns its `/v1` base URL.
async fn fixed_server(
    status: &'static str,
    content_type: Option<&'static str>,
    body: String,
) -> (tokio::task::JoinHandle<()>, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                read_request(&mut sock).await;
                let ct = content_type
                    .map(|ct| format!("content-type: {ct}\r\n"))
                    .unwrap_or_default();
                let head = format!(
                    "HTTP/1.1 {status}\r\n{ct}content-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(body.as_bytes()).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    (task, url)
}

/// Reads one request (headers and a `content-length` body).
async fn read_request(sock: &mut tokio::net::TcpStream) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = sock.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        if buf.len() >= end + 4 + len {
            return;
        }
    }
}

/// A port nothing listens on.
fn dead_base_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    url
}

fn message(o: &LlmOutcome) -> String {
    o.message.clone().unwrap_or_default()
}

const LOGIN_PAGE: &str =
    "<html><body>Login page\r\n\t<form action=\"/login\">\u{1b}[2J</form></body></html>";

#[tokio::test]
async fn an_html_page_answering_200_is_a_clear_failure_that_is_not_retried() {
    let (task, url) = fixed_server("200 OK", Some("text/html"), LOGIN_PAGE.to_string()).await;
    for protocol in PROTOCOLS {
        let llm = build_client(&spec(protocol, &url)).unwrap();
        let got = collect(llm.as_ref(), request(model_of(protocol))).await;
        let o = got.outcome();
        let at = format!("{protocol:?}: {o:?}");
        assert_eq!(
            (o.status, o.kind),
            (OutcomeStatus::Failed, Some(FailureKind::BadRequest)),
            "{at}"
        );
        assert!(!RetryPolicy::is_retriable(o), "{at}");
        let m = message(o);
        assert!(m.starts_with(&format!("the endpoint {url}/")), "{at}");
        assert!(
            m.contains("answered 200 with text/html, not an event stream: is the base URL right? (first bytes: <html><body>Login page <form"),
            "{at}"
        );
        assert!(
            !m.contains("timeout") && !m.contains("stream dropped"),
            "{at}"
        );
        assert!(!m.chars().any(char::is_control), "{at}");
    }
    task.abort();
}

#[tokio::test]
async fn the_turn_ends_with_the_wrong_endpoint_message_without_retrying() {
    let (task, url) = fixed_server(
        "200 OK",
        Some("text/html; charset=utf-8"),
        LOGIN_PAGE.into(),
    )
    .await;
    let llm = build_client(&spec(Protocol::Chat, &url)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let policy = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    };
    let s = session(llm, "gpt-4o", ToolRegistry::new(), policy, dir.path());
    let events = run_turn(&s, "hello").await;
    assert!(
        !events.iter().any(|e| matches!(e, Event::LlmRetry(_))),
        "{events:?}"
    );
    match events.last() {
        Some(Event::TurnEnd(t)) => assert_eq!(t.status, TurnStatus::Error),
        other => panic!("last event {other:?}"),
    }
    let shown = format!("{events:?}");
    assert!(
        shown.contains("/v1/chat/completions answered 200 with text/html; charset=utf-8"),
        "{shown}"
    );
    task.abort();
}

#[tokio::test]
async fn other_non_stream_success_answers() {
    // Plain text that echoes the key: failed, with a scrubbed excerpt.
    let echo = format!(
        "Welcome! Your key {KEY} is not needed here. {}",
        "z".repeat(600)
    );
    let (task, url) = fixed_server("200 OK", Some("text/plain"), echo).await;
    let got = collect(&client(&url, ApiMode::Chat), request("gpt-4o")).await;
    let m = message(got.outcome());
    assert_eq!(got.outcome().kind, Some(FailureKind::BadRequest), "{m}");
    assert!(
        m.contains("answered 200 with text/plain, not an event stream"),
        "{m}"
    );
    assert!(
        m.contains("(first bytes: Welcome! Your key [redacted]"),
        "{m}"
    );
    assert!(!m.contains("SECRET") && m.len() < 400, "{m}");
    task.abort();

    // No content type, an HTML body.
    let (task, url) = fixed_server("200 OK", None, "<!doctype html>".into()).await;
    let got = collect(&client(&url, ApiMode::Chat), request("gpt-4o")).await;
    let m = message(got.outcome());
    assert!(
        m.contains("answered 200 with no content type, not an event stream"),
        "{m}"
    );
    task.abort();

    // A JSON error body without an `error` object: its message is surfaced, not retried.
    let (task, url) = fixed_server(
        "200 OK",
        Some("application/json"),
        r#"{"detail":"Not Found: use /api/chat"}"#.into(),
    )
    .await;
    let got = collect(&client(&url, ApiMode::Chat), request("gpt-4o")).await;
    let o = got.outcome();
    assert!(!RetryPolicy::is_retriable(o), "{o:?}");
    assert!(
        message(o).contains("with JSON that is not a completion: is the base URL right? (it says: Not Found: use /api/chat)"),
        "{o:?}"
    );
    task.abort();
}

#[tokio::test]
async fn event_streams_with_an_odd_or_missing_content_type_still_work() {
    let sse = concat!(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi there\"}}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    for ct in [None, Some("text/plain; charset=utf-8"), Some("text/html")] {
        let (task, url) = fixed_server("200 OK", ct, sse.to_string()).await;
        let got = collect(&client(&url, ApiMode::Chat), request("gpt-4o")).await;
        assert_eq!(
            got.outcome().status,
            OutcomeStatus::Completed,
            "{ct:?}: {:?}",
            got.outcome()
        );
        assert_eq!(got.text, "hi there", "{ct:?}");
        task.abort();
    }
    // A whole completion without a JSON content type.
    let whole = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}"#;
    let (task, url) = fixed_server("200 OK", Some("text/plain"), whole.to_string()).await;
    let got = collect(&client(&url, ApiMode::Chat), request("gpt-4o")).await;
    assert_eq!(
        got.outcome().status,
        OutcomeStatus::Completed,
        "{:?}",
        got.outcome()
    );
    assert_eq!(got.text, "whole");
    task.abort();
}

#[tokio::test]
async fn a_dead_port_says_connection_refused_and_names_the_base_url() {
    let url = dead_base_url();
    // Auto mode with an OpenAI model tries the Responses API first.
    let auto = client(&url, ApiMode::Auto);
    let anthropic_llm = build_client(&spec(Protocol::Anthropic, &url)).unwrap();
    let cases: [(&str, &dyn cairn_engine::LlmClient, &str); 3] = [
        ("auto", &auto, "gpt-4o"),
        ("chat", &client(&url, ApiMode::Chat), "gpt-4o"),
        ("anthropic", anthropic_llm.as_ref(), "claude-sonnet-4-5"),
    ];
    for (name, llm, model) in cases {
        let got = collect(llm, request(model)).await;
        let o = got.outcome();
        let at = format!("{name}: {o:?}");
        assert_eq!(
            (o.status, o.kind),
            (OutcomeStatus::Failed, Some(FailureKind::Network)),
            "{at}"
        );
        assert!(
            RetryPolicy::is_retriable(o),
            "a brief retry is allowed: {at}"
        );
        assert_eq!(
            message(o),
            format!("could not connect to {url}: connection refused — is the server running?"),
            "{at}"
        );
        let shown = o.describe();
        assert!(
            !shown.contains("timeout") && !shown.contains("/responses"),
            "{at}"
        );
    }
}

#[tokio::test]
async fn the_final_message_after_retries_says_connection_refused() {
    let url = dead_base_url();
    let llm = build_client(&spec(Protocol::Chat, &url)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let policy = RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    };
    let s = session(llm, "gpt-4o", ToolRegistry::new(), policy, dir.path());
    let events = run_turn(&s, "hello").await;
    let retries: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::LlmRetry(r) => Some(r.reason.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 1, "{events:?}");
    assert!(retries[0].contains("connection refused"), "{retries:?}");
    let errors: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Error(e) => Some(format!("{e:?}")),
            _ => None,
        })
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("connection refused") && !e.contains("timeout")),
        "{errors:?}"
    );
}

/// `list_models`: the picker's list and the settings' connection test.
mod model_listing {
    use cairn_providers::{list_models, EndpointError, ProviderSpec};
    use cairn_testkit::MockLlmServer;

    fn spec(base: &str, key: Option<&str>) -> ProviderSpec {
        ProviderSpec {
            provider: "compatible".into(),
            base_url: Some(base.into()),
            api_key: key.map(str::to_string),
            ..ProviderSpec::default()
        }
    }

    #[tokio::test]
    async fn lists_the_served_models_sending_the_key() {
        let server = MockLlmServer::start().await.unwrap();
        server.serve_models(&["zeta-coder", "alpha-chat"]);
        let ids = list_models(&spec(&server.base_url(), Some("sk-list-0123456789")))
            .await
            .unwrap();
        assert_eq!(ids, ["alpha-chat", "zeta-coder"]);
        let asked = server.model_list_requests();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].bearer(), Some("sk-list-0123456789"));
        assert!(server.requests().is_empty(), "no model request was made");
    }

    #[tokio::test]
    async fn a_dead_port_says_connection_refused() {
        let dead = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let err = list_models(&spec(&format!("http://127.0.0.1:{dead}/v1"), None))
            .await
            .unwrap_err();
        assert!(matches!(err, EndpointError::Unreachable { .. }), "{err:?}");
        let text = err.to_string();
        assert!(text.contains("connection refused"), "{text}");
        assert!(text.contains(&format!("127.0.0.1:{dead}")), "{text}");
    }

    #[tokio::test]
    async fn a_missing_listing_and_a_web_page_point_at_the_base_url() {
        let server = MockLlmServer::start().await.unwrap();
        let err = list_models(&spec(&server.base_url(), None))
            .await
            .unwrap_err();
        assert!(
            matches!(err, EndpointError::Status { status: 404, .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("base URL"), "{err}");
        let err = list_models(&spec("not a url", None)).await.unwrap_err();
        assert!(matches!(err, EndpointError::Config(_)), "{err:?}");
        let (_task, portal) = super::fixed_server(
            "200 OK",
            Some("text/html"),
            "<!DOCTYPE html><html><body>Sign in to the Wi-Fi</body></html>".into(),
        )
        .await;
        let err = list_models(&spec(&portal, None)).await.unwrap_err();
        assert!(matches!(err, EndpointError::NotAnApi { .. }), "{err:?}");
        assert!(err.to_string().contains("a web page"), "{err}");
    }

    #[tokio::test]
    async fn the_key_never_appears_in_an_error() {
        let dead = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let key = "sk-secret-abcdef0123456789";
        let base = format!("http://user:{key}@127.0.0.1:{dead}/v1");
        let err = list_models(&spec(&base, Some(key))).await.unwrap_err();
        assert!(!err.to_string().contains(key), "{err}");
    }
}
