//! Bringing the folder's newer HEAD into a worktree.

use cairn_worktree::{open_or_create, update, CreateOptions, UpdateHow};

use super::support::{git, write, Env};

#[test]
fn the_folders_new_commits_merge_or_rebase_into_the_worktree_and_conflicts_are_shown() {
    let env = Env::new(&[("a.txt", "one\n"), ("b.txt", "b\n")]);
    let repo = env.repo();
    let opened = open_or_create(&repo, "u", &CreateOptions::default()).unwrap();
    let wt = opened.record.path.clone();
    write(&wt, "w.txt", "worktree\n");
    git(&wt, &["add", "-A"]);
    git(&wt, &["commit", "-q", "-m", "w"]);
    env.write("a.txt", "two\n");
    env.git(&["commit", "-q", "-am", "folder moved"]);
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_string();

    let merged = update(&repo, "u", UpdateHow::Merge).unwrap();
    assert!(
        !merged.up_to_date && merged.conflicts.is_empty(),
        "{merged:?}"
    );
    assert_eq!(std::fs::read_to_string(wt.join("a.txt")).unwrap(), "two\n");
    assert!(wt.join("w.txt").exists());
    assert_eq!(
        repo.records.get("u").unwrap().unwrap().base,
        head,
        "the base follows"
    );
    assert!(update(&repo, "u", UpdateHow::Merge).unwrap().up_to_date);

    // Both change one line: the conflict is listed and left in the worktree.
    write(&wt, "b.txt", "worktree b\n");
    git(&wt, &["commit", "-q", "-am", "wb"]);
    env.write("b.txt", "folder b\n");
    env.git(&["commit", "-q", "-am", "fb"]);
    let clash = update(&repo, "u", UpdateHow::Rebase).unwrap();
    assert_eq!(clash.conflicts, vec!["b.txt"]);
    let text = std::fs::read_to_string(wt.join("b.txt")).unwrap();
    assert!(text.contains("<<<<<<<"), "{text}");
    assert_eq!(env.read("b.txt"), "folder b\n", "the folder is untouched");
}
