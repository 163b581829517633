//! Snapshot speed on a generated tree, against the git CLI in the same run.
//!
//! `cargo bench -p cairn-vcs --bench snapshot` builds 250,000 files (≈ 1 GB; `CAIRN_BENCH_FILES`
//! overrides the count) committed in a git repository, then measures:
//! - Cairn's first snapshot (empty store: every file hashed; its progress reports) and a
//!   cold-process full walk;
//! - 10 files changed → snapshot (as before a tool call), p50/p95 over 20 runs;
//! - restore of one turn; store size after 100 small turns vs. after the first snapshot;
//! - baseline A, the usual way: a temporary index (`read-tree HEAD`, `add -A`, `write-tree`,
//!   `commit-tree`); baseline B: git with a persisted index (a stat walk of the whole tree).
//!   The first snapshot is printed as a ratio to baseline A (target: at most 1.0x).
//!
//! Under `cargo test` (no `--bench` argument) it runs a small smoke round.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_vcs::{RestoreOptions, StepKind, Vcs, VcsConfig};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const WORDS: &[&str] = &[
    "fn", "let", "mut", "struct", "impl", "return", "match", "self", "value", "result", "error",
    "config", "path", "index", "tree", "snapshot", "turn", "session", "cairn", "=>", "{", "}", "(",
    ")", ";", "0", "1", "42", "String", "Vec", "Option", "Some", "None", "Ok", "Err",
];

fn content(rng: &mut Rng, bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 16);
    while out.len() < bytes {
        let w = WORDS[(rng.next() % WORDS.len() as u64) as usize];
        out.extend_from_slice(w.as_bytes());
        out.push(if rng.next().is_multiple_of(9) {
            b'\n'
        } else {
            b' '
        });
    }
    out
}

fn file_path(i: usize) -> String {
    format!(
        "d{:02}/s{:02}/f{:03}.rs",
        i / 5000 % 50,
        i / 100 % 50,
        i % 100
    )
}

fn generate(root: &Path, files: usize) {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for i in 0..files {
        let p = root.join(file_path(i));
        if i.is_multiple_of(100) {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        }
        let size = 2048 + (rng.next() % 4096) as usize;
        std::fs::write(p, content(&mut rng, size)).unwrap();
    }
}

