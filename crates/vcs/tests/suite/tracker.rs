//! Snapshots from the watcher's dirty paths equal full-walk snapshots of the same tree.

use crate::common;

use std::fs;
use std::os::unix::fs::symlink;

use cairn_vcs::Vcs;
use common::*;

/// A change made to the work tree between snapshots.
type Step<'a> = Box<dyn Fn() + 'a>;

/// The tree a fresh full walk sees (no watcher, cold process).
fn full_walk_tree(state: &std::path::Path, ws: &std::path::Path) -> git2::Oid {
    let mut fresh = Vcs::open(state, ws, config(false)).unwrap();
    let snap = fresh.snapshot().unwrap();
    assert!(snap.full_walk);
    snap.tree
}

#[test]
fn watched_snapshots_match_full_walks() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let root = ws.path();
    user_repo(root);
    for d in 0..5 {
        for f in 0..20 {
            write(root, &format!("tree/d{d}/f{f}.txt"), &format!("{d}/{f}\n"));
        }
    }
    fs::create_dir_all(root.join("tree/empty")).unwrap();
    let mut vcs = open(st.path(), root, true);
    let first = vcs.snapshot().unwrap();
    assert!(first.full_walk);
    assert_eq!(first.tree, full_walk_tree(st.path(), root));

    // Nothing changed: no walk, same tree.
    let same = vcs.snapshot().unwrap();
    assert!(!same.full_walk);
    assert_eq!(same.tree, first.tree);
    assert_eq!(same.hashed, 0);

    let steps: Vec<(&str, Step)> = vec![
        (
            "edit files",
            Box::new(|| {
                write(root, "tree/d0/f0.txt", "edited\n");
                write(root, "tree/d3/f7.txt", "edited too\n");
            }),
        ),
        (
            "new folders with files",
            Box::new(|| {
                write(root, "tree/new/deep/a.txt", "a\n");
                write(root, "tree/new/b.txt", "b\n");
            }),
        ),
        (
            "delete a file and a folder",
            Box::new(|| {
                fs::remove_file(root.join("tree/d1/f1.txt")).unwrap();
                fs::remove_dir_all(root.join("tree/d2")).unwrap();
            }),
        ),
        (
            "rename a folder",
            Box::new(|| {
                fs::rename(root.join("tree/d4"), root.join("tree/d4-renamed")).unwrap();
            }),
        ),
        (
            "empty folders come and go",
            Box::new(|| {
                fs::remove_dir(root.join("tree/empty")).unwrap();
                fs::create_dir_all(root.join("tree/fresh/empty")).unwrap();
                for f in 0..20 {
                    fs::remove_file(root.join(format!("tree/d3/f{f}.txt"))).unwrap();
                }
            }),
        ),
        (
            "symlinks and ignored files",
            Box::new(|| {
                symlink("d0", root.join("tree/link")).unwrap();
                write(root, "tree/noise.log", "ignored\n");
                write(root, "node_modules/x/index.js", "excluded\n");
            }),
        ),
        (
            "a new ignore rule",
            Box::new(|| {
                write(root, "tree/.gitignore", "*.txt\n!keep.txt\n");
                write(root, "tree/keep.txt", "kept\n");
            }),
        ),
    ];
    for (what, step) in steps {
        step();
        let snap = vcs.snapshot().unwrap();
        assert_eq!(
            snap.tree,
            full_walk_tree(st.path(), root),
            "after `{what}` (full walk: {})",
            snap.full_walk
        );
        if what != "a new ignore rule" {
            assert!(!snap.full_walk, "`{what}` used the dirty paths");
        }
    }
}
