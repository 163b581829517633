#![allow(clippy::unwrap_used, clippy::expect_used)]
//! 20 sessions streaming at once against the mock model, through `cairn serve` (in this
//! process, over loopback HTTP + SSE) and in-process through the session host, in the same
//! run. Prints: the event latency the server adds (p50/p95: when the same share of a turn's
//! text arrived, server minus in-process), delta throughput (characters per second over all
//! sessions, both ways), and the server's memory per idle open session (RSS growth / N).
//!
//! `cargo bench -p cairn-serve --bench serve_many` runs a small round; `CAIRN_BENCH_FULL=1`
//! the full one. Under `cargo test` it is a smoke check that asserts correctness only. The
//! mock, the server and the client share this machine's cores (2 on CI): the numbers
//! include that contention.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_protocol::Event;
use cairn_runtime::host::{Answerer, Host, OpenSession, Prompt, Submission};
use cairn_runtime::llm_setup::{client_for, Face, LlmSetup, ProviderChoice};
use cairn_runtime::RunOptions;
use cairn_serve::{LlmSource, ServeConfig};
use cairn_testkit::{MockLlmServer, Reply};
use futures::StreamExt;
use serde_json::json;

const SESSIONS: usize = 20;
/// Points of each turn's text where arrival times are compared.
const SAMPLES: usize = 20;

struct MockLlm;

impl LlmSource for MockLlm {
    fn build(&self, model: &str, provider: &str, base_url: Option<&str>) -> Option<LlmSetup> {
        Some(setup(model, provider, base_url.unwrap_or_default()))
    }
}

fn setup(model: &str, provider: &str, base_url: &str) -> LlmSetup {
    let choice = ProviderChoice {
        provider: provider.into(),
        model: model.into(),
        base_url: base_url.into(),
        reasoning: String::new(),
    };
    let keys = cairn_secrets::MemoryKeyStore::new();
    let env = |_: &str| None;
    LlmSetup {
        client: client_for(&choice, &keys, &env, Face::Cli).unwrap(),
        provider: provider.into(),
        model: model.into(),
        blocked: None,
    }
}

fn main() {
    let full = std::env::var("CAIRN_BENCH_FULL").is_ok_and(|v| v == "1");
    let measuring = std::env::args().any(|a| a == "--bench");
    let (chunks, idle) = if full { (4_000, 100) } else { (200, 20) };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(bench(chunks, idle, measuring));
}

/// `(chars so far, when)` of one turn's deltas.
type Arrivals = Vec<(usize, Instant)>;

fn script(mock: &MockLlmServer, chunks: usize) -> usize {
    let text: Vec<String> = (0..chunks).map(|i| format!("w{} ", i % 1000)).collect();
    let total = text.iter().map(|t| t.len()).sum();
    for _ in 0..SESSIONS {
        mock.push(Reply::text_chunks(text.clone()).delay_between_chunks(Duration::from_millis(1)));
    }
    total
}

/// When each sample point of the text arrived, relative to the turn's start.
fn at_samples(a: &Arrivals, start: Instant, total: usize) -> Vec<Duration> {
    (1..=SAMPLES)
        .map(|k| {
            let want = total * k / SAMPLES;
            a.iter()
                .find(|(n, _)| *n >= want)
                .map_or(Duration::ZERO, |(_, t)| *t - start)
        })
        .collect()
}

