//! A protected `.git` that is a symbolic link, under real bubblewrap: a command inside the
//! sandbox can replace the link (a mount cannot sit on a link), but once the command is gone
//! the guard has put it back and kept what replaced it aside; the link's target itself stays
//! read-only throughout.

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::process::Command;

use cairn_policy::sandbox::{bwrap_guarded, SandboxSpec};

use crate::common;
mod read_only_corpus;

#[test]
fn a_replaced_protected_link_is_put_back_after_the_command() {
    let Some(bwrap) = common::bwrap_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let ws = base.join("ws");
    let repo = base.join("repo.git");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(repo.join("hooks")).unwrap();
    std::fs::write(repo.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    symlink("../repo.git", ws.join(".git")).unwrap();

    let spec = SandboxSpec::for_workspace(&ws);
    let script = "echo x > .git/HEAD 2>/dev/null && echo wrote-target; \
                  rm .git && mkdir -p .git/hooks && printf '#!/bin/sh\\nevil\\n' > .git/hooks/pre-commit && echo replaced";
    let (argv, guard) = bwrap_guarded(
        &bwrap,
        &spec,
        &[],
        &["sh".into(), "-c".into(), script.into()],
        None,
    );
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("wrote-target"),
        "the target is read-only: {stdout}"
    );
    assert!(
        stdout.contains("replaced"),
        "the link itself is not mountable: {stdout}"
    );
    assert!(ws.join(".git").is_dir() && !ws.join(".git").is_symlink());
    drop(guard);

    assert_eq!(
        std::fs::read_link(ws.join(".git")).unwrap(),
        PathBuf::from("../repo.git"),
        "the link is back"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("HEAD")).unwrap(),
        "ref: refs/heads/main\n"
    );
    assert!(!repo.join("hooks/pre-commit").exists());
    let aside: Vec<PathBuf> = std::fs::read_dir(&ws)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().contains(".git.cairn-replaced-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert!(
        aside[0].join("hooks/pre-commit").exists(),
        "kept for the user to inspect"
    );
}

/// A hidden folder (Cairn's state dir) that holds the workspace and a private cache: both
/// stay writable inside it, everything else in it is empty and read-only.
#[test]
fn a_hidden_folder_keeps_the_workspace_and_caches_it_holds() {
    let Some(bwrap) = common::bwrap_or_skip() else {
        return;
    };
    let d = tempfile::tempdir_in("/var/tmp").unwrap();
    let base = std::fs::canonicalize(d.path()).unwrap();
    let hidden = base.join("state");
    let ws = hidden.join("worktrees/ws");
    let cache = hidden.join("sandbox-cache/npm");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(hidden.join("vault.toml"), "TOKEN = \"hidden-9921\"\n").unwrap();
    let mut spec = cairn_policy::sandbox::SandboxSpec::for_workspace(&ws);
    spec.hidden = vec![hidden.clone()];
    spec.private_binds = vec![(cache.clone(), cache.clone())];
    let script = format!(
        "cat {h}/vault.toml; echo ok > {w}/x; echo c > {c}/y; touch {h}/z; ls {h}",
        h = hidden.display(),
        w = ws.display(),
        c = cache.display()
    );
    let (argv, guard) = cairn_policy::sandbox::bwrap_guarded(
        &bwrap,
        &spec,
        &[],
        &["sh".into(), "-c".into(), script],
        None,
    );
    let out = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .unwrap();
    drop(guard);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("hidden-9921"), "{stdout}");
    assert!(
        ws.join("x").exists(),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(cache.join("y").exists());
    assert!(!hidden.join("z").exists());
}
