#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The cost of one sandboxed command (issue 35), in the same run: no sandbox, the sandbox as
//! it was (read-only root with credentials hidden, the inherited environment, no seccomp),
//! and the allow-list sandbox (empty tmpfs home with toolchains bound back, emptied system
//! folders, explicit environment, seccomp filter, own session). Each round starts
//! `sh -c true` once per variant, interleaved; prints p50 / p95 per variant and the p50 the
//! allow-list adds over the old sandbox (target: at most 15 ms).
//!
//! `cargo bench -p cairn-runtime --bench sandbox_cost` measures 100 rounds (or
//! `CAIRN_BENCH_N`). Under `cargo test` (no `--bench` argument) it runs 3 as a smoke check.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_policy::sandbox::{bwrap_guarded, bwrap_path, bwrap_works, SandboxSpec};
use cairn_runtime::sandbox::{explicit_env, session_spec, SandboxOptions};

fn main() {
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
    let new = session_spec(ws.path(), state.path(), &SandboxOptions::default()).unwrap();
    let mut old = new.clone();
    old.allow_list = None;
    old.seccomp = None;
    let argv = vec!["sh".to_string(), "-c".to_string(), "true".to_string()];
    let mut times: [Vec<Duration>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        times[0].push(time(&argv, None, false));
        times[1].push(time_in(&bwrap, &old, &argv, false));
        times[2].push(time_in(&bwrap, &new, &argv, true));
    }
    let names = ["no sandbox", "old sandbox", "allow-list sandbox"];
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
