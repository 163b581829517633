//! `cairn worktrees apply`, its undo by `cairn restore`, `remove` and `restore`.

use cairn_testkit::git::git;
use cairn_testkit::Reply;
use serde_json::Value;

use super::{edit_script, path_of, write, Env};

fn lines20(tag_at: Option<(usize, &str)>) -> String {
    (1..=20)
        .map(|i| match tag_at {
            Some((n, t)) if n == i => format!("line {i} {t}\n"),
            _ => format!("line {i}\n"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_merges_keeps_the_users_edits_lists_conflicts_and_restore_undoes_it() {
    let env = Env::new(&[("a.txt", &lines20(None)), ("clash.txt", "base\n")]);
    let before = env.dot_git();
    let script = vec![
        Reply::tool_call(
            "c1",
            "write_file",
            serde_json::json!({"path": "a.txt", "content": lines20(Some((2, "worktree")))}),
        ),
        Reply::tool_call(
            "c2",
            "run_shell",
            serde_json::json!({"command": "printf new > new.txt && printf theirs > clash.txt"}),
        ),
        Reply::text("done"),
    ];
    let (out, events) = env.run(script, "work", &["--worktree", "m"]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let wt = path_of(&events);
    // Meanwhile the user edits the folder.
    write(&env.folder, "a.txt", &lines20(Some((19, "user"))));
    write(&env.folder, "clash.txt", "mine\n");

    let dry = env
        .cairn(&["worktrees", "apply", "m", "--dry-run", "--json"])
        .await;
    assert_eq!(dry.code, 1, "conflicts remain: {}", dry.stderr);
    let d: Value = serde_json::from_str(dry.stdout.trim()).unwrap();
    assert_eq!(d["checkpoint"], Value::Null);
    assert_eq!(env.read("new.txt"), None, "a dry run writes nothing");

    let out = env.cairn(&["worktrees", "apply", "m", "--json"]).await;
    assert_eq!(out.code, 1, "{}", out.stderr);
    let r: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    let mut applied: Vec<&str> = r["applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    applied.sort();
    assert_eq!(applied, vec!["a.txt", "new.txt"]);
    assert_eq!(r["conflicts"][0]["path"], "clash.txt");
    assert!(r["conflicts"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("both"));
    let merged = env.read("a.txt").unwrap();
    assert!(
        merged.contains("line 2 worktree") && merged.contains("line 19 user"),
        "{merged}"
    );
    assert_eq!(env.read("new.txt").as_deref(), Some("new"));
    assert_eq!(
        env.read("clash.txt").as_deref(),
        Some("mine\n"),
        "a conflict is left alone"
    );
    assert_eq!(
        env.dot_git(),
        before,
        "apply never commits or touches the index"
    );

    // The apply is a change-turn of a folder session: its `undo` command reverses it and keeps
    // the user's own edits.
    let session = r["session"].as_str().unwrap();
    assert!(r["checkpoint"].as_u64().unwrap() >= 1);
    let undo = r["undo"].as_str().unwrap();
    assert!(
        undo.starts_with(&format!("cairn restore --session {session} --to-turn ")),
        "{undo}"
    );
    let words: Vec<&str> = undo.split_whitespace().skip(1).collect();
    let words: Vec<String> = words
        .iter()
        .map(|w| w.trim_matches('\'').to_string())
        .collect();
    let args: Vec<&str> = words.iter().map(String::as_str).collect();
    let restored = super::cairn(&args, &[]).await;
    assert_eq!(restored.code, 0, "{} {}", restored.stdout, restored.stderr);
    assert_eq!(env.read("a.txt").unwrap(), lines20(Some((19, "user"))));
    assert_eq!(env.read("new.txt"), None);
    assert_eq!(env.read("clash.txt").as_deref(), Some("mine\n"));
    assert!(wt.join("new.txt").exists(), "the worktree keeps its work");

    // The conflict settled by taking the worktree's version: nothing left, exit 0.
    let took = env
        .cairn(&["worktrees", "apply", "m", "--take", "clash.txt", "--json"])
        .await;
    assert_eq!(took.code, 0, "{} {}", took.stdout, took.stderr);
    let t: Value = serde_json::from_str(took.stdout.trim()).unwrap();
    assert_eq!(t["conflicts"], serde_json::json!([]));
    assert_eq!(env.read("clash.txt").as_deref(), Some("theirs"));
}

#[tokio::test(flavor = "multi_thread")]
async fn remove_refuses_unapplied_work_force_keeps_it_restorable_and_foreign_worktrees_stay() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let (out, events) = env
        .run(
            edit_script("a.txt", "two\n", "printf n > n.txt"),
            "work",
            &["--worktree", "r"],
        )
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let wt = path_of(&events);
    let refused = env.cairn(&["worktrees", "remove", "r"]).await;
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("a.txt") && refused.stderr.contains("n.txt"),
        "{}",
        refused.stderr
    );
    assert!(wt.join("n.txt").exists());

    let forced = env.cairn(&["worktrees", "remove", "r", "--force"]).await;
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert!(!wt.exists());
    assert!(forced.stdout.contains("restore"), "{}", forced.stdout);
    let back = env.cairn(&["worktrees", "restore", "r"]).await;
    assert_eq!(back.code, 0, "{}", back.stderr);
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "two\n");
    assert_eq!(std::fs::read_to_string(wt.join("n.txt")).unwrap(), "n");

    // Applied work removes without --force.
    let applied = env.cairn(&["worktrees", "apply", "r"]).await;
    assert_eq!(applied.code, 0, "{}", applied.stderr);
    let removed = env.cairn(&["worktrees", "remove", "r"]).await;
    assert_eq!(removed.code, 0, "{}", removed.stderr);
    assert!(!wt.exists());

    // A worktree the user made is never Cairn's to remove; unknown names are usage errors.
    let theirs = env.folder.parent().unwrap().join("theirs");
    git(
        &env.folder,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "mine",
            theirs.to_str().unwrap(),
        ],
    );
    for name in ["theirs", "mine", "nope"] {
        let out = env.cairn(&["worktrees", "remove", name, "--force"]).await;
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
    }
    assert!(theirs.join("a.txt").exists());
}
