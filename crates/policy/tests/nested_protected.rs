//! Under real bubblewrap: a nested repository's `.git` is read-only like the root's, so a
//! sandboxed command cannot plant a hook that runs when the user later works in it; the rest
//! of the workspace stays writable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

use cairn_policy::sandbox::{bwrap_guarded, bwrap_path, bwrap_works, SandboxSpec};

#[test]
fn a_nested_repositorys_git_folder_is_read_only_in_the_sandbox() {
    let Some(bwrap) = bwrap_path().filter(|_| bwrap_works()) else {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        eprintln!("bubblewrap cannot run here; skipped");
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap().join("ws");
    std::fs::create_dir_all(ws.join("docs/sub/.git/hooks")).unwrap();
    std::fs::create_dir_all(ws.join("tools/.agent")).unwrap();
    let spec = SandboxSpec::for_workspace(&ws);
    let script =
        "printf '#!/bin/sh\\nevil\\n' > docs/sub/.git/hooks/post-checkout && echo planted; \
                  echo x > tools/.agent/permissions.toml && echo agent-written; \
                  echo ok > docs/sub/notes.txt && echo wrote-notes";
    let (argv, guard) = bwrap_guarded(
        &bwrap,
        &spec,
        &[],
        &["sh".into(), "-c".into(), script.into()],
        None,
    );
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    drop(guard);
    let stdout = String::from_utf8_lossy(&out.stdout);
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
    let Some(bwrap) = bwrap_path().filter(|_| bwrap_works()) else {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        eprintln!("bubblewrap cannot run here; skipped");
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = std::fs::canonicalize(dir.path()).unwrap().join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    let spec = SandboxSpec::for_workspace(&ws);
    let script = "grep CapEff /proc/self/status; \
                  mount -o remount,rw .git 2>/dev/null && echo remounted; \
                  umount .git 2>/dev/null && echo unmounted; \
                  echo x > .git/hooks/post-checkout 2>/dev/null && echo planted; true";
    let (argv, guard) = bwrap_guarded(
        &bwrap,
        &spec,
        &[],
        &["sh".into(), "-c".into(), script.into()],
        None,
    );
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    drop(guard);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("CapEff:\t0000000000000000"), "{stdout}");
    for bad in ["remounted", "unmounted", "planted"] {
        assert!(!stdout.contains(bad), "{bad}: {stdout}");
    }
    assert!(!ws.join(".git/hooks/post-checkout").exists());
}