async fn bench(chunks: usize, idle: usize, measuring: bool) {
    let mock = MockLlmServer::start().await.unwrap();
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // Every session streams at once: as many turn slots as sessions.
    std::fs::create_dir_all(state.path().join("turn-slots")).unwrap();
    std::fs::write(state.path().join("turn-slots/limit"), SESSIONS.to_string()).unwrap();

    // In-process: the session host, as the CLI and the app drive it.
    let total = script(&mock, chunks);
    let (inproc, inproc_wall) = in_process(&mock, ws.path(), state.path()).await;

    // Through the server.
    let running = cairn_serve::start(ServeConfig {
        listen: Some("127.0.0.1:0".into()),
        token_file: Some(dir.path().join("t")),
        state_dir: Some(state.path().to_path_buf()),
        model: Some("m".into()),
        base_url: Some(mock.base_url()),
        sandbox: Some(cairn_policy::sandbox::SandboxMode::Off),
        llm: Some(Arc::new(MockLlm)),
        max_sessions: SESSIONS + idle + 1,
        ..ServeConfig::default()
    })
    .await
    .unwrap();
    let base = format!("http://{}", running.listen);
    let http = reqwest::Client::new();
    let mut ids = Vec::new();
    for _ in 0..SESSIONS {
        ids.push(create(&http, &base, &running.token, ws.path()).await);
    }
    script(&mock, chunks);
    let t0 = Instant::now();
    let runs = ids.iter().map(|id| {
        let (http, url, token) = (
            http.clone(),
            format!("{base}/v1/sessions/{id}/messages"),
            running.token.clone(),
        );
        tokio::spawn(async move {
            let start = Instant::now();
            let resp = http
                .post(url)
                .bearer_auth(token)
                .json(&json!({"text": "go"}))
                .send()
                .await
                .unwrap();
            let mut body = resp.bytes_stream();
            let mut buf = String::new();
            let mut arrivals = Vec::new();
            let mut n = 0usize;
            while let Some(chunk) = body.next().await {
                buf.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
                while let Some(at) = buf.find("\n\n") {
                    let block: String = buf.drain(..at + 2).collect();
                    if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) {
                        let ev: Event = match serde_json::from_str(data) {
                            Ok(e) => e,
                            Err(_) => continue, // run_end: the server's own
                        };
                        if let Event::AssistantDelta(d) = ev {
                            n += d.text.len();
                            arrivals.push((n, Instant::now()));
                        }
                    }
                }
            }
            (start, arrivals)
        })
    });
    let served: Vec<(Instant, Arrivals)> = futures::future::join_all(runs)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let served_wall = t0.elapsed();
    for (_, a) in &served {
        assert_eq!(
            a.last().map(|x| x.0),
            Some(total),
            "every delta came through"
        );
    }

    // Added latency: per session and sample point, server minus in-process, from the
    // message's post (`added`) and from its first delta (`lag`: how far the stream falls
    // behind once it flows); and the time to the first delta, both ways.
    let (mut added, mut lag) = (Vec::new(), Vec::new());
    let (mut first_s, mut first_i) = (Vec::new(), Vec::new());
    for ((s_start, s), (i_start, i)) in served.iter().zip(&inproc) {
        let sv = at_samples(s, *s_start, total);
        let iv = at_samples(i, *i_start, total);
        let (s0, i0) = (s[0].1 - *s_start, i[0].1 - *i_start);
        first_s.push(s0.as_secs_f64() * 1e3);
        first_i.push(i0.as_secs_f64() * 1e3);
        for (a, b) in sv.iter().zip(&iv) {
            added.push(a.as_secs_f64() * 1e3 - b.as_secs_f64() * 1e3);
            lag.push((*a - s0).as_secs_f64() * 1e3 - (*b - i0).as_secs_f64() * 1e3);
        }
    }
    let pct = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[((v.len() - 1) as f64 * p) as usize]
    };
    let chars = (total * SESSIONS) as f64;

    // Memory per idle open session.
    let before = rss_kib();
    for _ in 0..idle {
        create(&http, &base, &running.token, ws.path()).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let per_session = (rss_kib().saturating_sub(before)) as f64 / idle as f64;
    println!(
        "{SESSIONS} sessions x {chunks} chunks at once: added event latency p50 {:.1} ms, p95 {:.1} ms \
         (once streaming: p50 {:.1} ms, p95 {:.1} ms; first delta p50 {:.1} ms served vs {:.1} ms in-process); \
         delta throughput {:.0} chars/s served vs {:.0} chars/s in-process (wall {:.0} ms vs {:.0} ms); \
         {:.0} KiB RSS per idle open session ({idle} opened){}",
        pct(&mut added, 0.5),
        pct(&mut added, 0.95),
        pct(&mut lag, 0.5),
        pct(&mut lag, 0.95),
        pct(&mut first_s, 0.5),
        pct(&mut first_i, 0.5),
        chars / served_wall.as_secs_f64(),
        chars / inproc_wall.as_secs_f64(),
        served_wall.as_secs_f64() * 1e3,
        inproc_wall.as_secs_f64() * 1e3,
        per_session,
        if measuring { "" } else { " [smoke run]" }
    );
    running.shutdown().await;
}

async fn create(http: &reqwest::Client, base: &str, token: &str, ws: &Path) -> String {
    let r = http
        .post(format!("{base}/v1/sessions"))
        .bearer_auth(token)
        .json(&json!({"workspace": ws, "mode": "auto", "vcs": "off"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    r.json::<serde_json::Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The same turns through the session host in this process.
async fn in_process(
    mock: &MockLlmServer,
    ws: &Path,
    state: &Path,
) -> (Vec<(Instant, Arrivals)>, Duration) {
    let host = Host::new();
    let mut handles = Vec::new();
    for _ in 0..SESSIONS {
        handles.push(
            host.open(OpenSession {
                options: RunOptions {
                    workspace: Some(ws.to_path_buf()),
                    state_dir: Some(state.to_path_buf()),
                    model: Some("m".into()),
                    base_url: Some(mock.base_url()),
                    mode: Some(cairn_protocol::Mode::Auto),
                    vcs: cairn_runtime::VcsMode::Off,
                    sandbox: Some(cairn_policy::sandbox::SandboxMode::Off),
                    ..RunOptions::default()
                },
                llm: Some(setup("m", "openai", &mock.base_url())),
                answerer: Answerer::waiting(),
                terminals: None,
            })
            .unwrap(),
        );
    }
    let t0 = Instant::now();
    let runs = handles.iter().map(|h| {
        let h = h.clone();
        tokio::spawn(async move {
            let start = Instant::now();
            let Ok(Submission::Turn(turn)) = h.submit(Prompt::text("go")).await else {
                panic!("go is a turn");
            };
            let mut stream = h.start_queued(turn, |_| {}).await.unwrap().unwrap();
            let mut arrivals = Vec::new();
            let mut n = 0usize;
            while let Some(ev) = stream.recv().await {
                if let Event::AssistantDelta(d) = ev {
                    n += d.text.len();
                    arrivals.push((n, Instant::now()));
                }
            }
            (start, arrivals)
        })
    });
    let out: Vec<_> = futures::future::join_all(runs)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let wall = t0.elapsed();
    host.shutdown().await;
    (out, wall)
}

/// This process's resident set, KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}
