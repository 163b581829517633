//! The fault matrix: every failure class × every protocol (Chat Completions, Responses,
//! Anthropic Messages) pins the outcome (status, kind, wait), the retry decision of the
//! engine's policy, and that a turn hitting it still ends with `turn_end` — recovered after
//! a retry when the failure is transient, ended with an error when it is not.

use crate::common;

use std::time::Duration;

use cairn_engine::{FailureKind, LlmOutcome, OutcomeStatus, RetryPolicy, ToolRegistry};
use cairn_protocol::{Event, TurnStatus};
use cairn_providers::build_client;
use cairn_testkit::{Fault, Reply};
use common::*;

/// What a row must produce.
struct Expect {
    status: OutcomeStatus,
    kind: Option<FailureKind>,
    http: Option<u16>,
    retry_after: Option<Duration>,
    retriable: bool,
    says: &'static str,
}

struct Row {
    name: &'static str,
    reply: fn() -> Reply,
    expect: Expect,
}

fn rows() -> Vec<Row> {
    use FailureKind::*;
    use OutcomeStatus::*;
    let e = |status, kind, http, retry_after, retriable, says| Expect {
        status,
        kind,
        http,
        retry_after,
        retriable,
        says,
    };
    vec![
        Row {
            name: "idle stall",
            reply: || Reply::text("so far").then_fault(Fault::Stall(Duration::from_secs(5))),
            expect: e(Timeout, None, None, None, true, "stream idle timeout"),
        },
        Row {
            name: "dropped mid-stream",
            reply: || Reply::text("half").then_fault(Fault::DropMidStream),
            expect: e(Timeout, Some(Network), None, None, true, "stream dropped"),
        },
        Row {
            name: "5xx",
            reply: || Reply::fault(Fault::server_error()),
            expect: e(Failed, Some(Server), Some(500), None, true, "server error"),
        },
        Row {
            name: "429 with Retry-After",
            reply: || Reply::fault(Fault::rate_limited(7)),
            expect: e(
                Failed,
                Some(RateLimited),
                Some(429),
                Some(Duration::from_secs(7)),
                true,
                "rate limited",
            ),
        },
        Row {
            name: "429 with a 'try again in 11.05s' message",
            reply: || Reply::fault(Fault::rate_limited_with_hint()),
            expect: e(
                Failed,
                Some(RateLimited),
                Some(429),
                Some(Duration::from_millis(11_050)),
                true,
                "try again in 11.05s",
            ),
        },
        Row {
            name: "529 overloaded",
            reply: || Reply::fault(Fault::overloaded()),
            expect: e(Failed, Some(Server), Some(529), None, true, "overloaded"),
        },
        Row {
            name: "overloaded error mid-stream",
            reply: || {
                Reply::text("partial")
                    .then_fault(Fault::stream_error("overloaded_error", "Overloaded"))
            },
            expect: e(
                Failed,
                Some(Server),
                None,
                None,
                true,
                "overload mid-stream",
            ),
        },
        Row {
            name: "malformed stream",
            reply: || Reply::text("fine so far").then_fault(Fault::MalformedChunk),
            expect: e(Malformed, None, None, None, true, "unparsable"),
        },
        Row {
            name: "context too long",
            reply: || Reply::fault(Fault::ContextLengthExceeded),
            expect: e(
                Failed,
                Some(ContextOverflow),
                Some(400),
                None,
                false,
                "context window",
            ),
        },
        Row {
            name: "quota exhausted",
            reply: || Reply::fault(Fault::insufficient_quota()),
            expect: e(
                Failed,
                Some(QuotaExhausted),
                None,
                None,
                false,
                "quota exhausted",
            ),
        },
        Row {
            name: "auth",
            reply: || Reply::fault(Fault::unauthorized()),
            expect: e(Auth, None, Some(401), None, false, "API key was rejected"),
        },
    ]
}

fn check(protocol: Protocol, name: &str, o: &LlmOutcome, x: &Expect) {
    let at = format!("{protocol:?} / {name}: {o:?}");
    assert_eq!(o.status, x.status, "{at}");
    assert_eq!(o.kind, x.kind, "{at}");
    if let Some(code) = x.http {
        assert_eq!(o.http_status, Some(code), "{at}");
    }
    assert_eq!(o.retry_after, x.retry_after, "{at}");
    assert_eq!(RetryPolicy::is_retriable(o), x.retriable, "{at}");
    assert!(o.describe().contains(x.says), "{at}");
    assert!(!o.describe().contains(KEY), "{at}");
}

/// One request per row and protocol: the outcome and the retry decision.
#[tokio::test]
async fn every_fault_is_classified_the_same_on_every_protocol() {
    for protocol in PROTOCOLS {
        for row in rows() {
            let server = mock(vec![(row.reply)()]).await;
            let llm = build_client(&spec(protocol, &server.base_url())).unwrap();
            let got = collect(llm.as_ref(), request(model_of(protocol))).await;
            check(protocol, row.name, got.outcome(), &row.expect);
            // The quota row is not a rate limit on Anthropic either (it answers 400 there).
            if row.name == "quota exhausted" && protocol == Protocol::Anthropic {
                assert_eq!(got.outcome().http_status, Some(400));
            }
        }
    }
}

#[tokio::test]
async fn connection_refused_is_a_retriable_network_failure() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    drop(listener);
    for protocol in PROTOCOLS {
        let llm = build_client(&spec(protocol, &url)).unwrap();
        let got = collect(llm.as_ref(), request(model_of(protocol))).await;
        let x = Expect {
            status: OutcomeStatus::Failed,
            kind: Some(FailureKind::Network),
            http: None,
            retry_after: None,
            retriable: true,
            says: "connection refused",
        };
        check(protocol, "connection refused", got.outcome(), &x);
    }
}

/// The same rows through the engine: the turn always ends with `turn_end`; transient
/// failures are retried (an `llm_retry` naming the reason) and the turn completes.
#[tokio::test]
async fn every_fault_still_ends_the_turn() {
    let policy = RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    };
    for protocol in PROTOCOLS {
        for row in rows() {
            let server = mock(vec![(row.reply)(), Reply::text("recovered")]).await;
            let llm = build_client(&spec(protocol, &server.base_url())).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let s = session(
                llm,
                model_of(protocol),
                ToolRegistry::new(),
                policy.clone(),
                dir.path(),
            );
            let events = run_turn(&s, "hello").await;
            let at = format!("{protocol:?} / {}", row.name);
            let end = match events.last() {
                Some(Event::TurnEnd(t)) => t.status,
                other => panic!("{at}: last event {other:?}"),
            };
            let retries: Vec<_> = events
                .iter()
                .filter_map(|e| match e {
                    Event::LlmRetry(r) => Some(r.clone()),
                    _ => None,
                })
                .collect();
            if row.expect.retriable {
                assert_eq!(retries.len(), 1, "{at}");
                assert!(
                    retries[0].reason.contains(row.expect.says),
                    "{at}: {}",
                    retries[0].reason
                );
                assert!(
                    retries[0].wait_ms <= 20,
                    "{at}: the wait is capped by the policy"
                );
                assert_eq!(end, TurnStatus::Completed, "{at}");
            } else {
                assert!(retries.is_empty(), "{at}: {retries:?}");
                if row.expect.kind != Some(FailureKind::ContextOverflow) {
                    // (Overflow hands over to the engine's compaction, which owns what follows.)
                    assert_eq!(end, TurnStatus::Error, "{at}");
                    assert!(events.iter().any(|e| matches!(e, Event::Error(_))), "{at}");
                }
            }
        }
    }
}
