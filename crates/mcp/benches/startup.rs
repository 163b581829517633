//! Startup of several MCP servers: the manager's parallel start against the sequential
//! baseline (one server after the other, what a naive client does), in the same run.
//! Each test server sleeps 150 ms before serving, like an `npx`-launched server resolving its
//! package. `cargo bench -p cairn-mcp --bench startup` runs 5 rounds of 4 servers; under
//! `cargo test --all-targets` it is a one-round smoke run of 2 servers.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cairn_mcp::{LazyMode, ManagerOptions, McpManager, ServerConfig, TransportConfig};

fn server(i: usize, delay_ms: u64) -> ServerConfig {
    ServerConfig {
        name: format!("s{i}"),
        transport: Some(TransportConfig::Stdio {
            program: env!("CARGO_BIN_EXE_cairn-mcp-test-server").into(),
            args: vec![format!("--fault=slow-start={delay_ms}")],
            env: Default::default(),
            cwd: None,
        }),
        enabled: true,
        startup_timeout: None,
        call_timeout: None,
        max_call_timeout: None,
        source: PathBuf::from("(bench)"),
        held: None,
    }
}

fn options() -> ManagerOptions {
    let mut o = ManagerOptions::new(std::env::temp_dir());
    o.shutdown_grace = Duration::from_millis(200);
    o.lazy.mode = LazyMode::Off;
    o
}

async fn start(servers: Vec<ServerConfig>) -> Duration {
    let m = McpManager::new(servers, options());
    let t = Instant::now();
    let (ok, failed) = m.connect_all().await;
    let took = t.elapsed();
    assert!(failed.is_empty(), "{failed:?}");
    assert!(!ok.is_empty());
    m.close_all().await;
    took
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (rounds, n, delay) = if full { (5, 4, 150) } else { (1, 2, 50) };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start a runtime: {e}");
            std::process::exit(1);
        }
    };
    rt.block_on(async {
        let mut parallel = Vec::new();
        let mut sequential = Vec::new();
        let mut nonblocking = Vec::new();
        for _ in 0..rounds {
            parallel.push(start((0..n).map(|i| server(i, delay)).collect()).await);
            let mut seq = Duration::ZERO;
            for i in 0..n {
                seq += start(vec![server(i, delay)]).await;
            }
            sequential.push(seq);
            let m = McpManager::new((0..n).map(|i| server(i, delay)).collect(), options());
            let t = Instant::now();
            m.start_all();
            nonblocking.push(t.elapsed());
            m.wait_settled(Duration::from_secs(30)).await;
            m.close_all().await;
        }
        let median = |v: &mut Vec<Duration>| {
            v.sort();
            v[v.len() / 2]
        };
        let p = median(&mut parallel);
        let s = median(&mut sequential);
        let b = median(&mut nonblocking);
        println!(
            "startup of {n} servers ({delay} ms init each), median of {rounds}: parallel {:.0} ms, sequential baseline {:.0} ms -> {:.2}x faster; start_all returns in {:.2} ms",
            p.as_secs_f64() * 1e3,
            s.as_secs_f64() * 1e3,
            s.as_secs_f64() / p.as_secs_f64().max(1e-9),
            b.as_secs_f64() * 1e3,
        );
    });
}
