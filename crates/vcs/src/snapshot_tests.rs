//! The pipelined first snapshot (walk streaming into hashing threads that write packs) gives
//! exactly what storing every file on one thread gives.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::config::VcsConfig;
use crate::vcs::Vcs;
use crate::walk::Excluded;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write(root: &Path, rel: &str, body: &[u8]) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, body).unwrap();
}

fn config() -> VcsConfig {
    VcsConfig {
        max_untracked_file_bytes: 5 * 1024 * 1024,
        max_untracked_dir_files: 100,
        watch: false,
        ..VcsConfig::default()
    }
}

/// A work tree with everything a walk treats specially, and enough files for the pool.
fn fixture(root: &Path) {
    git(root, &["init", "-q"]);
    write(root, ".gitignore", b"*.log\n/out/\n");
    write(root, "sub/.gitignore", b"secret*\n!secret-ok.txt\n");
    write(root, "sub/deeper/.gitignore", b"!keep.log\n");
    for i in 0..700 {
        let body = match i % 5 {
            0 => Vec::new(),
            1 => b"the same license text\n".to_vec(),
            _ => format!("file {i}\n").repeat(i % 40 + 1).into_bytes(),
        };
        write(root, &format!("src/m{}/f{i}.txt", i % 17), &body);
    }
    write(root, "sub/secret1", b"ignored\n");
    write(root, "sub/secret-ok.txt", b"kept\n");
    write(root, "sub/deeper/keep.log", b"kept by a nested negation\n");
    write(root, "sub/deeper/drop.log", b"ignored\n");
    write(root, "a.log", b"ignored\n");
    write(root, "out/x", b"ignored folder\n");
    write(root, "node_modules/x.js", b"excluded by default\n");
    write(root, "bin/tool", b"#!/bin/sh\necho tool\n");
    fs::set_permissions(root.join("bin/tool"), fs::Permissions::from_mode(0o755)).unwrap();
    write(root, "bin/half", b"#!/bin/sh\n");
    fs::set_permissions(root.join("bin/half"), fs::Permissions::from_mode(0o744)).unwrap();
    symlink("src/m1", root.join("link")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    fs::create_dir_all(root.join("empty/inner")).unwrap();
    fs::create_dir_all(root.join("empty2")).unwrap();
    // Unreadable for a normal user (root reads it anyway: both ways must agree either way).
    write(root, "locked.txt", b"locked\n");
    fs::set_permissions(root.join("locked.txt"), fs::Permissions::from_mode(0o000)).unwrap();
    let fifo = Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(fifo.success());
    // Bigger than a pack takes (stored loose), tracked so the size cap does not apply.
    let big: Vec<u8> = (0..9 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    write(root, "big.bin", &big);
    // Untracked and over the cap.
    write(root, "huge.bin", &big[..6 * 1024 * 1024]);
    git(root, &["add", "src", "bin", "sub", "big.bin", ".gitignore"]);
    // A new untracked folder over the file cap, and one under it.
    for i in 0..150 {
        write(root, &format!("gen/g{i}"), format!("{i}").as_bytes());
    }
    for i in 0..20 {
        write(root, &format!("small/s{i}"), format!("{i}").as_bytes());
    }
}

fn packs(vcs: &Vcs) -> usize {
    fs::read_dir(vcs.store_dir().join("repo/objects/pack"))
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
                .count()
        })
        .unwrap_or(0)
}

/// A first snapshot with `threads` hashing threads (0: all loose on the calling thread).
fn first_snapshot(root: &Path, threads: usize) -> (String, usize, Vec<Excluded>, usize) {
    let st = tempfile::tempdir().unwrap();
    let mut vcs = Vcs::open(st.path(), root, config()).unwrap();
    vcs.snap.threads = Some(threads);
    let snap = vcs.snapshot().unwrap();
    let repo = vcs.store_dir().join("repo");
    let fsck = Command::new("git")
        .arg("--git-dir")
        .arg(&repo)
        .args(["fsck", "--full", "--no-dangling"])
        .output()
        .unwrap();
    assert!(
        fsck.status.success(),
        "git fsck of the store ({threads} threads): {}",
        String::from_utf8_lossy(&fsck.stderr)
    );
    (
        snap.tree.to_string(),
        snap.hashed,
        snap.excluded,
        packs(&vcs),
    )
}

#[test]
fn parallel_first_snapshot_is_the_sequential_one() {
    let ws = tempfile::tempdir().unwrap();
    fixture(ws.path());
    let (tree, hashed, excluded, loose_packs) = first_snapshot(ws.path(), 0);
    assert_eq!(loose_packs, 0, "one thread stores loose objects");
    let excluded_paths: Vec<&str> = excluded.iter().map(|e| e.path.as_str()).collect();
    assert!(excluded_paths.contains(&"gen"), "{excluded_paths:?}");
    assert!(excluded_paths.contains(&"huge.bin"), "{excluded_paths:?}");
    // 700 sources, 2 tools, 2 links, 2 kept under sub/, big.bin, locked.txt, small/*,
    // and the 3 .gitignore files.
    assert_eq!(hashed, 700 + 2 + 2 + 2 + 1 + 1 + 20 + 3);
    for threads in [1, 3] {
        let (t, h, e, p) = first_snapshot(ws.path(), threads);
        assert_eq!(t, tree, "{threads} threads: same tree");
        assert_eq!(h, hashed, "{threads} threads: same files hashed");
        assert_eq!(e, excluded, "{threads} threads: same exclusions");
        assert!(p > 0, "{threads} threads: blobs packed");
    }
}

#[test]
fn a_snapshot_reports_progress_up_to_its_total() {
    let ws = tempfile::tempdir().unwrap();
    fixture(ws.path());
    let st = tempfile::tempdir().unwrap();
    let mut vcs = Vcs::open(st.path(), ws.path(), config()).unwrap();
    vcs.snap.quiet = Some(Duration::ZERO);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    vcs.set_progress(Some(Arc::new(move |done, total| {
        s.lock().unwrap().push((done, total))
    })));
    vcs.snapshot().unwrap();
    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    let (done, total) = *seen.last().unwrap();
    assert_eq!(Some(done), total, "the last report is complete: {seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "{seen:?}");
    // Entries: the hashed files and the two empty folders.
    assert_eq!(done, 731 + 2);
}
