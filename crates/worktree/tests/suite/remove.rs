//! Removing worktrees without losing work, and restoring removed ones.

use cairn_worktree::{open_or_create, remove, restore, CreateOptions};

use super::support::{git, write, Env};

#[test]
fn remove_refuses_unapplied_changes_and_force_keeps_them_restorable() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let repo = env.repo();
    let opened = open_or_create(&repo, "r", &CreateOptions::default()).unwrap();
    let wt = opened.record.path.clone();
    write(&wt, "a.txt", "unapplied work\n");
    write(&wt, "new.txt", "new\n");
    let err = remove(&repo, "r", false).unwrap_err();
    assert!(!err.is_usage(), "a refusal, not a usage error");
    let text = err.to_string();
    assert!(text.contains("a.txt") && text.contains("new.txt"), "{text}");
    assert!(wt.join("a.txt").exists(), "nothing removed");

    let removal = remove(&repo, "r", true).unwrap();
    assert!(!wt.exists());
    assert!(removal.branch_deleted);
    assert_eq!(removal.unapplied, vec!["a.txt", "new.txt"]);
    assert!(removal.restorable_until.is_some());
    let list = env.git(&["worktree", "list"]);
    assert_eq!(list.lines().count(), 1, "{list}");
    let err = open_or_create(&repo, "r", &CreateOptions::default()).unwrap_err();
    assert!(err.to_string().contains("restore"), "{err}");

    let record = restore(&repo, "r").unwrap();
    assert_eq!(
        std::fs::read_to_string(record.path.join("a.txt")).unwrap(),
        "unapplied work\n"
    );
    assert_eq!(
        std::fs::read_to_string(record.path.join("new.txt")).unwrap(),
        "new\n"
    );
    assert!(env.git(&["worktree", "list"]).contains("cairn/r"));
    assert!(open_or_create(&repo, "r", &CreateOptions::default()).is_ok());
}

#[test]
fn committed_work_keeps_the_branch_and_clean_worktrees_go_quietly() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let repo = env.repo();
    let opened = open_or_create(&repo, "c", &CreateOptions::default()).unwrap();
    let wt = opened.record.path.clone();
    write(&wt, "a.txt", "committed\n");
    git(&wt, &["commit", "-q", "-am", "work"]);
    let removal = remove(&repo, "c", false).unwrap();
    assert!(!removal.branch_deleted);
    assert_eq!(removal.commits_ahead, 1);
    assert!(removal.restorable_until.is_none());
    assert!(env
        .git(&["branch", "--list", "cairn/c"])
        .contains("cairn/c"));
    // The name is free again? No: the branch holds commits, so the name stays taken.
    let err = open_or_create(&repo, "c", &CreateOptions::default()).unwrap_err();
    assert!(err.is_usage(), "{err}");

    let clean = open_or_create(&repo, "clean", &CreateOptions::default()).unwrap();
    let removal = remove(&repo, "clean", false).unwrap();
    assert!(removal.branch_deleted);
    assert!(!clean.record.path.exists());
    assert!(env.git(&["branch", "--list", "cairn/clean"]).is_empty());
}

#[test]
fn a_worktree_cairn_did_not_create_is_never_removed() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let mine = env.folder.parent().unwrap().join("users-own");
    env.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        mine.to_str().unwrap(),
    ]);
    let repo = env.repo();
    for name in ["users-own", "feature"] {
        let err = remove(&repo, name, true).unwrap_err();
        assert!(
            err.is_usage() && err.to_string().contains("did not create"),
            "{err}"
        );
    }
    assert!(mine.join("a.txt").exists());
    assert!(env.git(&["worktree", "list"]).contains("users-own"));
}

