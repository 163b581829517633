//! Seed 000's retry policy for 400s: a 400 whose body is a known transient shape (a gateway
//! saying in its own words that it is overloaded, unavailable, failing upstream, hit an
//! internal error or a rate limit, or asking to try again) is retried once, still reported
//! as the bad request it is; any other 400 is not retried. One test per shape, against the
//! testkit's mock server through a real client and an engine session.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use cairn_engine::{RetryPolicy, TRANSIENT_400_SHAPES};
use cairn_protocol::{Event, TurnStatus};
use cairn_providers::ApiMode;
use cairn_testkit::{openai_error, Fault, MockLlmServer, Reply};

/// A 400 with an OpenAI-style body saying `message`.
fn bad_request(message: &str) -> Reply {
    Reply::fault(Fault::Status {
        code: 400,
        retry_after: None,
        body: Some(openai_error(message, "invalid_request_error", None, None)),
    })
}

fn policy() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    }
}

/// Runs one turn against a mock serving `script`; the events and the requests it received.
async fn turn(script: Vec<Reply>) -> (Vec<Event>, usize) {
    let server = MockLlmServer::with_script(script).await.unwrap();
    let llm = Arc::new(common::client(&server.base_url(), ApiMode::Chat));
    let dir = tempfile::tempdir().unwrap();
    let s = common::session(
        llm,
        "gpt-4o",
        cairn_engine::ToolRegistry::new(),
        policy(),
        dir.path(),
    );
    let events = common::run_turn(&s, "hi").await;
    (events, server.requests().len())
}

fn ended(events: &[Event]) -> Option<TurnStatus> {
    events.iter().rev().find_map(|e| match e {
        Event::TurnEnd(t) => Some(t.status),
        _ => None,
    })
}

fn retries(events: &[Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, Event::LlmRetry(_)))
        .count()
}

/// One shape: retried once and the turn completes.
async fn retried_once(shape: &str, message: &str) {
    let phrases = TRANSIENT_400_SHAPES
        .iter()
        .find(|(s, _)| *s == shape)
        .map(|(_, p)| *p)
        .unwrap_or_else(|| panic!("no shape {shape}"));
    assert!(
        phrases
            .iter()
            .any(|p| message.to_ascii_lowercase().contains(p)),
        "{message} is of shape {shape}"
    );
    let (events, requests) = turn(vec![bad_request(message), Reply::text("ok")]).await;
    assert_eq!(
        ended(&events),
        Some(TurnStatus::Completed),
        "{shape}: {events:?}"
    );
    assert_eq!((requests, retries(&events)), (2, 1), "{shape}");
    // Twice in a row: retried once only, then the turn ends with the error.
    let (events, requests) = turn(vec![
        bad_request(message),
        bad_request(message),
        Reply::text("ok"),
    ])
    .await;
    assert_eq!(ended(&events), Some(TurnStatus::Error), "{shape}");
    assert_eq!(requests, 2, "{shape}: one retry per request");
}

#[tokio::test]
async fn an_overloaded_400_is_retried_once() {
    retried_once(
        "overloaded",
        "The engine is currently overloaded, please slow down",
    )
    .await;
}

#[tokio::test]
async fn an_unavailable_400_is_retried_once() {
    retried_once("unavailable", "Model gpt-4o is temporarily unavailable").await;
}

#[tokio::test]
async fn a_try_again_400_is_retried_once() {
    retried_once(
        "try_again",
        "We could not process your request. Please try again.",
    )
    .await;
}

#[tokio::test]
async fn an_upstream_400_is_retried_once() {
    retried_once(
        "upstream",
        "upstream connect error or disconnect/reset before headers",
    )
    .await;
}

#[tokio::test]
async fn an_internal_error_400_is_retried_once() {
    retried_once(
        "internal",
        "An internal error occurred while handling the request",
    )
    .await;
}

#[tokio::test]
async fn a_rate_limit_400_is_retried_once() {
    retried_once("rate_limit", "Too many requests for this model, slow down").await;
}

#[tokio::test]
async fn every_shape_has_its_test() {
    let tested = [
        "overloaded",
        "unavailable",
        "try_again",
        "upstream",
        "internal",
        "rate_limit",
    ];
    let shapes: Vec<&str> = TRANSIENT_400_SHAPES.iter().map(|(s, _)| *s).collect();
    assert_eq!(shapes, tested);
}

#[tokio::test]
async fn any_other_400_is_not_retried() {
    let (events, requests) = turn(vec![
        bad_request("Invalid value for 'temperature': expected a number."),
        Reply::text("ok"),
    ])
    .await;
    assert_eq!(ended(&events), Some(TurnStatus::Error));
    assert_eq!((requests, retries(&events)), (1, 0));
}
