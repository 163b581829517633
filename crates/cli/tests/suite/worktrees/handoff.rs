//! Handoff between the folder and a worktree, keeping a worktree current, disk use.

use cairn_testkit::git::git;
use cairn_testkit::{MockLlmServer, Reply};
use serde_json::Value;

use super::{edit_script, turn_start, write, Env};

#[tokio::test(flavor = "multi_thread")]
async fn a_session_hands_over_to_a_worktree_and_back_with_its_history_and_its_work() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let (out, events) = env
        .run(vec![Reply::text("noted")], "remember the word PELICAN", &[])
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let folder_session = turn_start(&events)["data"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    write(&env.folder, "wip.txt", "uncommitted\n");

    let out = env_handoff(&env, &folder_session, &["--to", "h"]).await;
    let h: Value = serde_json::from_str(out.trim()).unwrap();
    let wt_session = h["session"].as_str().unwrap().to_string();
    assert_ne!(wt_session, folder_session);
    assert_eq!(h["worktree"], "h");
    let wt = std::path::PathBuf::from(h["workspace"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(wt.join("wip.txt")).unwrap(),
        "uncommitted\n"
    );

    // The worktree session continues the conversation: the model sees the earlier turn.
    let server = MockLlmServer::with_script(edit_script("a.txt", "two\n", "true"))
        .await
        .unwrap();
    let base = server.base_url();
    let out = env
        .cairn(&[
            "run",
            "--base-url",
            &base,
            "--model",
            "m",
            "--mode",
            "auto",
            "--json",
            "--session",
            &wt_session,
            "go on",
        ])
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let first = server.requests()[0].body.to_string();
    assert!(first.contains("PELICAN"), "history carried: {first}");
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "two\n");
    assert_eq!(env.read("a.txt").as_deref(), Some("one\n"));

    // Back to the folder: the worktree's changes are applied there.
    let out = env_handoff(&env, &wt_session, &["--to-folder"]).await;
    let back: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(back["worktree"], Value::Null);
    assert_eq!(back["workspace"], env.folder.display().to_string());
    assert_eq!(env.read("a.txt").as_deref(), Some("two\n"));
    assert_eq!(back["apply"]["conflicts"], serde_json::json!([]));

    // Disk use is shown with the checkpoint store's.
    let usage = env.cairn(&["checkpoints", "usage", "--json"]).await;
    let u: Value = serde_json::from_str(usage.stdout.trim()).unwrap();
    assert_eq!(u["worktrees"]["count"], 1, "{}", usage.stdout);
    assert!(u["worktrees"]["bytes"].as_u64().unwrap() > 0);
}

async fn env_handoff(env: &Env, session: &str, to: &[&str]) -> String {
    let state = env.state.display().to_string();
    let mut args = vec![
        "worktrees",
        "handoff",
        "--session",
        session,
        "--state-dir",
        &state,
        "--json",
    ];
    args.extend_from_slice(to);
    let envs = env.envs();
    let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = super::cairn(&args, &envs).await;
    assert_eq!(out.code, 0, "{} {}", out.stdout, out.stderr);
    out.stdout
}

#[tokio::test(flavor = "multi_thread")]
async fn update_brings_the_folders_new_head_into_the_worktree() {
    let env = Env::new(&[("a.txt", "one\n"), ("b.txt", "b\n")]);
    let (out, events) = env
        .run(
            edit_script("b.txt", "agent b\n", "true"),
            "work",
            &["--worktree", "u"],
        )
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let wt = super::path_of(&events);
    write(&env.folder, "a.txt", "upstream\n");
    git(&env.folder, &["commit", "-q", "-am", "upstream"]);
    let out = env.cairn(&["worktrees", "update", "u", "--json"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(wt.join("a.txt")).unwrap(),
        "upstream\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("b.txt")).unwrap(),
        "agent b\n",
        "work kept"
    );
    // The diff is against the new base: only the worktree's own change.
    let diff = env.cairn(&["worktrees", "diff", "u"]).await;
    assert!(
        diff.stdout.contains("+agent b") && !diff.stdout.contains("upstream"),
        "{}",
        diff.stdout
    );
}
