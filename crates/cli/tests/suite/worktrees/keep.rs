//! What `cairn worktrees remove` keeps (ignored files, edited `.worktreeinclude` copies,
//! nested repositories), what needs `--force`, and one broken or odd worktree never blocking
//! the others.

use cairn_testkit::git::git;
use cairn_testkit::Reply;
use serde_json::Value;

use super::{path_of, write, Env};

fn with_env_file() -> Env {
    let env = Env::new(&[
        (".gitignore", ".env\n*.log\n"),
        (".worktreeinclude", ".env\n"),
        ("a.txt", "one\n"),
    ]);
    write(&env.folder, ".env", "TOKEN=folder\n");
    env
}

async fn make(env: &Env, name: &str) -> std::path::PathBuf {
    let (out, events) = env
        .run(vec![Reply::text("ready")], "start", &["--worktree", name])
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    path_of(&events)
}

#[tokio::test(flavor = "multi_thread")]
async fn remove_keeps_an_edited_env_and_new_ignored_files_and_restore_brings_them_back() {
    let env = with_env_file();
    let wt = make(&env, "k").await;
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "TOKEN=folder\n"
    );
    write(&wt, ".env", "TOKEN=edited\n");
    let log: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    std::fs::write(wt.join("run.log"), &log).unwrap();

    let out = env.cairn(&["worktrees", "remove", "k"]).await;
    assert_eq!(out.code, 0, "no --force needed: {}", out.stderr);
    assert!(out.stdout.contains("kept  .env"), "{}", out.stdout);
    assert!(out.stdout.contains("kept  run.log"), "{}", out.stdout);
    assert!(
        out.stdout.contains("cairn worktrees restore k"),
        "{}",
        out.stdout
    );
    assert!(!wt.exists());

    let out = env.cairn(&["worktrees", "restore", "k"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "TOKEN=edited\n"
    );
    assert_eq!(std::fs::read(wt.join("run.log")).unwrap(), log);
    assert_eq!(env.read(".env").unwrap(), "TOKEN=folder\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_over_the_bound_is_named_before_anything_is_deleted_and_needs_force() {
    let env = with_env_file();
    let wt = make(&env, "big").await;
    std::fs::write(wt.join("huge.log"), vec![b'x'; 11 * 1024 * 1024]).unwrap();
    write(&wt, "small.log", "small\n");
    let out = env.cairn(&["worktrees", "remove", "big"]).await;
    assert_eq!(out.code, 1, "a refusal: {}", out.stderr);
    assert!(out.stderr.contains("huge.log"), "{}", out.stderr);
    assert!(out.stderr.contains("--force"), "{}", out.stderr);
    assert!(wt.join("huge.log").exists() && wt.join("small.log").exists());

    let out = env
        .cairn(&["worktrees", "remove", "big", "--force", "--json"])
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let r: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(r["kept"], serde_json::json!(["small.log"]), "{r}");
    assert!(
        r["notKept"][0].as_str().unwrap().starts_with("huge.log"),
        "{r}"
    );
    assert_eq!(r["unmergedCommits"], serde_json::json!([]));
    assert!(!wt.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_worktree_is_listed_as_broken_and_a_nested_repository_blocks_nothing() {
    let env = with_env_file();
    let good = make(&env, "good").await;
    let nested = make(&env, "nested").await;
    let broken = make(&env, "broken").await;
    write(&good, "g.txt", "good\n");
    // The agent ran `git init` inside its worktree and committed there.
    let sub = nested.join("tool");
    std::fs::create_dir_all(&sub).unwrap();
    git(&sub, &["init", "-q"]);
    write(&sub, "t.c", "int t;\n");
    git(&sub, &["add", "-A"]);
    git(&sub, &["commit", "-q", "-m", "nested history"]);
    write(&nested, "a.txt", "the fix\n");
    // Someone pointed the third one's .git elsewhere.
    write(&broken, ".git", "gitdir: /nowhere\n");

    let out = env.cairn(&["worktrees", "list", "--json"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let row = |n: &str| rows.iter().find(|r| r["name"] == n).unwrap().clone();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(row("broken")["broken"]
        .as_str()
        .unwrap()
        .contains("git dir"));
    assert_eq!(row("good")["broken"], Value::Null);
    assert_eq!(row("good")["unappliedFiles"], 1);
    assert_eq!(row("nested")["broken"], Value::Null);
    assert_eq!(row("nested")["unappliedFiles"], 1, "{:?}", row("nested"));
    let human = env.cairn(&["worktrees", "list"]).await;
    assert!(
        human.stdout.contains("broken  cairn/broken  BROKEN:"),
        "{}",
        human.stdout
    );

    let out = env.cairn(&["worktrees", "diff", "nested"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("+the fix"), "{}", out.stdout);
    let out = env.cairn(&["worktrees", "apply", "nested", "--json"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let r: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(r["applied"], serde_json::json!(["a.txt"]), "{r}");
    assert!(
        r["skipped"][0].as_str().unwrap().starts_with("tool/"),
        "{r}"
    );
    assert_eq!(env.read("a.txt").unwrap(), "the fix\n");

    let out = env.cairn(&["worktrees", "apply", "good"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(env.read("g.txt").unwrap(), "good\n");

    let out = env.cairn(&["worktrees", "remove", "nested"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("kept  tool/"), "{}", out.stdout);
    let out = env.cairn(&["worktrees", "restore", "nested"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        git(&sub, &["log", "-1", "--format=%s"]).trim(),
        "nested history"
    );
    let out = env.cairn(&["worktrees", "remove", "good"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
}