fn git(dir: &Path, envs: &[(&str, &str)], args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .envs(envs.iter().copied())
        .args([
            "-c",
            "user.name=B",
            "-c",
            "user.email=b@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn change_files(root: &Path, rng: &mut Rng, files: usize, n: usize) {
    for _ in 0..n {
        let i = (rng.next() % files as u64) as usize;
        let data = content(rng, 3000);
        std::fs::write(root.join(file_path(i)), data).unwrap();
    }
}

/// Baseline A: the usual way, a temporary index built from HEAD for every snapshot.
fn baseline_temp_index(root: &Path, tmp: &Path) -> Duration {
    let index = tmp.join("baseline-a.index");
    let _ = std::fs::remove_file(&index);
    let env = [("GIT_INDEX_FILE", index.to_str().unwrap())];
    let t = Instant::now();
    git(root, &env, &["read-tree", "HEAD"]);
    git(root, &env, &["add", "-A"]);
    let tree = git(root, &env, &["write-tree"]);
    git(
        root,
        &env,
        &["commit-tree", &tree, "-p", "HEAD", "-m", "snapshot"],
    );
    t.elapsed()
}

/// Baseline B: git with an index persisted between snapshots (a stat walk of the tree).
fn baseline_persisted_index(root: &Path, index: &Path) -> Duration {
    let env = [("GIT_INDEX_FILE", index.to_str().unwrap())];
    let t = Instant::now();
    git(root, &env, &["add", "-A"]);
    let tree = git(root, &env, &["write-tree"]);
    git(
        root,
        &env,
        &["commit-tree", &tree, "-p", "HEAD", "-m", "snapshot"],
    );
    t.elapsed()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .try_init();
    let full = std::env::args().any(|a| a == "--bench");
    let files: usize = std::env::var("CAIRN_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if full { 250_000 } else { 2_000 });
    let runs = if full { 20 } else { 5 };
    let small_turns = if full { 100 } else { 10 };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let state = tmp.path().join("state");
    std::fs::create_dir_all(&root).unwrap();

    println!(
        "snapshot bench: {files} files ({})",
        if full { "full" } else { "smoke" }
    );
    let t = Instant::now();
    generate(&root, files);
    git(&root, &[], &["init", "-q"]);
    git(&root, &[], &["add", "-A"]);
    git(&root, &[], &["commit", "-q", "-m", "generated"]);
    let tree_bytes: u64 = walk_size(&root, true);
    println!(
        "  generated + committed in {:.1} s ({:.0} MB of files)",
        t.elapsed().as_secs_f64(),
        tree_bytes as f64 / 1e6
    );

    let config = VcsConfig::default();
    let t = Instant::now();
    let mut vcs = Vcs::open(&state, &root, config.clone()).unwrap();
    let reports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = reports.clone();
    vcs.set_progress(Some(std::sync::Arc::new(move |done, total| {
        sink.lock().unwrap().push((t.elapsed(), done, total));
    })));
    let first = vcs.snapshot().unwrap();
    let first_time = t.elapsed();
    vcs.set_progress(None);
    assert!(first.full_walk);
    vcs.begin_step("bench", 1, "run_shell", "c0", StepKind::Command)
        .unwrap();
    vcs.end_turn("bench", 1, "baseline").unwrap();
    vcs.flush().unwrap();
    let first_store = vcs.usage().unwrap().bytes;
    println!(
        "  cairn first snapshot (empty store, {} files hashed): {:.0} ms; store {:.0} MB",
        first.hashed,
        ms(first_time),
        first_store as f64 / 1e6
    );
    let reports = std::mem::take(&mut *reports.lock().unwrap());
    match (reports.first(), reports.last()) {
        (Some(a), Some(b)) => println!(
            "  progress: {} reports, first at {:.1} s ({} done), last at {:.1} s ({} of {:?})",
            reports.len(),
            a.0.as_secs_f64(),
            a.1,
            b.0.as_secs_f64(),
            b.1,
            b.2
        ),
        _ => println!("  progress: no reports (under a second)"),
    }

    let t = Instant::now();
    let mut cold = Vcs::open(
        &state,
        &root,
        VcsConfig {
            watch: false,
            ..config.clone()
        },
    )
    .unwrap();
    let cold_snap = cold.snapshot().unwrap();
    let cold_time = t.elapsed();
    drop(cold);
    println!(
        "  cairn full walk in a new process (stat cache, {} hashed): {:.0} ms",
        cold_snap.hashed,
        ms(cold_time)
    );

    let mut rng = Rng(7);
    let mut times = Vec::new();
    for i in 0..runs {
        change_files(&root, &mut rng, files, 10);
        let t = Instant::now();
        vcs.begin_step("bench", 2, "run_shell", &format!("c{i}"), StepKind::Command)
            .unwrap();
        times.push(t.elapsed());
        vcs.end_step("bench", 2, &format!("c{i}"), &[]).unwrap();
    }
    vcs.end_turn("bench", 2, "ten files at a time").unwrap();
    times.sort();
    let (p50, p95) = (percentile(&times, 0.5), percentile(&times, 0.95));
    println!(
        "  cairn snapshot after 10 changed files: p50 {:.1} ms, p95 {:.1} ms ({runs} runs)",
        ms(p50),
        ms(p95)
    );

    change_files(&root, &mut rng, files, 0);
    vcs.begin_step("bench", 3, "run_shell", "r", StepKind::Command)
        .unwrap();
    change_files(&root, &mut rng, files, 10);
    vcs.end_step("bench", 3, "r", &[]).unwrap();
    let rec = vcs
        .end_turn("bench", 3, "one more turn")
        .unwrap()
        .expect("a change-turn");
    let t = Instant::now();
    let report = vcs
        .restore(
            "bench",
            3,
            &RestoreOptions {
                to_turn: rec.turn - 1,
                ..RestoreOptions::default()
            },
        )
        .unwrap();
    let restore_time = t.elapsed();
    assert!(report.conflicts.is_empty());
    println!(
        "  cairn restore of one turn ({} files): {:.1} ms",
        report.restored.len() + report.deleted.len(),
        ms(restore_time)
    );

    for n in 0..small_turns {
        let turn = 10 + n as u32;
        vcs.begin_step("bench", turn, "run_shell", "w", StepKind::Command)
            .unwrap();
        change_files(&root, &mut rng, files, 1);
        vcs.end_turn("bench", turn, "small").unwrap();
    }
    let after_store = vcs.usage().unwrap().bytes;
    println!(
        "  store after {small_turns} more small turns: {:.0} MB = {:.3}x the first snapshot (target < 1.2x)",
        after_store as f64 / 1e6,
        after_store as f64 / first_store as f64
    );

    // Baselines (same tree, same machine, same run).
    change_files(&root, &mut rng, files, 10);
    let a = baseline_temp_index(&root, tmp.path());
    let index_b = tmp.path().join("baseline-b.index");
    baseline_persisted_index(&root, &index_b);
    let mut bs = Vec::new();
    for _ in 0..3 {
        change_files(&root, &mut rng, files, 10);
        bs.push(baseline_persisted_index(&root, &index_b));
    }
    bs.sort();
    let b = percentile(&bs, 0.5);
    println!(
        "  baseline A, git temporary index (read-tree/add -A/write-tree/commit-tree): {:.0} ms",
        ms(a)
    );
    println!(
        "  baseline B, git persisted index (stat walk): {:.0} ms (median of 3)",
        ms(b)
    );
    println!(
        "  first snapshot: {:.1} s vs git temp-index {:.1} s = {:.2}x (target <= 1.0x): {}",
        first_time.as_secs_f64(),
        a.as_secs_f64(),
        ms(first_time) / ms(a),
        if first_time <= a { "met" } else { "NOT met" }
    );
    println!("  ratios (baseline / cairn):");
    println!("    first snapshot vs A: {:.2}x", ms(a) / ms(first_time));
    println!("    cold full walk vs B: {:.2}x", ms(b) / ms(cold_time));
    println!(
        "    10-file snapshot p95 vs A: {:.0}x (target >= 100x)",
        ms(a) / ms(p95)
    );
    println!(
        "    10-file snapshot p95 vs B: {:.0}x (target >= 10x)",
        ms(b) / ms(p95)
    );
    println!(
        "    10-file snapshot p95 {:.1} ms (target < 150 ms): {}",
        ms(p95),
        if ms(p95) < 150.0 { "met" } else { "NOT met" }
    );
}

fn walk_size(dir: &Path, skip_git: bool) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if skip_git && e.file_name() == ".git" {
            continue;
        }
        let m = e.metadata().unwrap();
        total += if m.is_dir() {
            walk_size(&e.path(), false)
        } else {
            m.len()
        };
    }
    total
}
