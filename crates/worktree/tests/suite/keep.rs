//! What every removal keeps besides tracked and untracked changes: edited
//! `.worktreeinclude` copies, ignored files and nested repositories, restored byte for byte.

use std::os::unix::fs::PermissionsExt;

use cairn_worktree::{
    open_or_create, remove, remove_within, restore, CreateOptions, KeepBounds, WorktreeError,
};

use super::support::{git, write, Env};

fn with_env_file() -> Env {
    let env = Env::new(&[
        (".gitignore", ".env\n*.log\ncache/\nnode_modules/\n"),
        (".worktreeinclude", ".env\n"),
        ("a.txt", "one\n"),
    ]);
    env.write(".env", "TOKEN=original\n");
    env
}

#[test]
fn an_edited_env_and_new_ignored_files_survive_remove_byte_for_byte() {
    let env = with_env_file();
    let repo = env.repo();
    let wt = open_or_create(&repo, "k", &CreateOptions::default())
        .unwrap()
        .record
        .path;
    write(&wt, ".env", "TOKEN=edited in the worktree\n");
    std::fs::set_permissions(wt.join(".env"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let binary: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
    std::fs::create_dir_all(wt.join("logs")).unwrap();
    std::fs::write(wt.join("logs/run.log"), &binary).unwrap();
    std::os::unix::fs::symlink("../a.txt", wt.join("logs/link.log")).unwrap();
    write(&wt, "node_modules/dep/index.js", "dependency\n");

    // Nothing unapplied: no --force needed, and nothing is lost.
    let removal = remove(&repo, "k", false).unwrap();
    assert!(!wt.exists());
    assert_eq!(
        removal.kept,
        [".env", "logs/link.log", "logs/run.log"],
        "{removal:?}"
    );
    assert!(removal.unapplied.is_empty());
    assert!(removal.not_kept.is_empty(), "{removal:?}");
    assert_eq!(removal.dropped, ["node_modules/"]);
    assert!(removal.restorable_until.is_some());

    let record = restore(&repo, "k").unwrap();
    let wt = record.path;
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "TOKEN=edited in the worktree\n"
    );
    let mode = std::fs::metadata(wt.join(".env"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "a secret's permissions come back too");
    assert_eq!(std::fs::read(wt.join("logs/run.log")).unwrap(), binary);
    assert_eq!(
        std::fs::read_link(wt.join("logs/link.log")).unwrap(),
        std::path::Path::new("../a.txt")
    );
    assert!(!wt.join("node_modules").exists());
    // The folder's own .env was never touched.
    assert_eq!(env.read(".env"), "TOKEN=original\n");

    // Removed again, then forgotten on request: the name is free again.
    remove(&repo, "k", false).unwrap();
    let err = open_or_create(&repo, "k", &CreateOptions::default()).unwrap_err();
    assert!(err.to_string().contains("--force` forgets it"), "{err}");
    let forgot = remove(&repo, "k", true).unwrap();
    assert!(forgot.restorable_until.is_none());
    assert!(repo.records.get("k").unwrap().is_none());
    assert!(
        open_or_create(&repo, "k", &CreateOptions::default())
            .unwrap()
            .created
    );
}

#[test]
fn an_unchanged_include_is_copied_again_on_restore() {
    let env = with_env_file();
    let repo = env.repo();
    let wt = open_or_create(&repo, "u", &CreateOptions::default())
        .unwrap()
        .record
        .path;
    write(&wt, "a.txt", "unapplied\n");
    let removal = remove(&repo, "u", true).unwrap();
    assert!(
        removal.kept.is_empty(),
        "an unchanged include is not kept: {removal:?}"
    );
    let record = restore(&repo, "u").unwrap();
    assert_eq!(
        std::fs::read_to_string(record.path.join(".env")).unwrap(),
        "TOKEN=original\n"
    );
    assert_eq!(
        std::fs::read_to_string(record.path.join("a.txt")).unwrap(),
        "unapplied\n"
    );
}

#[test]
fn an_unchanged_include_is_not_kept_and_a_clean_removal_frees_the_name() {
    let env = with_env_file();
    let repo = env.repo();
    open_or_create(&repo, "c", &CreateOptions::default()).unwrap();
    let removal = remove(&repo, "c", false).unwrap();
    assert!(removal.kept.is_empty(), "{removal:?}");
    assert!(removal.restorable_until.is_none());
    assert!(repo.records.get("c").unwrap().is_none());
    assert!(open_or_create(&repo, "c", &CreateOptions::default()).is_ok());
}

#[test]
fn what_exceeds_the_bound_is_named_before_deletion_and_needs_force() {
    let env = with_env_file();
    let repo = env.repo();
    let wt = open_or_create(&repo, "b", &CreateOptions::default())
        .unwrap()
        .record
        .path;
    for i in 0..5 {
        write(&wt, &format!("cache/{i}.bin"), "cached\n");
    }
    write(&wt, "big.log", &"x".repeat(2000));
    write(&wt, "small.log", "small\n");
    let bounds = KeepBounds {
        max_dir_files: 3,
        max_file_bytes: 1000,
        ..KeepBounds::default()
    };
    let err = remove_within(&repo, "b", false, &bounds).unwrap_err();
    assert!(matches!(err, WorktreeError::NotKept { .. }), "{err}");
    assert!(!err.is_usage());
    let text = err.to_string();
    assert!(
        text.contains("cache/") && text.contains("big.log"),
        "{text}"
    );
    assert!(text.contains("--force"), "{text}");
    assert!(!text.contains("small.log"), "{text}");
    assert!(wt.join("cache/0.bin").exists() && wt.join("big.log").exists());

    let removal = remove_within(&repo, "b", true, &bounds).unwrap();
    assert_eq!(removal.kept, ["small.log"]);
    assert_eq!(removal.not_kept.len(), 2, "{removal:?}");
    assert!(!wt.exists());
    let record = restore(&repo, "b").unwrap();
    assert_eq!(
        std::fs::read_to_string(record.path.join("small.log")).unwrap(),
        "small\n"
    );
}

#[test]
fn a_nested_repository_with_a_commit_survives_remove_with_its_history() {
    let env = with_env_file();
    let repo = env.repo();
    let wt = open_or_create(&repo, "n", &CreateOptions::default())
        .unwrap()
        .record
        .path;
    let nested = wt.join("tool");
    std::fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    write(&nested, "main.c", "int main() {}\n");
    git(&nested, &["add", "-A"]);
    git(&nested, &["commit", "-q", "-m", "nested work"]);
    let head = git(&nested, &["rev-parse", "HEAD"]);
    write(&wt, "a.txt", "fixed\n");
    git(&wt, &["commit", "-q", "-am", "fix"]);

    // The worktree's own status works despite the nested repository.
    let store = cairn_worktree::StateStore::open(&repo.store_dir, &repo.common_dir).unwrap();
    let record = repo.records.get("n").unwrap().unwrap();
    let status = cairn_worktree::status(&repo, &store, &record).unwrap();
    assert_eq!(status.commits_ahead, 1);

    let removal = remove(&repo, "n", false).unwrap();
    assert_eq!(removal.kept, ["tool/"], "{removal:?}");
    assert_eq!(removal.unmerged_commits.len(), 1);
    assert!(removal.unmerged_commits[0].ends_with(" fix"), "{removal:?}");
    assert!(!wt.exists());
    let record = restore(&repo, "n").unwrap();
    let nested = record.path.join("tool");
    assert_eq!(git(&nested, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&nested, &["status", "--porcelain"]), "");
    assert_eq!(
        git(&nested, &["log", "-1", "--format=%s"]).trim(),
        "nested work"
    );
}

#[test]
fn a_nested_repository_whose_history_lives_elsewhere_makes_remove_refuse() {
    let env = with_env_file();
    let repo = env.repo();
    let wt = open_or_create(&repo, "f", &CreateOptions::default())
        .unwrap()
        .record
        .path;
    write(&wt, "other/.git", "gitdir: /somewhere/else\n");
    write(&wt, "other/x.txt", "x\n");
    let err = remove(&repo, "f", false).unwrap_err();
    assert!(err.to_string().contains("other/"), "{err}");
    assert!(wt.join("other/x.txt").exists());
}
