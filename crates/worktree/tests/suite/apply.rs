//! Applying a worktree's changes back to the folder.

use cairn_worktree::{
    execute, open_or_create, plan_apply, record_applied, CreateOptions, StateStore,
};

use super::support::{lines, write, Env};

fn apply(env: &Env, name: &str) -> cairn_worktree::ApplyPlan {
    let repo = env.repo();
    let record = repo.records.get(name).unwrap().unwrap();
    let store = StateStore::open(&repo.store_dir, &repo.common_dir).unwrap();
    let plan = plan_apply(&store, &record).unwrap();
    execute(&plan, &env.folder).unwrap();
    let applied = record_applied(&store, &record, &plan).unwrap();
    let mut r = record;
    r.applied = applied.to_string();
    repo.records.put(&r).unwrap();
    plan
}

#[test]
fn apply_merges_what_it_can_keeps_the_users_edits_and_lists_conflicts() {
    let env = Env::new(&[
        ("merge.txt", &lines(20, "base")),
        ("clash.txt", "shared line\n"),
        ("delete-me.txt", "bye\n"),
        ("bin.dat", "\0\x01base"),
        ("script.sh", "echo hi\n"),
    ]);
    let before = env.dot_git();
    let repo = env.repo();
    let opened = open_or_create(&repo, "a", &CreateOptions::default()).unwrap();
    let wt = opened.record.path.clone();
    // The agent's changes in the worktree.
    let mut theirs = lines(20, "base");
    theirs = theirs.replace("line 2 base", "line 2 from the worktree");
    write(&wt, "merge.txt", &theirs);
    write(&wt, "clash.txt", "worktree's version\n");
    write(&wt, "added/new.rs", "fn new() {}\n");
    std::fs::remove_file(wt.join("delete-me.txt")).unwrap();
    std::fs::write(wt.join("bin.dat"), b"\0\x01worktree").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(wt.join("script.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
    }
    std::os::unix::fs::symlink("merge.txt", wt.join("link")).unwrap();
    // Meanwhile the user edits the folder.
    let ours = lines(20, "base").replace("line 19 base", "line 19 from the user");
    env.write("merge.txt", &ours);
    env.write("clash.txt", "user's version\n");
    std::fs::write(env.folder.join("bin.dat"), b"\0\x01user").unwrap();

    let plan = apply(&env, "a");
    let merged = env.read("merge.txt");
    assert!(merged.contains("line 2 from the worktree"), "{merged}");
    assert!(merged.contains("line 19 from the user"), "{merged}");
    assert_eq!(env.read("added/new.rs"), "fn new() {}\n");
    assert!(!env.folder.join("delete-me.txt").exists());
    assert_eq!(
        std::fs::read_link(env.folder.join("link"))
            .unwrap()
            .to_str(),
        Some("merge.txt")
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(env.folder.join("script.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "the mode change is applied");
    }
    let conflicts: Vec<&str> = plan.conflicts.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        conflicts,
        vec!["bin.dat", "clash.txt"],
        "{:?}",
        plan.conflicts
    );
    assert_eq!(
        env.read("clash.txt"),
        "user's version\n",
        "a conflict is left untouched"
    );
    assert_eq!(
        std::fs::read(env.folder.join("bin.dat")).unwrap(),
        b"\0\x01user"
    );
    // Never commits, never moves HEAD or the index.
    assert_eq!(env.dot_git(), before);

    // A second apply brings only what changed since: the conflicts again (still unresolved),
    // plus a new change.
    write(&wt, "later.txt", "later\n");
    let plan = apply(&env, "a");
    let mut applied = plan.applied();
    applied.sort();
    assert_eq!(applied, vec!["later.txt"]);
    assert_eq!(plan.conflicts.len(), 2);
}

#[test]
fn an_apply_with_nothing_new_changes_nothing() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let repo = env.repo();
    let opened = open_or_create(&repo, "n", &CreateOptions::default()).unwrap();
    write(&opened.record.path, "a.txt", "two\n");
    let first = apply(&env, "n");
    assert_eq!(first.writes(), vec!["a.txt"]);
    let second = apply(&env, "n");
    assert!(second.is_empty());
    assert_eq!(env.read("a.txt"), "two\n");
}

#[test]
fn a_conflict_is_settled_by_keeping_the_folders_version_or_taking_the_worktrees() {
    use cairn_worktree::Resolution;
    let env = Env::new(&[
        ("keep.txt", "base\n"),
        ("take.txt", "base\n"),
        ("gone.txt", "base\n"),
    ]);
    let repo = env.repo();
    let opened = open_or_create(&repo, "r", &CreateOptions::default()).unwrap();
    let wt = opened.record.path.clone();
    write(&wt, "keep.txt", "worktree keep\n");
    write(&wt, "take.txt", "worktree take\n");
    std::fs::remove_file(wt.join("gone.txt")).unwrap();
    env.write("keep.txt", "folder keep\n");
    env.write("take.txt", "folder take\n");
    env.write("gone.txt", "folder edit\n");
    // A folder in the way of a worktree file: listed, but not settled by a click.
    write(&wt, "dir", "a file in the worktree\n");
    std::fs::create_dir_all(env.folder.join("dir")).unwrap();

    let record = repo.records.get("r").unwrap().unwrap();
    let store = StateStore::open(&repo.store_dir, &repo.common_dir).unwrap();
    let mut plan = plan_apply(&store, &record).unwrap();
    let mut listed: Vec<(&str, bool)> = plan
        .conflicts
        .iter()
        .map(|c| (c.path.as_str(), c.resolvable))
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            ("dir", false),
            ("gone.txt", true),
            ("keep.txt", true),
            ("take.txt", true)
        ]
    );
    assert!(plan
        .resolve(&store, "keep.txt", Resolution::KeepFolder)
        .unwrap());
    assert!(plan
        .resolve(&store, "take.txt", Resolution::TakeWorktree)
        .unwrap());
    assert!(plan
        .resolve(&store, "gone.txt", Resolution::TakeWorktree)
        .unwrap());
    assert!(!plan
        .resolve(&store, "dir", Resolution::TakeWorktree)
        .unwrap());
    assert!(!plan
        .resolve(&store, "nope.txt", Resolution::KeepFolder)
        .unwrap());
    let left: Vec<&str> = plan.conflicts.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(left, ["dir"]);
    execute(&plan, &env.folder).unwrap();
    let applied = record_applied(&store, &record, &plan).unwrap();
    let mut r = record;
    r.applied = applied.to_string();
    repo.records.put(&r).unwrap();
    assert_eq!(
        env.read("keep.txt"),
        "folder keep\n",
        "the folder's version stays"
    );
    assert_eq!(env.read("take.txt"), "worktree take\n");
    assert!(
        !env.folder.join("gone.txt").exists(),
        "deleted as in the worktree"
    );
    assert!(
        env.folder.join("dir").is_dir(),
        "the folder in the way is left alone"
    );
    // The worktree keeps its version; settled paths do not come back on the next apply.
    assert_eq!(
        std::fs::read_to_string(wt.join("keep.txt")).unwrap(),
        "worktree keep\n"
    );
    let again = plan_apply(&store, &r).unwrap();
    let left: Vec<&str> = again.conflicts.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(left, ["dir"]);
    assert!(again.writes().is_empty());
}