#[test]
fn commit_on_branch_makes_work_safe_and_expired_removals_are_forgotten() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let repo = env.repo();
    let opened = open_or_create(&repo, "k", &CreateOptions::default()).unwrap();
    write(&opened.record.path, "a.txt", "two\n");
    let err = cairn_worktree::commit(&repo, "k", "  ").unwrap_err();
    assert!(err.is_usage());
    let c = cairn_worktree::commit(&repo, "k", "Change a\n\nBecause.").unwrap();
    assert_eq!(c.branch, "cairn/k");
    assert_eq!(
        env.git(&["log", "-1", "--format=%s", "cairn/k"]).trim(),
        "Change a"
    );
    let err = cairn_worktree::commit(&repo, "k", "again").unwrap_err();
    assert!(err.to_string().contains("nothing to commit"), "{err}");
    // Committed work is safe: remove needs no --force and keeps the branch.
    let removal = remove(&repo, "k", false).unwrap();
    assert!(!removal.branch_deleted);

    // A removal older than the retention is forgotten.
    let gone = open_or_create(&repo, "old", &CreateOptions::default()).unwrap();
    write(&gone.record.path, "x.txt", "x\n");
    remove(&repo, "old", true).unwrap();
    let mut record = repo.records.get("old").unwrap().unwrap();
    let removed = record.removed.as_mut().unwrap();
    removed.at = (chrono::Utc::now() - chrono::Duration::days(31)).to_rfc3339();
    repo.records.put(&record).unwrap();
    assert_eq!(cairn_worktree::prune_expired(&repo).unwrap(), vec!["old"]);
    assert!(repo.records.get("old").unwrap().is_none());
}

#[test]
fn a_moved_or_deleted_folder_and_git_worktree_prune_leave_the_work_recoverable() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let repo = env.repo();
    let record = open_or_create(&repo, "m", &CreateOptions::default())
        .unwrap()
        .record;
    let wt = record.path.clone();
    write(&wt, "a.txt", "work\n");
    git(&wt, &["commit", "-q", "-am", "saved work"]);

    // The user moved the folder away: said in words they can act on; nothing is forgotten.
    let moved = wt.with_file_name("m-moved");
    std::fs::rename(&wt, &moved).unwrap();
    let err = cairn_worktree::check(&repo, &record).unwrap_err();
    assert!(
        err.is_usage() && err.to_string().contains("move it back"),
        "{err}"
    );
    let err = remove(&repo, "m", false).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("move it back"), "{text}");
    assert!(
        text.contains("cairn/m and its 1 commit(s) are kept"),
        "{text}"
    );
    std::fs::rename(&moved, &wt).unwrap();
    cairn_worktree::check(&repo, &record).unwrap();

    // Deleted, and the repository's own `git worktree prune` dropped the registration:
    // forgetting it keeps the branch with its commit.
    std::fs::remove_dir_all(&wt).unwrap();
    env.git(&["worktree", "prune"]);
    let removal = remove(&repo, "m", true).unwrap();
    assert!(!removal.branch_deleted);
    assert_eq!(removal.commits_ahead, 1);
    assert!(
        removal.unmerged_commits[0].ends_with(" saved work"),
        "{removal:?}"
    );
    assert_eq!(
        env.git(&["log", "-1", "--format=%s", "cairn/m"]).trim(),
        "saved work"
    );
    assert!(repo.records.get("m").unwrap().is_none());
}

#[test]
fn a_ref_lock_left_by_a_killed_process_does_not_block_the_next_removal() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let repo = env.repo();
    let wt = open_or_create(&repo, "s", &CreateOptions::default())
        .unwrap()
        .record
        .path;
    write(&wt, "a.txt", "work\n");
    // A process killed while it updated the ref left its lock file behind.
    let lock = repo.store_dir.join("refs/cairn/removed/s.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, "").unwrap();
    let removal = remove(&repo, "s", true).unwrap();
    assert_eq!(removal.unapplied, ["a.txt"]);
    assert!(!lock.exists());
    let record = restore(&repo, "s").unwrap();
    assert_eq!(
        std::fs::read_to_string(record.path.join("a.txt")).unwrap(),
        "work\n"
    );
}
