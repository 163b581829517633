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
