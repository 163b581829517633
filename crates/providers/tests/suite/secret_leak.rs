//! Secret-leak test: with a recognisable fake key, turns that fail in every way (the server
//! echoing the key back in error bodies and stream errors included) go through every
//! protocol's client with the audit log on and tracing at TRACE; then every output is
//! searched: events, outcomes, debug output, log lines and audit files. Zero hits.

use crate::common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_engine::{RetryPolicy, ToolRegistry};
use cairn_providers::{build_client, ProviderSpec};
use cairn_testkit::{Fault, Reply};
use common::*;

/// The fake key: distinctive enough that any fragment of it is unmistakable.
const FAKE: &str = "sk-LEAKCANARY-7f3e9a1b2c4d5e6f8091a2b3c4d5e6f7";

/// Fragments that must never appear (the whole key and its distinctive middle).
const NEEDLES: &[&str] = &[FAKE, "LEAKCANARY", "7f3e9a1b2c4d5e6f8091"];

#[derive(Clone, Default)]
struct Buf(Arc<Mutex<Vec<u8>>>);

impl Write for Buf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn echo(code: u16, retry_after: Option<u64>) -> Fault {
    Fault::Status {
        code,
        retry_after,
        body: Some(cairn_testkit::openai_error(
            "Incorrect API key provided: {api_key}. Key {api_key} is not valid.",
            "invalid_request_error",
            Some("invalid_api_key"),
            None,
        )),
    }
}

fn failing_replies() -> Vec<Reply> {
    vec![
        Reply::fault(echo(401, None)),
        Reply::fault(echo(403, None)),
        Reply::fault(echo(400, None)),
        Reply::fault(echo(429, Some(1))),
        Reply::fault(echo(500, None)),
        Reply::fault(echo(529, None)),
        Reply::fault(Fault::Status {
            code: 502,
            retry_after: None,
            body: Some("<html>upstream said {api_key}</html>".into()),
        }),
        Reply::fault(Fault::insufficient_quota()),
        Reply::fault(Fault::ContextLengthExceeded),
        Reply::text("partial").then_fault(Fault::stream_error(
            "server_error",
            &format!("boom for key {FAKE}"),
        )),
        Reply::text("partial").then_fault(Fault::stream_error(
            "invalid_api_key",
            &format!("bad key {FAKE}"),
        )),
        Reply::text("partial").then_fault(Fault::DropMidStream),
        Reply::text("partial").then_fault(Fault::MalformedChunk),
        Reply::text("partial").then_fault(Fault::Stall(Duration::from_secs(3))),
    ]
}

fn assert_clean(what: &str, text: &str) {
    for n in NEEDLES {
        assert!(!text.contains(n), "{what} leaked `{n}`:\n{text}");
    }
}

/// Installs (once) a global subscriber that records nothing but leaves every call site to be
/// decided per event: without it, a site first reached by a test thread with no subscriber
/// could be cached as never enabled, and this test's own subscriber would miss its events.
fn undecided_global_subscriber() {
    use tracing::subscriber::Interest;
    struct Undecided;
    impl tracing::Subscriber for Undecided {
        fn register_callsite(&self, _: &'static tracing::Metadata<'static>) -> Interest {
            Interest::sometimes()
        }
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            false
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, _: &tracing::Event<'_>) {}
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = tracing::subscriber::set_global_default(Undecided);
    });
}

#[tokio::test]
async fn no_output_log_or_file_ever_contains_the_key() {
    let logs = Buf::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer({
            let logs = logs.clone();
            move || logs.clone()
        })
        .with_ansi(false)
        .finish();
    undecided_global_subscriber();
    let _guard = tracing::subscriber::set_default(subscriber);
    // A log call site another thread reached first may have cached "never enabled"; recompute
    // every site's interest with this subscriber present.
    tracing::callsite::rebuild_interest_cache();

    let audit = tempfile::tempdir().unwrap();
    let policy = RetryPolicy {
        max_retries: 0,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(1),
    };
    let mut everything = String::new();
    let mut turns = 0;
    for protocol in PROTOCOLS {
        let replies = failing_replies();
        let n = replies.len();
        let server = mock(replies).await;
        let mut s: ProviderSpec = spec(protocol, &server.base_url());
        s.api_key = Some(FAKE.to_string());
        s.log_dir = Some(audit.path().to_path_buf());
        s.extra_headers = vec![("X-Api-Token".into(), format!("{FAKE}-header"))];
        everything.push_str(&format!("{s:?}\n"));
        let llm = build_client(&s).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let session = session(
            llm.clone(),
            model_of(protocol),
            ToolRegistry::new(),
            policy.clone(),
            dir.path(),
        );
        for i in 0..n {
            let events = run_turn(&session, &format!("turn {i}")).await;
            turns += 1;
            assert!(
                matches!(events.last(), Some(cairn_protocol::Event::TurnEnd(_))),
                "{protocol:?} turn {i}"
            );
            for e in &events {
                everything.push_str(&serde_json::to_string(e).unwrap());
                everything.push_str(&format!("{e:?}\n"));
            }
        }
        // The server really received the key (so the test proves scrubbing, not absence).
        let reqs = server.requests();
        assert!(
            reqs.iter().all(|r| r.api_key() == Some(FAKE)),
            "{protocol:?}"
        );
        // A direct request too: chunks and outcome, Debug and describe().
        let got = collect(llm.as_ref(), request(model_of(protocol))).await;
        everything.push_str(&format!("{got:?} {}\n", got.outcome().describe()));
        // The session's own files.
        for entry in walk(dir.path()) {
            everything.push_str(&std::fs::read_to_string(&entry).unwrap_or_default());
        }
    }
    assert_eq!(turns, 3 * failing_replies().len());
    assert_clean("events and outcomes", &everything);

    let files = walk(audit.path());
    assert!(files.len() >= 2 * turns, "audit files: {}", files.len());
    let mut audit_text = String::new();
    for f in &files {
        audit_text.push_str(&std::fs::read_to_string(f).unwrap());
    }
    assert!(
        audit_text.contains("[redacted]"),
        "credential headers are shown redacted"
    );
    assert_clean("audit log", &audit_text);

    let log_text = String::from_utf8_lossy(&logs.0.lock().unwrap()).to_string();
    assert!(
        log_text.contains("LLM request"),
        "tracing was captured: {}",
        log_text.len()
    );
    assert_clean("tracing log", &log_text);
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
