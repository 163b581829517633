//! Creating and reusing worktrees.

use cairn_worktree::{open_or_create, CreateOptions};

use super::support::{git, write, Env};

#[test]
fn a_new_worktree_is_a_real_git_worktree_and_leaves_the_users_repository_alone() {
    let env = Env::new(&[("a.txt", "one\n"), ("src/lib.rs", "fn x() {}\n")]);
    env.git(&["branch", "other"]);
    write(&env.folder, "stash-me.txt", "x\n");
    env.git(&["stash", "push", "-u", "-q"]);
    env.write("a.txt", "edited by the user\n");
    let head = env.git(&["rev-parse", "HEAD"]);
    let before = env.dot_git();
    let repo = env.repo();
    let opened = open_or_create(&repo, "feat", &CreateOptions::default()).unwrap();
    assert!(opened.created);
    assert_eq!(
        opened.left_out, 1,
        "the folder's one uncommitted change is left out"
    );
    let wt = &opened.record.path;
    assert!(!wt.starts_with(&env.folder));
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "one\n");
    assert_eq!(
        std::fs::read_to_string(wt.join("src/lib.rs")).unwrap(),
        "fn x() {}\n"
    );
    let list = env.git(&["worktree", "list", "--porcelain"]);
    assert!(
        list.contains(&format!("worktree {}", wt.display())),
        "{list}"
    );
    assert!(list.contains("branch refs/heads/cairn/feat"), "{list}");
    assert_eq!(git(wt, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(wt, &["status", "--porcelain"]), "", "a clean checkout");
    // Edits in the worktree never reach the folder.
    write(wt, "a.txt", "worktree edit\n");
    write(wt, "new.txt", "new\n");
    assert_eq!(env.read("a.txt"), "edited by the user\n");
    assert!(!env.folder.join("new.txt").exists());
    // HEAD, index, stash and the other branches are as they were.
    assert_eq!(env.dot_git(), before);
    assert_eq!(env.git(&["rev-parse", "HEAD"]), head);
    assert_eq!(env.git(&["stash", "list"]).lines().count(), 1);
}

#[test]
fn the_same_name_is_reused_and_never_recreated() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let repo = env.repo();
    let first = open_or_create(&repo, "w", &CreateOptions::default()).unwrap();
    write(&first.record.path, "a.txt", "work\n");
    let again = open_or_create(&repo, "w", &CreateOptions::default()).unwrap();
    assert!(!again.created);
    assert_eq!(again.record, first.record);
    assert_eq!(
        std::fs::read_to_string(first.record.path.join("a.txt")).unwrap(),
        "work\n"
    );
    let carry = CreateOptions {
        carry_changes: true,
        ..CreateOptions::default()
    };
    let err = open_or_create(&repo, "w", &carry).unwrap_err();
    assert!(
        err.is_usage() && err.to_string().contains("--carry-changes"),
        "{err}"
    );
}

#[test]
fn two_processes_creating_one_name_at_once_create_it_once() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let layout = env.layout.clone();
    let folder = env.folder.clone();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (layout, folder) = (layout.clone(), folder.clone());
            std::thread::spawn(move || {
                let repo = cairn_worktree::Repo::discover(&folder, &layout).unwrap();
                open_or_create(&repo, "same", &CreateOptions::default())
                    .unwrap()
                    .created
            })
        })
        .collect();
    let created: Vec<bool> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(created.iter().filter(|c| **c).count(), 1, "{created:?}");
    let list = env.git(&["worktree", "list"]);
    assert_eq!(list.lines().count(), 2, "{list}");
}

#[test]
fn carried_changes_are_copied_and_the_folder_is_untouched() {
    let env = Env::new(&[
        ("a.txt", "one\n"),
        ("gone.txt", "x\n"),
        (".gitignore", "*.log\n"),
    ]);
    env.write("a.txt", "unstaged\n");
    env.write("staged.txt", "staged\n");
    env.git(&["add", "staged.txt"]);
    env.write("untracked/u.txt", "untracked\n");
    env.write("build.log", "ignored\n");
    std::fs::remove_file(env.folder.join("gone.txt")).unwrap();
    let before = env.dot_git();
    let repo = env.repo();
    let carry = CreateOptions {
        carry_changes: true,
        ..CreateOptions::default()
    };
    let opened = open_or_create(&repo, "c", &carry).unwrap();
    let wt = &opened.record.path;
    assert_eq!(
        std::fs::read_to_string(wt.join("a.txt")).unwrap(),
        "unstaged\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("staged.txt")).unwrap(),
        "staged\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("untracked/u.txt")).unwrap(),
        "untracked\n"
    );
    assert!(!wt.join("gone.txt").exists());
    assert!(
        !wt.join("build.log").exists(),
        "ignored files are not carried"
    );
    assert_eq!(env.read("a.txt"), "unstaged\n");
    assert_eq!(env.dot_git(), before);
    // Carried changes are the worktree's starting state: nothing to apply back yet.
    let store = cairn_worktree::StateStore::open(&repo.store_dir, &repo.common_dir).unwrap();
    let plan = cairn_worktree::plan_apply(&store, &opened.record).unwrap();
    assert!(plan.is_empty(), "{:?}", plan.applied());
}

