#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Streaming overhead: a 100k-chunk answer from the mock server through provider + engine to
//! a sink, against a raw read of the same stream over the same socket. Prints the ratio of
//! medians; the target is ≤ 1.5×.
//!
//! `cargo bench -p cairn-runtime --bench stream` measures (release build). Under `cargo test`
//! (no `--bench` argument) it runs one small round as a smoke check and asserts correctness only.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_engine::{EngineConfig, Session};
use cairn_protocol::{Event, TurnStatus};
use cairn_providers::{ApiMode, OpenAiClient, OpenAiConfig};
use cairn_testkit::{MockLlmServer, Reply};
use futures::StreamExt;

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (chunks, runs) = if measuring { (100_000, 11) } else { (2_000, 1) };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(bench(chunks, runs, measuring));
}

async fn bench(chunks: usize, runs: usize, measuring: bool) {
    let text: Vec<String> = (0..chunks).map(|i| format!("w{} ", i % 1000)).collect();
    let expected: usize = text.iter().map(|t| t.len()).sum();
    let server = MockLlmServer::start().await.unwrap();
    let ws = tempfile::tempdir().unwrap();
    let mut raw = RawSamples::default();
    let mut engine_times = Vec::new();
    let mut provider_times = Vec::new();
    let mut delta_counts = Vec::new();
    // CPU time of the whole process (mock server included) per phase: unlike wall time it
    // does not grow when other work shares the cores.
    let (mut provider_cpu, mut engine_cpu) = (Vec::new(), Vec::new());
    let mut sse_times = Vec::new();
    let http = reqwest::Client::new();
    for _ in 0..runs {
        // Raw: the same request, bytes read to the end, nothing parsed; once before and once
        // after the other phases, so the order favours neither side.
        raw_phase(&http, &server, &text, expected, &mut raw).await;

        // For reference: the same stream decoded by `sseer::EventStream` into owned events and
        // nothing else, on a runtime worker like the engine's turn (not on this thread). The
        // providers decode each read in place with sseer's line parser instead.
        server.push(Reply::text_chunks(text.clone()));
        let (h, base) = (http.clone(), server.base_url());
        sse_times.push(
            tokio::spawn(async move { read_events(&h, &base).await })
                .await
                .unwrap(),
        );

        // Provider only: SSE parsed into chunks, no engine.
        server.push(Reply::text_chunks(text.clone()));
        let mut cfg = OpenAiConfig::new(server.base_url(), Some("k".into()));
        cfg.api_mode = ApiMode::Chat;
        let client = OpenAiClient::new(cfg).unwrap();
        let c0 = cpu_time();
        let t0 = Instant::now();
        let req = cairn_engine::LlmRequest {
            model: "m".into(),
            messages: vec![cairn_protocol::Message::user("go")],
            tools: vec![],
            reasoning_effort: None,
            req_id: "r".into(),
        };
        let mut s = cairn_engine::LlmClient::stream(&client, req, Default::default());
        let mut pgot = 0usize;
        while let Some(c) = s.next().await {
            if let cairn_engine::LlmChunk::Text(t) = c {
                pgot += t.len();
            }
        }
        provider_times.push(t0.elapsed());
        provider_cpu.push(cpu_time() - c0);
        assert_eq!(pgot, expected);

        // Engine: provider parses SSE, engine emits one event per delta, the sink counts them.
        server.push(Reply::text_chunks(text.clone()));
        let mut cfg = OpenAiConfig::new(server.base_url(), Some("k".into()));
        cfg.api_mode = ApiMode::Chat;
        let llm = Arc::new(OpenAiClient::new(cfg).unwrap());
        let config = EngineConfig::new(ws.path().to_path_buf(), ws.path().join(".state"), "m");
        let session = Session::builder(config, llm).build();
        let c0 = cpu_time();
        let t0 = Instant::now();
        let mut stream = session.run("go");
        let (mut deltas, mut got, mut status) = (0usize, 0usize, None);
        while let Some(ev) = stream.recv().await {
            match ev {
                Event::AssistantDelta(d) => {
                    deltas += 1;
                    got += d.text.len();
                }
                Event::TurnEnd(t) => status = Some(t.status),
                _ => {}
            }
        }
        engine_times.push(t0.elapsed());
        engine_cpu.push(cpu_time() - c0);
        delta_counts.push(deltas);
        assert_eq!(status, Some(TurnStatus::Completed));
        assert_eq!(got, expected, "every byte of the answer arrived");
        // Increments that arrive together are merged (at most 64 KiB per event), never all of
        // them into one: the answer is still streamed.
        assert!(
            deltas >= expected / (64 * 1024),
            "deltas were streamed: {deltas}"
        );
        raw_phase(&http, &server, &text, expected, &mut raw).await;
    }
    let raw_n = raw.times.len();
    let raw_reads = raw.reads;
    let mut raw_cpu = raw.cpu;
    let raw = median(&mut raw.times);
    let engine = median(&mut engine_times);
    let provider = median(&mut provider_times);
    let ratio = engine.as_secs_f64() / raw.as_secs_f64().max(1e-9);
    println!(
        "  breakdown: provider alone {:.1} ms ({:.2}x raw); engine events per run: {:?}; raw body reads per run: {:?}",
        provider.as_secs_f64() * 1e3,
        provider.as_secs_f64() / raw.as_secs_f64().max(1e-9),
        delta_counts,
        raw_reads
    );
    let sse = median(&mut sse_times);
    println!(
        "  reference: the stream decoded by sseer::EventStream alone (no JSON, no engine) {:.1} ms ({:.2}x raw)",
        sse.as_secs_f64() * 1e3,
        sse.as_secs_f64() / raw.as_secs_f64().max(1e-9),
    );
    if cpu_time() > Duration::ZERO {
        let (r, p, e) = (
            median(&mut raw_cpu),
            median(&mut provider_cpu),
            median(&mut engine_cpu),
        );
        println!(
            "  cpu time (all threads, server included): raw {:.1} ms, provider {:.1} ms, engine {:.1} ms, ratio {:.2}x",
            r.as_secs_f64() * 1e3,
            p.as_secs_f64() * 1e3,
            e.as_secs_f64() * 1e3,
            e.as_secs_f64() / r.as_secs_f64().max(1e-9)
        );
    }
    println!(
        "stream {chunks} chunks, median of {runs} runs ({} raw reads): raw read {:.1} ms, engine {:.1} ms, ratio {ratio:.2}x (target <= 1.50x){}",
        raw_n,
        raw.as_secs_f64() * 1e3,
        engine.as_secs_f64() * 1e3,
        if measuring {
            ""
        } else {
            " [smoke run: timings not meaningful]"
        }
    );
}

