#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The cost of one sandboxed command (issue 35), in the same run: no sandbox, the sandbox as
//! it was (read-only root with credentials hidden, the inherited environment, no seccomp),
//! the allow-list sandbox (empty tmpfs home with toolchains bound back, emptied system
//! folders, explicit environment, seccomp filter, own session; the desktop's network), and
//! the allow-list sandbox with the network proxy (`--sandbox-network proxy`, the default: a
//! network namespace of its own, a proxy listener started for the command, the bridge run
//! inside — this bench binary has the bridge mode, as `cairn` does). Each round starts
//! `sh -c true` once per variant, interleaved; prints p50 / p95 per variant and the p50 the
//! allow-list and the proxy add over the old sandbox (target: at most 15 ms).
//!
//! `cargo bench -p cairn-runtime --bench sandbox_cost` measures 100 rounds (or
//! `CAIRN_BENCH_N`). Under `cargo test` (no `--bench` argument) it runs 3 as a smoke check.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use std::sync::Arc;

use cairn_netproxy::gate::ListGate;
use cairn_netproxy::resolve::SystemResolver;
use cairn_policy::sandbox::{bwrap_guarded, bwrap_path, bwrap_works, ProxyMounts, SandboxSpec};
use cairn_runtime::sandbox::{explicit_env, session_spec, SandboxOptions};

fn main() {
    // Inside the proxy variant's sandbox this binary runs as the bridge.
    cairn_netproxy::bridge::main_if_bridge();
    let measuring = std::env::args().any(|a| a == "--bench");
    let rounds: usize = std::env::var("CAIRN_BENCH_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(if measuring { 100 } else { 3 });
    let Some(bwrap) = bwrap_path().filter(|_| bwrap_works()) else {
        println!("sandbox_cost: bubblewrap cannot run here; nothing measured");
        return;
    };
    let ws = tempfile::tempdir_in("/var/tmp").unwrap();
    let state = tempfile::tempdir_in("/var/tmp").unwrap();
    let mut new = session_spec(ws.path(), state.path(), &SandboxOptions::default()).unwrap();
    new.network = true;
    let mut old = new.clone();
    old.allow_list = None;
    old.seccomp = None;
    let mut proxied = new.clone();
    proxied.network = false;
    let sockets = tempfile::tempdir().unwrap();
    proxied.proxy = Some(ProxyMounts {
        bridge: std::env::current_exe().unwrap(),
        socket: sockets.path().join("p.sock"),
    });
    let rt = tokio::runtime::Runtime::new().unwrap();
    let argv = vec!["sh".to_string(), "-c".to_string(), "true".to_string()];
    let mut times: [Vec<Duration>; 4] = Default::default();
    for _ in 0..rounds {
        times[0].push(time(&argv, None, false));
        times[1].push(time_in(&bwrap, &old, &argv, false));
        times[2].push(time_in(&bwrap, &new, &argv, true));
        let start = Instant::now();
        let handle = {
            let _in = rt.enter();
            let socket = proxied.proxy.as_ref().unwrap().socket.clone();
            cairn_netproxy::proxy::start(
                &socket,
                Arc::new(ListGate::default()),
                Arc::new(SystemResolver),
            )
            .unwrap()
        };
        let _ = time_in(&bwrap, &proxied, &argv, true);
        // The proxy's start counts: it is part of every proxied command.
        times[3].push(start.elapsed());
        drop(handle);
    }
    let names = [
        "no sandbox",
        "old sandbox",
        "allow-list sandbox",
        "allow-list + proxy",
    ];
    let mut p50s = Vec::new();
    for (name, t) in names.iter().zip(times.iter_mut()) {
        t.sort();
        let p50 = t[t.len() / 2];
        let p95 = t[(t.len() * 95 / 100).min(t.len() - 1)];
        p50s.push(p50);
        println!(
            "{name:<20} p50 {:>7.2} ms  p95 {:>7.2} ms  ({} commands)",
            ms(p50),
            ms(p95),
            t.len()
        );
    }
    println!(
        "allow-list sandbox adds {:.2} ms p50 over the old sandbox, {:.2} ms over none",
        ms(p50s[2]) - ms(p50s[1]),
        ms(p50s[2]) - ms(p50s[0])
    );
    println!(
        "allow-list + proxy adds {:.2} ms p50 over the old sandbox ({:.2} ms for the network \
         namespace, proxy and bridge), {:.2} ms over none",
        ms(p50s[3]) - ms(p50s[1]),
        ms(p50s[3]) - ms(p50s[2]),
        ms(p50s[3]) - ms(p50s[0])
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn time_in(bwrap: &Path, spec: &SandboxSpec, argv: &[String], explicit: bool) -> Duration {
    let (wrapped, guard) = bwrap_guarded(bwrap, spec, &[], argv, None);
    let env = explicit.then(|| explicit_env(spec));
    let d = time(&wrapped, env, explicit);
    drop(guard);
    d
}

fn time(argv: &[String], env: Option<Vec<(String, String)>>, session: bool) -> Duration {
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(env) = env {
        cmd.env_clear().envs(env);
    }
    if session {
        cairn_engine::process_session::own_session(&mut cmd);
    }
    let start = Instant::now();
    let status = cmd.status().unwrap();
    let d = start.elapsed();
    assert!(status.success(), "{argv:?} failed: {status}");
    d
}