#[test]
fn worktreeinclude_copies_listed_ignored_files_but_not_dependency_folders() {
    let env = Env::new(&[
        (
            ".gitignore",
            ".env\nnode_modules/\nconfig/local/\ntarget/\n",
        ),
        (".worktreeinclude", ".env\nconfig/local/*.json\n"),
        ("a.txt", "one\n"),
    ]);
    env.write(".env", "SECRET=1\n");
    env.write("node_modules/dep/index.js", "x\n");
    env.write("config/local/dev.json", "{}\n");
    env.write("config/local/notes.txt", "n\n");
    env.write("target/debug/out", "bin\n");
    let repo = env.repo();
    let opened = open_or_create(&repo, "inc", &CreateOptions::default()).unwrap();
    let wt = &opened.record.path;
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert!(wt.join("config/local/dev.json").is_file());
    assert!(!wt.join("config/local/notes.txt").exists());
    assert!(!wt.join("node_modules").exists());
    assert!(!wt.join("target").exists());
    assert_eq!(
        opened.record.included,
        vec![".env", "config/local/dev.json"]
    );
    assert_eq!(opened.left_out, 0);
}

#[test]
fn a_folder_outside_git_an_empty_repository_and_foreign_names_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let layout = cairn_worktree::Layout {
        state_dir: dir.path().join("state"),
        root: dir.path().join("wt"),
    };
    let err = cairn_worktree::Repo::discover(&plain, &layout)
        .err()
        .unwrap();
    assert!(
        err.is_usage() && err.to_string().contains("not inside a git repository"),
        "{err}"
    );

    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    git(&empty, &["init", "-q"]);
    let repo = cairn_worktree::Repo::discover(&empty, &layout).unwrap();
    let err = open_or_create(&repo, "x", &CreateOptions::default()).unwrap_err();
    assert!(
        err.is_usage() && err.to_string().contains("no commit"),
        "{err}"
    );
    assert!(
        !layout.root.join(&repo.id).join("x").exists(),
        "nothing half made"
    );

    let env = Env::new(&[("a.txt", "one\n")]);
    env.git(&["branch", "cairn/taken"]);
    let repo = env.repo();
    let err = open_or_create(&repo, "taken", &CreateOptions::default()).unwrap_err();
    assert!(
        err.is_usage() && err.to_string().contains("already exists"),
        "{err}"
    );
    let err = open_or_create(&repo, "-bad", &CreateOptions::default()).unwrap_err();
    assert!(err.is_usage(), "{err}");
}

#[test]
fn a_worktree_whose_git_pointer_was_changed_is_not_used() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let repo = env.repo();
    let opened = open_or_create(&repo, "p", &CreateOptions::default()).unwrap();
    std::fs::write(opened.record.path.join(".git"), "gitdir: /tmp/elsewhere\n").unwrap();
    let err = open_or_create(&repo, "p", &CreateOptions::default()).unwrap_err();
    assert!(
        err.is_usage() && err.to_string().contains("no longer points"),
        "{err}"
    );
}

#[test]
fn a_tracked_link_on_the_way_of_an_included_file_is_not_followed_and_is_named() {
    let env = Env::new(&[
        (".gitignore", "*.env\n"),
        (".worktreeinclude", "*.env\n"),
        ("a.txt", "one\n"),
    ]);
    // A tracked link that, from a worktree (whose folder is predictable), reaches outside.
    let outside = env.folder.parent().unwrap().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink("../../../outside", env.folder.join("config")).unwrap();
    env.git(&["add", "config"]);
    env.git(&["commit", "-q", "-m", "link"]);
    // In the folder `config` is a real folder now, holding an included file.
    std::fs::remove_file(env.folder.join("config")).unwrap();
    write(&env.folder, "config/secret.env", "SECRET=1\n");
    write(&env.folder, "top.env", "TOP=1\n");
    let repo = env.repo();
    let opened = open_or_create(&repo, "l", &CreateOptions::default()).unwrap();
    let wt = &opened.record.path;
    assert!(
        std::fs::symlink_metadata(wt.join("config"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the checkout has the tracked link"
    );
    assert!(
        !outside.join("secret.env").exists(),
        "nothing written through the link"
    );
    assert_eq!(opened.record.included, ["top.env"]);
    assert_eq!(opened.skipped.len(), 1, "{:?}", opened.skipped);
    assert!(
        opened.skipped[0].starts_with("config/secret.env") && opened.skipped[0].contains("link"),
        "{:?}",
        opened.skipped
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("top.env")).unwrap(),
        "TOP=1\n"
    );
}