/// Wall times, process CPU times and body reads of the raw phases.
#[derive(Default)]
struct RawSamples {
    times: Vec<Duration>,
    cpu: Vec<Duration>,
    reads: Vec<usize>,
}

/// One raw read of the stream: the request, its body bytes read to the end, nothing parsed.
async fn raw_phase(
    http: &reqwest::Client,
    server: &MockLlmServer,
    text: &[String],
    expected: usize,
    into: &mut RawSamples,
) {
    server.push(Reply::text_chunks(text.to_vec()));
    let c0 = cpu_time();
    let t0 = Instant::now();
    let resp = http
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&serde_json::json!({"model": "m", "stream": true, "messages": []}))
        .send()
        .await
        .unwrap();
    let mut body = resp.bytes_stream();
    let (mut n, mut reads) = (0usize, 0usize);
    while let Some(b) = body.next().await {
        n += b.unwrap().len();
        reads += 1;
    }
    into.times.push(t0.elapsed());
    into.cpu.push(cpu_time() - c0);
    into.reads.push(reads);
    assert!(n > expected, "raw read got the whole stream");
}

/// One streamed request read as SSE events, nothing parsed; the wall time. Asserts events
/// arrived.
async fn read_events(http: &reqwest::Client, base: &str) -> Duration {
    let t0 = Instant::now();
    let resp = http
        .post(format!("{base}/chat/completions"))
        .json(&serde_json::json!({"model": "m", "stream": true, "messages": []}))
        .send()
        .await
        .unwrap();
    let mut events = sseer::EventStream::new(resp.bytes_stream());
    let mut n = 0usize;
    while let Some(ev) = events.next().await {
        n += ev.unwrap().data.len();
    }
    let took = t0.elapsed();
    assert!(n > 0, "events arrived");
    took
}

/// CPU time used so far by all threads of this process (Linux `schedstat`, nanoseconds);
/// zero where that is not available.
fn cpu_time() -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(ns)
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}
