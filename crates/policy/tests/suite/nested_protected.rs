//! Under real bubblewrap: a nested repository's `.git` is read-only like the root's, so a
//! sandboxed command cannot plant a hook that runs when the user later works in it; the rest
//! of the workspace stays writable.

use crate::common;

#[test]
fn a_nested_repositorys_git_folder_is_read_only_in_the_sandbox() {
    let Some(bwrap) = common::bwrap_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap().join("ws");
    std::fs::create_dir_all(ws.join("docs/sub/.git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join("tools/.agent")).unwrap();
    let script =
        "printf '#!/bin/sh\\nevil\\n' > docs/sub/.git/hooks/post-checkout && echo planted; \
                  echo x > tools/.agent/permissions.toml && echo agent-written; \
                  echo ok > docs/sub/notes.txt && echo wrote-notes";
    let stdout = common::run_sandboxed(&bwrap, &ws, script);
    assert!(!stdout.contains("planted"), "{stdout}");
    assert!(!stdout.contains("agent-written"), "{stdout}");
    assert!(
        stdout.contains("wrote-notes"),
        "the workspace is writable: {stdout}"
    );
    assert!(!ws.join("docs/sub/.git/hooks/post-checkout").exists());
    assert!(!ws.join("tools/.agent/permissions.toml").exists());
    assert_eq!(
        std::fs::read_to_string(ws.join("docs/sub/notes.txt")).unwrap(),
        "ok\n"
    );
}

/// Run as root (containers, CI), a sandboxed command has no capabilities: it cannot remount
/// a read-only folder writable or unmount it to reach what is below.
#[test]
fn a_sandboxed_command_cannot_remount_or_unmount_its_protections() {
    let Some(bwrap) = common::bwrap_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap().join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    let script = "grep CapEff /proc/self/status; \
                  mount -o remount,rw .git 2>/dev/null && echo remounted; \
                  umount .git 2>/dev/null && echo unmounted; \
                  echo x > .git/hooks/post-checkout 2>/dev/null && echo planted; true";
    let stdout = common::run_sandboxed(&bwrap, &ws, script);
    assert!(stdout.contains("CapEff:\t0000000000000000"), "{stdout}");
    for bad in ["remounted", "unmounted", "planted"] {
        assert!(!stdout.contains(bad), "{bad}: {stdout}");
    }
    assert!(!ws.join(".git/hooks/post-checkout").exists());
}
