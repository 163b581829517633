//! Two worktree sessions of one repository running at once.

use cairn_testkit::git::git;
use serde_json::Value;

use super::{edit_script, path_of, turn_start, Env};

#[tokio::test(flavor = "multi_thread")]
async fn two_worktree_runs_at_once_do_not_interfere() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let before = env.dot_git();
    let a = env.run(
        edit_script("a.txt", "from a\n", "printf a > only-a.txt"),
        "task a",
        &["--worktree", "a"],
    );
    let b = env.run(
        edit_script("a.txt", "from b\n", "printf b > only-b.txt"),
        "task b",
        &["--worktree", "b"],
    );
    let ((out_a, ev_a), (out_b, ev_b)) = tokio::join!(a, b);
    assert_eq!(out_a.code, 0, "{}", out_a.stderr);
    assert_eq!(out_b.code, 0, "{}", out_b.stderr);
    let (wa, wb) = (path_of(&ev_a), path_of(&ev_b));
    assert_ne!(wa, wb);
    let sa = turn_start(&ev_a)["data"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let sb = turn_start(&ev_b)["data"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(sa, sb, "separate sessions");
    assert_eq!(
        std::fs::read_to_string(wa.join("a.txt")).unwrap(),
        "from a\n"
    );
    assert_eq!(
        std::fs::read_to_string(wb.join("a.txt")).unwrap(),
        "from b\n"
    );
    assert!(!wa.join("only-b.txt").exists() && !wb.join("only-a.txt").exists());
    assert_eq!(env.read("a.txt").as_deref(), Some("one\n"));
    assert_eq!(env.dot_git(), before);

    // Separate checkpoints: each session's change-turn lists only its own files.
    let state = env.state.display().to_string();
    for (sid, own) in [(&sa, "only-a.txt"), (&sb, "only-b.txt")] {
        let turns = super::cairn(
            &["turns", "--session", sid, "--state-dir", &state, "--json"],
            &[],
        )
        .await;
        assert_eq!(turns.code, 0, "{}", turns.stderr);
        let t: Vec<Value> = super::lines(&turns.stdout);
        assert_eq!(t.len(), 1, "{}", turns.stdout);
        let files: Vec<&str> = t[0]["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        assert_eq!(files, vec!["a.txt", own]);
    }
    let listed = env.cairn(&["worktrees", "--json"]).await;
    let rows = super::lines(&listed.stdout);
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["a", "b"]);
    let wl = git(&env.folder, &["worktree", "list"]);
    assert_eq!(wl.lines().count(), 3, "{wl}");
}

/// Inside the sandbox a worktree session can commit on its branch (its git dir, the objects
/// and its ref are writable) but cannot plant a hook or change the repository's config.
#[tokio::test(flavor = "multi_thread")]
async fn the_sandbox_lets_git_commit_in_the_worktree_but_not_touch_hooks_or_config() {
    use cairn_policy::sandbox::{bwrap_path, bwrap_works};
    if !(bwrap_path().is_some() && bwrap_works()) {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        eprintln!("SKIPPED: bubblewrap cannot run here");
        return;
    }
    let env = Env::new(&[("a.txt", "one\n")]);
    let hooks = env.folder.join(".git/hooks");
    let config = env.folder.join(".git/config");
    let config_before = std::fs::read_to_string(&config).unwrap();
    let commit = "printf two > a.txt && git add -A && git -c user.name=A -c user.email=a@b commit -qm wip && echo COMMITTED";
    let plant = format!(
        "printf '#!/bin/sh\\n' > {}/post-commit; printf '[x]\\n' >> {}; echo TRIED",
        hooks.display(),
        config.display()
    );
    let script = vec![
        cairn_testkit::Reply::tool_call("c1", "run_shell", serde_json::json!({"command": commit})),
        cairn_testkit::Reply::tool_call("c2", "run_shell", serde_json::json!({"command": plant})),
        cairn_testkit::Reply::text("done"),
    ];
    let (out, events) = env
        .run(
            script,
            "commit",
            &["--worktree", "s", "--sandbox", "required"],
        )
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_finished")
        .collect();
    let first = finished[0]["data"]["result_preview"]
        .as_str()
        .unwrap_or_default();
    assert!(first.contains("COMMITTED"), "{:?}", finished);
    assert!(!hooks.join("post-commit").exists(), "no hook planted");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), config_before);
    let ahead = git(&env.folder, &["rev-list", "--count", "main..cairn/s"]);
    assert_eq!(ahead.trim(), "1");
    assert_eq!(
        git(&env.folder, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "main"
    );
    let listed = env.cairn(&["worktrees", "--json"]).await;
    let rows = super::lines(&listed.stdout);
    assert_eq!(rows[0]["commitsAhead"], 1);
    assert_eq!(
        rows[0]["unappliedFiles"], 0,
        "committed work is not at risk"
    );
    let _ = path_of(&events);
}
