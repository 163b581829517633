#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Parallel agents' streaming: 8 sessions, each streaming a 100k-chunk answer from its own
//! mock server through provider + engine at the same time, against 8 raw reads of the same
//! streams at the same time over the same sockets. Prints the ratio of the medians of the
//! wall time until all 8 are done; the target is ≤ 2.0×.
//!
//! `cargo bench -p cairn-runtime --bench stream_many` measures (release build). Under
//! `cargo test` (no `--bench` argument) it runs one small round as a smoke check and asserts
//! correctness only.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_engine::{EngineConfig, Session};
use cairn_protocol::{Event, TurnStatus};
use cairn_providers::{ApiMode, OpenAiClient, OpenAiConfig};
use cairn_testkit::{MockLlmServer, Reply};
use futures::StreamExt;

const SESSIONS: usize = 8;

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (chunks, runs) = if measuring { (100_000, 5) } else { (1_000, 1) };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(bench(chunks, runs, measuring));
}

async fn bench(chunks: usize, runs: usize, measuring: bool) {
    let text: Vec<String> = (0..chunks).map(|i| format!("w{} ", i % 1000)).collect();
    let expected: usize = text.iter().map(|t| t.len()).sum();
    let mut servers = Vec::new();
    for _ in 0..SESSIONS {
        servers.push(MockLlmServer::start().await.unwrap());
    }
    let ws = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let (mut raw_times, mut engine_times) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        raw_times.push(raw_all(&http, &servers, &text, expected).await);
        engine_times.push(engine_all(&servers, &text, expected, ws.path()).await);
        raw_times.push(raw_all(&http, &servers, &text, expected).await);
    }
    let raw = median(&mut raw_times);
    let engine = median(&mut engine_times);
    let ratio = engine.as_secs_f64() / raw.as_secs_f64().max(1e-9);
    println!(
        "{SESSIONS} sessions x {chunks} chunks at once, median of {runs} runs: raw reads {:.1} ms, engine {:.1} ms, ratio {ratio:.2}x (target <= 2.00x){}",
        raw.as_secs_f64() * 1e3,
        engine.as_secs_f64() * 1e3,
        if measuring { "" } else { " [smoke run: timings not meaningful]" }
    );
}

/// All raw reads at once; the wall time until the last ends.
async fn raw_all(
    http: &reqwest::Client,
    servers: &[MockLlmServer],
    text: &[String],
    expected: usize,
) -> Duration {
    for s in servers {
        s.push(Reply::text_chunks(text.to_vec()));
    }
    let t0 = Instant::now();
    let reads = servers.iter().map(|s| {
        let (http, url) = (http.clone(), format!("{}/chat/completions", s.base_url()));
        tokio::spawn(async move {
            let resp = http
                .post(url)
                .json(&serde_json::json!({"model": "m", "stream": true, "messages": []}))
                .send()
                .await
                .unwrap();
            let mut body = resp.bytes_stream();
            let mut n = 0usize;
            while let Some(b) = body.next().await {
                n += b.unwrap().len();
            }
            n
        })
    });
    for n in futures::future::join_all(reads).await {
        assert!(n.unwrap() > expected, "every raw read got the whole stream");
    }
    t0.elapsed()
}

/// All engine sessions at once; the wall time until the last turn ends.
async fn engine_all(
    servers: &[MockLlmServer],
    text: &[String],
    expected: usize,
    ws: &std::path::Path,
) -> Duration {
    let mut sessions = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        s.push(Reply::text_chunks(text.to_vec()));
        let mut cfg = OpenAiConfig::new(s.base_url(), Some("k".into()));
        cfg.api_mode = ApiMode::Chat;
        let llm = Arc::new(OpenAiClient::new(cfg).unwrap());
        let config = EngineConfig::new(ws.to_path_buf(), ws.join(format!(".state-{i}")), "m");
        sessions.push(Session::builder(config, llm).build());
    }
    let t0 = Instant::now();
    let turns = sessions.iter().map(|session| {
        let mut stream = session.run("go");
        tokio::spawn(async move {
            let (mut got, mut status) = (0usize, None);
            while let Some(ev) = stream.recv().await {
                match ev {
                    Event::AssistantDelta(d) => got += d.text.len(),
                    Event::TurnEnd(t) => status = Some(t.status),
                    _ => {}
                }
            }
            (got, status)
        })
    });
    for r in futures::future::join_all(turns).await {
        let (got, status) = r.unwrap();
        assert_eq!(status, Some(TurnStatus::Completed));
        assert_eq!(got, expected, "every byte of every answer arrived");
    }
    t0.elapsed()
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}
