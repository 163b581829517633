//! `grep` against ripgrep on a generated tree. Under `cargo bench` (the `--bench` argument)
//! the tree has 100 000 files; under `cargo test --all-targets` a small smoke round runs.
//! Prints both times (median of the runs) and the ratio; the target is ≤ 1.5× rg.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cairn_engine::{Tool, ToolContext};
use cairn_tools::Grep;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The regex both tools search for.
const PATTERN: &str = r"fn needle_[0-9]+\(";

/// Deterministic pseudo-random numbers (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

const WORDS: [&str; 16] = [
    "let", "value", "result", "config", "parse", "buffer", "index", "state", "return", "match",
    "self", "token", "error", "count", "write", "items",
];

/// Writes `files` source-like files under `root` (1 in 100 defines a needle function), plus
/// an ignored build directory that must not be searched.
fn generate(root: &Path, files: usize) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // `.ignore` applies outside git repositories too, for rg as for cairn.
    std::fs::write(root.join(".ignore"), "target/\n").unwrap();
    let per_dir = 100;
    for i in 0..files {
        let dir = root.join(format!(
            "src/m{:03}/d{:02}",
            i / (per_dir * 10),
            (i / per_dir) % 10
        ));
        if i % per_dir == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let mut body = String::with_capacity(1200);
        for line in 0..30 {
            if line == 15 && i % 100 == 7 {
                body.push_str(&format!("pub fn needle_{i}() -> usize {{ {i} }}\n"));
                continue;
            }
            let n = 3 + (rng.next() % 6) as usize;
            body.push_str("    ");
            for _ in 0..n {
                body.push_str(WORDS[(rng.next() % WORDS.len() as u64) as usize]);
                body.push(' ');
            }
            body.push_str(";\n");
        }
        std::fs::write(dir.join(format!("f{i}.rs")), body).unwrap();
    }
    // Ignored: generated code full of matches.
    let target = root.join("target/gen");
    std::fs::create_dir_all(&target).unwrap();
    for i in 0..(files / 20).max(1) {
        std::fs::write(
            target.join(format!("g{i}.rs")),
            "fn needle_0() {}\n".repeat(50),
        )
        .unwrap();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One run of the `grep` tool; returns the time and the number of matching lines it reports.
fn run_cairn(rt: &tokio::runtime::Runtime, root: &Path) -> (Duration, u64) {
    let ctx = ToolContext::new(
        root.to_path_buf(),
        root.join(".state"),
        "bench",
        CancellationToken::new(),
    );
    let start = Instant::now();
    let out = rt
        .block_on(Grep.execute(json!({"pattern": PATTERN}), ctx))
        .expect("grep failed");
    let elapsed = start.elapsed();
    let footer = out.content.lines().last().unwrap_or_default().to_string();
    // "[N matching lines in M files]" or "[showing X of N matching lines ...]".
    let total = footer
        .split_whitespace()
        .zip(footer.split_whitespace().skip(1))
        .find(|(_, next)| *next == "matching")
        .and_then(|(n, _)| n.trim_start_matches('[').parse().ok())
        .unwrap_or_else(|| panic!("cannot read the match count from {footer:?}"));
    (elapsed, total)
}

/// One run of ripgrep with the same pattern; `None` when rg is not installed.
fn run_rg(root: &Path) -> Option<(Duration, u64)> {
    let start = Instant::now();
    let out = Command::new("rg")
        .args(["-n", "--no-heading", "--color", "never", PATTERN, "."])
        .current_dir(root)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let elapsed = start.elapsed();
    Some((
        elapsed,
        out.stdout
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .count() as u64,
    ))
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (files, runs) = if full { (100_000, 5) } else { (2_000, 1) };
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let t = Instant::now();
    generate(&root, files);
    println!(
        "grep bench: {files} files generated in {:.1} s ({})",
        t.elapsed().as_secs_f64(),
        if full {
            "full"
        } else {
            "smoke round; run `cargo bench -p cairn-tools --bench grep` for the full tree"
        }
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let expected = (files as u64).div_ceil(100);

    // Warm the page cache for both.
    let (_, found) = run_cairn(&rt, &root);
    assert_eq!(
        found, expected,
        "cairn grep found {found} matches, expected {expected}"
    );
    let rg_available = run_rg(&root).is_some();

    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for _ in 0..runs {
        ours.push(run_cairn(&rt, &root).0);
        if rg_available {
            let (d, n) = run_rg(&root).unwrap();
            assert_eq!(n, expected, "rg found {n} matches, expected {expected}");
            theirs.push(d);
        }
    }
    let ours = median(ours);
    let mut stdout = std::io::stdout().lock();
    if !rg_available {
        writeln!(
            stdout,
            "cairn grep: {:.1} ms (median of {runs}); rg is not installed (apt-get install ripgrep), so no ratio",
            ours.as_secs_f64() * 1000.0
        )
        .unwrap();
        return;
    }
    let theirs = median(theirs);
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
    writeln!(
        stdout,
        "cairn grep: {:.1} ms, rg: {:.1} ms (median of {runs}, {expected} matches each); ratio {ratio:.2}× ({})",
        ours.as_secs_f64() * 1000.0,
        theirs.as_secs_f64() * 1000.0,
        if !full {
            "smoke round on a small tree: not a measurement"
        } else if ratio <= 1.5 {
            "within the 1.5× target"
        } else {
            "OVER the 1.5× target"
        }
    )
    .unwrap();
}
