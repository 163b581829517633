//! Every failure ends the stream with the right outcome, never an error.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_engine::{FailureKind, LlmChunk, LlmClient, OutcomeStatus};
use cairn_providers::{ApiMode, OpenAiClient};
use cairn_testkit::{Fault, MockLlmServer, Reply};
use common::{client, collect, collect_with, config, request, KEY};
use futures::StreamExt;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

async fn one(reply: Reply) -> (MockLlmServer, common::Collected) {
    let server = MockLlmServer::with_script(vec![reply]).await.unwrap();
    let got = collect(
        &client(&server.base_url(), ApiMode::Chat),
        request("gpt-4o"),
    )
    .await;
    (server, got)
}

#[tokio::test]
async fn drop_mid_stream_is_a_timeout() {
    let (_s, got) = one(Reply::text("half an ans").then_fault(Fault::DropMidStream)).await;
    let o = got.outcome();
    assert_eq!(o.status, OutcomeStatus::Timeout, "{o:?}");
    assert!(
        o.message.as_deref().unwrap().contains("stream dropped"),
        "{o:?}"
    );
    assert_eq!(got.text, "half an ans");
}

#[tokio::test]
async fn tool_calls_of_a_dropped_stream_are_not_emitted() {
    let reply = Reply::tool_call(
        "c1",
        "write_file",
        serde_json::json!({"path": "a", "content": "b"}),
    )
    .then_fault(Fault::DropMidStream);
    let (_s, got) = one(reply).await;
    assert_eq!(got.outcome().status, OutcomeStatus::Timeout);
    assert!(got.calls.is_empty());
}

#[tokio::test]
async fn stall_past_the_idle_timeout_is_a_timeout() {
    let server = MockLlmServer::with_script(vec![
        Reply::text("so far").then_fault(Fault::Stall(Duration::from_secs(5)))
    ])
    .await
    .unwrap();
    let mut cfg = config(&server.base_url(), ApiMode::Chat);
    cfg.stream_idle_timeout = Duration::from_millis(250);
    let start = Instant::now();
    let got = collect(&OpenAiClient::new(cfg).unwrap(), request("gpt-4o")).await;
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    let o = got.outcome();
    assert_eq!(o.status, OutcomeStatus::Timeout);
    assert!(o.message.as_deref().unwrap().contains("250 ms"), "{o:?}");
    assert_eq!(got.text, "so far");
}

#[tokio::test]
async fn slow_but_steady_stream_is_not_idle() {
    let server = MockLlmServer::with_script(vec![Reply::text("abcdefgh")
        .chunk_size(1)
        .delay_between_chunks(Duration::from_millis(60))])
    .await
    .unwrap();
    let mut cfg = config(&server.base_url(), ApiMode::Chat);
    cfg.stream_idle_timeout = Duration::from_millis(250);
    let got = collect(&OpenAiClient::new(cfg).unwrap(), request("gpt-4o")).await;
    assert_eq!(got.outcome().status, OutcomeStatus::Completed);
    assert_eq!(got.text, "abcdefgh");
}

#[tokio::test]
async fn rate_limit_carries_retry_after() {
    let (_s, got) = one(Reply::fault(Fault::rate_limited(7))).await;
    let o = got.outcome();
    assert_eq!(o.status, OutcomeStatus::Failed);
    assert_eq!(o.kind, Some(FailureKind::RateLimited));
    assert_eq!(o.http_status, Some(429));
    assert_eq!(o.retry_after, Some(Duration::from_secs(7)));
    assert!(
        o.message.as_deref().unwrap().contains("Rate limit reached"),
        "{o:?}"
    );
}

#[tokio::test]
async fn server_error_is_failed_server() {
    let (_s, got) = one(Reply::fault(Fault::server_error())).await;
    let o = got.outcome();
    assert_eq!(
        (o.status, o.kind, o.http_status),
        (OutcomeStatus::Failed, Some(FailureKind::Server), Some(500))
    );
}

#[tokio::test]
async fn unauthorized_is_auth_and_never_shows_the_key() {
    let (server, got) = one(Reply::fault(Fault::unauthorized())).await;
    let o = got.outcome();
    assert_eq!(o.status, OutcomeStatus::Auth);
    assert_eq!(o.http_status, Some(401));
    let text = format!("{o:?} {}", o.describe());
    assert!(
        text.contains("rejected") && text.contains(&server.base_url()),
        "{text}"
    );
    assert!(text.contains("Incorrect API key provided"), "{text}");
    assert!(
        !text.contains(KEY) && !text.contains("0123456789") && !text.contains("SECRET"),
        "{text}"
    );
}

