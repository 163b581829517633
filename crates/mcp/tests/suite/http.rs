//! The remote transports against the test server on 127.0.0.1: Streamable HTTP (rmcp's
//! server, via axum) with configured headers, and the legacy HTTP+SSE protocol (a small
//! axum bridge in front of the same server, since rmcp no longer ships SSE).

use crate::common;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::routing::{get, post};
use axum::Router;
use cairn_mcp::testing::{Faults, TestServer};
use cairn_mcp::{ServerConfig, ServerStatus, TransportConfig};
use common::*;
use futures::channel::mpsc;
use futures::StreamExt;
use rmcp::service::{RoleServer, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::sink_stream::SinkStreamTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServiceExt;
use serde_json::json;

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}")
}

fn remote(name: &str, transport: TransportConfig) -> ServerConfig {
    ServerConfig {
        name: name.into(),
        transport: Some(transport),
        enabled: true,
        startup_timeout: None,
        call_timeout: None,
        max_call_timeout: None,
        source: PathBuf::from("(test)"),
        held: None,
    }
}

fn headers() -> BTreeMap<String, String> {
    [
        ("Authorization".to_string(), "Bearer tok-123".to_string()),
        ("X-Team".to_string(), "cairn".to_string()),
    ]
    .into()
}

#[tokio::test(flavor = "multi_thread")]
async fn streamable_http_lists_calls_and_sends_configured_headers() {
    let service = StreamableHttpService::new(
        || Ok(TestServer::new(Faults::default())),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let base = serve(Router::new().nest_service("/mcp", service)).await;
    let h = Harness::new(
        vec![remote(
            "web",
            TransportConfig::Http {
                url: format!("{base}/mcp"),
                headers: headers(),
            },
        )],
        |_| {},
    );
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["web"], "{failed:?}");
    assert_eq!(h.manager.status()[0].transport, "http");
    assert_eq!(
        h.call("mcp__web__echo", json!({"text": "over http"}))
            .await
            .unwrap()
            .content,
        "over http"
    );
    let seen = h
        .call("mcp__web__headers", json!({}))
        .await
        .unwrap()
        .content;
    assert!(seen.contains("authorization: Bearer tok-123"), "{seen}");
    assert!(seen.contains("x-team: cairn"), "{seen}");
    let out = h
        .call("mcp__web__slow", json!({"steps": 3, "delay_ms": 50}))
        .await
        .unwrap();
    assert_eq!(out.content, "done after 3 steps");
    let img = h.call("mcp__web__image", json!({})).await.unwrap();
    assert!(img.content.contains("[image: image/png, 70 bytes]"));
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unreachable_http_server_fails_within_its_startup_timeout() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut cfg = remote(
        "gone",
        TransportConfig::Http {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: BTreeMap::new(),
        },
    );
    cfg.startup_timeout = Some(std::time::Duration::from_secs(3));
    let h = Harness::new(vec![cfg], |_| {});
    let started = std::time::Instant::now();
    let (_, failed) = h.manager.connect_all().await;
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(failed.len(), 1);
    assert!(matches!(
        h.manager.status()[0].status,
        ServerStatus::Failed { .. }
    ));
    h.manager.close_all().await;
}

/// A legacy SSE bridge: one session at a time, like the 2024-11-05 reference servers.
#[derive(Clone, Default)]
struct Bridge {
    to_server: Arc<Mutex<Option<mpsc::UnboundedSender<RxJsonRpcMessage<RoleServer>>>>>,
    seen_headers: Arc<Mutex<Vec<String>>>,
}

fn record(b: &Bridge, h: &HeaderMap) {
    let mut seen = b.seen_headers.lock().unwrap();
    for (k, v) in h {
        seen.push(format!("{}: {}", k, v.to_str().unwrap_or("?")));
    }
}

async fn sse_open(
    State(b): State<Bridge>,
    headers: HeaderMap,
) -> Sse<impl futures::Stream<Item = Result<Event, Infallible>>> {
    record(&b, &headers);
    let (to_server_tx, to_server_rx) = mpsc::unbounded::<RxJsonRpcMessage<RoleServer>>();
    let (from_server_tx, from_server_rx) = mpsc::unbounded::<TxJsonRpcMessage<RoleServer>>();
    *b.to_server.lock().unwrap() = Some(to_server_tx);
    tokio::spawn(async move {
        let transport = SinkStreamTransport::new(from_server_tx, to_server_rx);
        if let Ok(running) = TestServer::new(Faults::default()).serve(transport).await {
            let _ = running.waiting().await;
        }
    });
    let first = futures::stream::once(async {
        Ok(Event::default()
            .event("endpoint")
            .data("/messages?sessionId=1"))
    });
    let rest = from_server_rx.map(|m| {
        Ok(Event::default()
            .event("message")
            .data(serde_json::to_string(&m).unwrap()))
    });
    Sse::new(first.chain(rest))
}

async fn sse_post(State(b): State<Bridge>, headers: HeaderMap, body: String) -> StatusCode {
    record(&b, &headers);
    let Ok(msg) = serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(&body) else {
        return StatusCode::BAD_REQUEST;
    };
    match b.to_server.lock().unwrap().as_ref() {
        Some(tx) if tx.unbounded_send(msg).is_ok() => StatusCode::ACCEPTED,
        _ => StatusCode::NOT_FOUND,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_sse_lists_calls_and_sends_headers() {
    let bridge = Bridge::default();
    let router = Router::new()
        .route("/sse", get(sse_open))
        .route("/messages", post(sse_post))
        .with_state(bridge.clone());
    let base = serve(router).await;
    // `type` left out: a URL ending in /sse is taken as legacy SSE.
    let cfg = cairn_mcp::config::parse_config_text(
        &json!({"mcpServers": {"old": {"url": format!("{base}/sse"), "headers": {"Authorization": "Bearer tok-123"}}}}).to_string(),
        std::path::Path::new("/tmp/mcp.json"),
        &cairn_mcp::VarContext::process(),
    );
    assert!(cfg.warnings.is_empty(), "{:?}", cfg.warnings);
    assert_eq!(cfg.servers[0].transport.as_ref().unwrap().kind(), "sse");
    let h = Harness::new(cfg.servers, |_| {});
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["old"], "{failed:?}");
    assert_eq!(
        h.call("mcp__old__echo", json!({"text": "over sse"}))
            .await
            .unwrap()
            .content,
        "over sse"
    );
    let out = h
        .call("mcp__old__slow", json!({"steps": 2, "delay_ms": 50}))
        .await
        .unwrap();
    assert_eq!(out.content, "done after 2 steps");
    let err = h.call("mcp__old__fail", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("reported an error"));
    let seen = bridge.seen_headers.lock().unwrap().clone();
    assert!(
        seen.iter()
            .filter(|h| *h == "authorization: Bearer tok-123")
            .count()
            >= 2,
        "GET and POST carry it: {seen:?}"
    );
    h.manager.close_all().await;
}
