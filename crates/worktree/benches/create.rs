//! Worktree session creation on a generated repository, against `git worktree add` in the
//! same run.
//!
//! `cargo bench -p cairn-worktree --bench create` builds 250,000 committed files (≈ 1 GB;
//! `CAIRN_BENCH_FILES` overrides the count), then measures, cold and in this order:
//! - `git worktree add -b … <dir>` (the git CLI: registration, branch and checkout);
//! - Cairn's `open_or_create` (branch, registration, libgit2 checkout, `.worktreeinclude`, the
//!   first recorded state in Cairn's store) — what `cairn run --worktree NAME` waits for;
//! - the first `cairn worktrees list` status of it (a status walk of the new tree).
//!
//! Printed as wall times and ratios. Under `cargo test` (no `--bench`) a small smoke round.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_worktree::{open_or_create, CreateOptions, Layout, Repo, StateStore};

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
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
}

fn generate(root: &Path, files: usize) {
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for i in 0..files {
        let p = root.join(format!(
            "d{:02}/s{:02}/f{:03}.rs",
            i / 5000 % 50,
            i / 100 % 50,
            i % 100
        ));
        if i % 100 == 0 {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let size = 2048 + (x % 4096) as usize;
        let line = format!("fn f{i}() -> u64 {{ {x} }}\n");
        let body: String = line.repeat(size / line.len() + 1);
        std::fs::write(p, &body.as_bytes()[..size]).unwrap();
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn main() {
    let bench = std::env::args().any(|a| a == "--bench");
    let files: usize = std::env::var("CAIRN_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if bench { 250_000 } else { 1_000 });
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("repo");
    std::fs::create_dir_all(&folder).unwrap();
    eprintln!("generating {files} files…");
    generate(&folder, files);
    git(&folder, &["init", "-q"]);
    git(&folder, &["add", "-A"]);
    git(&folder, &["commit", "-q", "-m", "init"]);
    // Drop the page cache's advantage for whichever runs second: both read the same objects,
    // so each gets one warm-up read of the object store first.
    git(
        &folder,
        &["cat-file", "--batch-all-objects", "--batch-check"],
    );

    let t = Instant::now();
    let git_wt = tmp.path().join("git-wt");
    git(
        &folder,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "bench-git",
            git_wt.to_str().unwrap(),
        ],
    );
    let git_add = t.elapsed();

    let layout = Layout {
        state_dir: tmp.path().join("state"),
        root: tmp.path().join("worktrees"),
    };
    let t = Instant::now();
    let repo = Repo::discover(&folder, &layout).unwrap();
    let opened = open_or_create(&repo, "bench", &CreateOptions::default()).unwrap();
    let cairn = t.elapsed();
    assert!(opened.created);

    let t = Instant::now();
    let store = StateStore::open(&repo.store_dir, &repo.common_dir).unwrap();
    let status = cairn_worktree::status(&repo, &store, &opened.record).unwrap();
    let list = t.elapsed();
    assert_eq!(status.changed_files, 0);

    println!("worktree creation, {files} files:");
    println!("  git worktree add             {:>8.2} s", secs(git_add));
    println!(
        "  cairn worktree session       {:>8.2} s  = {:.2}× git worktree add",
        secs(cairn),
        secs(cairn) / secs(git_add).max(1e-9)
    );
    println!(
        "  first status (worktrees list) {:>7.2} s  = {:.2}× git worktree add",
        secs(list),
        secs(list) / secs(git_add).max(1e-9)
    );
}