#[tokio::test]
async fn other_status_codes_are_bad_requests() {
    let (_s, got) = one(Reply::fault(Fault::Status {
        code: 404,
        retry_after: None,
        body: None,
    }))
    .await;
    let o = got.outcome();
    assert_eq!(
        (o.status, o.kind, o.http_status),
        (
            OutcomeStatus::Failed,
            Some(FailureKind::BadRequest),
            Some(404)
        )
    );
    let (_s, got) = one(Reply::fault(Fault::Status {
        code: 403,
        retry_after: None,
        body: Some("forbidden".into()),
    }))
    .await;
    assert_eq!(got.outcome().status, OutcomeStatus::Auth);
}

#[tokio::test]
async fn malformed_chunk_is_malformed() {
    let (_s, got) = one(Reply::text("fine so far").then_fault(Fault::MalformedChunk)).await;
    let o = got.outcome();
    assert_eq!(o.status, OutcomeStatus::Malformed, "{o:?}");
    assert_eq!(got.text, "fine so far");
}

#[tokio::test]
async fn context_length_exceeded_is_context_overflow() {
    let (_s, got) = one(Reply::fault(Fault::ContextLengthExceeded)).await;
    let o = got.outcome();
    assert_eq!(
        (o.status, o.kind, o.http_status),
        (
            OutcomeStatus::Failed,
            Some(FailureKind::ContextOverflow),
            Some(400)
        )
    );
}

#[tokio::test]
async fn cancellation_mid_stream_aborts_quickly() {
    let server = MockLlmServer::with_script(vec![Reply::text(&"x".repeat(200))
        .chunk_size(1)
        .delay_between_chunks(Duration::from_millis(50))])
    .await
    .unwrap();
    let c = client(&server.base_url(), ApiMode::Chat);
    let cancel = CancellationToken::new();
    let mut stream = c.stream(request("gpt-4o"), cancel.clone());
    let first = stream.next().await.unwrap();
    assert!(matches!(first, LlmChunk::Text(_)), "{first:?}");
    let start = Instant::now();
    cancel.cancel();
    let rest: Vec<LlmChunk> = tokio::time::timeout(Duration::from_secs(2), stream.collect())
        .await
        .unwrap();
    assert!(
        start.elapsed() < Duration::from_millis(200),
        "{:?}",
        start.elapsed()
    );
    match rest.last() {
        Some(LlmChunk::End(o)) => assert_eq!(o.status, OutcomeStatus::Aborted),
        other => panic!("{other:?}"),
    }
    assert!(rest.len() <= 2, "{rest:?}");
}

/// A server that accepts connections and never answers.
/// A server that accepts connections and never answers; `accepted` is notified at each.
async fn silent_server() -> (tokio::task::JoinHandle<()>, String, Arc<Notify>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let accepted = Arc::new(Notify::new());
    let seen = accepted.clone();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
            seen.notify_one();
        }
    });
    (task, url, accepted)
}

#[tokio::test]
async fn cancellation_while_waiting_for_headers_aborts_quickly() {
    let (task, url, accepted) = silent_server().await;
    let c = client(&url, ApiMode::Chat);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    // Cancelled once the request is on the wire, waiting for headers.
    tokio::spawn(async move {
        accepted.notified().await;
        trigger.cancel();
    });
    let start = Instant::now();
    let got = collect_with(&c, request("gpt-4o"), cancel).await;
    assert_eq!(got.outcome().status, OutcomeStatus::Aborted);
    assert!(
        start.elapsed() < Duration::from_millis(600),
        "{:?}",
        start.elapsed()
    );
    task.abort();
}

#[tokio::test]
async fn no_headers_within_the_request_timeout_is_a_timeout() {
    let (task, url, _) = silent_server().await;
    let mut cfg = config(&url, ApiMode::Chat);
    cfg.request_timeout = Duration::from_millis(300);
    let got = collect(&OpenAiClient::new(cfg).unwrap(), request("gpt-4o")).await;
    let o = got.outcome();
    assert_eq!(o.status, OutcomeStatus::Timeout, "{o:?}");
    assert_eq!(o.kind, None);
    task.abort();
}

#[tokio::test]
async fn connection_refused_is_a_network_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    let got = collect(&client(&url, ApiMode::Auto), request("gpt-4o")).await;
    let o = got.outcome();
    assert_eq!(
        (o.status, o.kind),
        (OutcomeStatus::Failed, Some(FailureKind::Network)),
        "{o:?}"
    );
    assert!(o.describe().contains("connection refused"), "{o:?}");
    assert!(!o.message.as_deref().unwrap().contains(KEY));
}

#[tokio::test]
async fn exhausted_script_fails_loudly() {
    let server = MockLlmServer::start().await.unwrap();
    let got = collect(
        &client(&server.base_url(), ApiMode::Chat),
        request("gpt-4o"),
    )
    .await;
    let o = got.outcome();
    assert_eq!(o.kind, Some(FailureKind::Server));
    assert!(
        o.message
            .as_deref()
            .unwrap()
            .contains("mock script exhausted"),
        "{o:?}"
    );
}
