//! Big batches of new files are written as packfiles; the trees are exactly git's.

use crate::common;

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};

use cairn_vcs::RestoreOptions;
use common::*;

#[test]
fn a_big_first_snapshot_is_packed_and_its_tree_is_gits() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let root = ws.path();
    git(root, &["init", "-q"]);
    for i in 0..300 {
        write(
            root,
            &format!("src/m{}/file{i}.txt", i % 13),
            &format!("content {i}\n").repeat(i % 7 + 1),
        );
    }
    write(root, "bin/tool", "#!/bin/sh\necho tool\n");
    fs::set_permissions(root.join("bin/tool"), fs::Permissions::from_mode(0o755)).unwrap();
    symlink("src/m1", root.join("link")).unwrap();
    write_bytes(
        root,
        "data.bin",
        &(0..=255u8).cycle().take(70_000).collect::<Vec<_>>(),
    );

    let mut vcs = open(st.path(), root, false);
    let snap = vcs.snapshot().unwrap();
    assert_eq!(snap.hashed, 303);
    let packs: Vec<_> = fs::read_dir(vcs.store_dir().join("repo/objects/pack"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "pack"))
        .collect();
    assert!(!packs.is_empty(), "blobs went into a pack");

    // The same content through git's own index gives the same tree id.
    let index = st.path().join("git-index");
    let out = std::process::Command::new("git")
        .current_dir(root)
        .env("GIT_INDEX_FILE", &index)
        .args(["add", "-A"])
        .status()
        .unwrap();
    assert!(out.success());
    let tree = std::process::Command::new("git")
        .current_dir(root)
        .env("GIT_INDEX_FILE", &index)
        .args(["write-tree"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&tree.stdout).trim(),
        snap.tree.to_string()
    );

    // Every packed blob reads back: delete everything in a turn, restore.
    let before = state(root);
    turn(&mut vcs, "s", 1, "delete all", || {
        fs::remove_dir_all(root.join("src")).unwrap();
        fs::remove_file(root.join("data.bin")).unwrap();
    })
    .unwrap();
    let report = vcs.restore("s", 1, &RestoreOptions::default()).unwrap();
    assert_eq!(report.restored.len(), 301);
    assert_eq!(state(root), before);
}

#[test]
fn duplicate_and_empty_files_in_one_pack() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let root = ws.path();
    for i in 0..400 {
        let body = match i % 3 {
            0 => String::new(),
            1 => "same license text\n".to_string(),
            _ => format!("unique {i}\n"),
        };
        write(root, &format!("d{}/f{i}", i % 7), &body);
    }
    let mut vcs = open(st.path(), root, false);
    let before = state(root);
    let snap = vcs.snapshot().unwrap();
    assert_eq!(snap.hashed, 400);
    turn(&mut vcs, "s", 1, "wipe", || {
        for d in 0..7 {
            fs::remove_dir_all(root.join(format!("d{d}"))).unwrap();
        }
    })
    .unwrap();
    vcs.restore("s", 1, &RestoreOptions::default()).unwrap();
    assert_eq!(state(root), before);
    // A second store process reads the packs too.
    let again = open(st.path(), root, false).snapshot().unwrap();
    assert_eq!(again.tree, snap.tree);
}
