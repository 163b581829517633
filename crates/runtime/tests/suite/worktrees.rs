//! Worktree glue of the runtime: the commit message the agent proposes.

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_runtime::worktrees::propose_commit_message;

#[tokio::test]
async fn the_proposed_commit_message_comes_from_the_model_over_the_diff() {
    let llm = Arc::new(FakeLlm::new(vec![FakeReply::text(
        "```\nAdd the parser\n\nIt reads the new format.\n```",
    )]));
    let diff = "--- a/p.rs\n+++ b/p.rs\n@@ -0,0 +1 @@\n+fn parse() {}\n";
    let msg = propose_commit_message(llm.clone(), "m", diff).await;
    assert_eq!(
        msg.as_deref(),
        Some("Add the parser\n\nIt reads the new format.")
    );
    let sent = llm.requests();
    assert!(sent[0]
        .messages
        .iter()
        .any(|m| format!("{m:?}").contains("fn parse()")));
    // An empty diff asks nothing.
    assert_eq!(propose_commit_message(llm.clone(), "m", "  ").await, None);
    assert_eq!(llm.requests().len(), 1);
}

#[test]
fn the_review_shows_each_changed_file_and_the_board_row_counts_them() {
    use cairn_runtime::worktrees::{list, prepare, review, ReviewStatus};
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("repo");
    cairn_testkit::git::repo_with(&folder, &[("a.txt", "one\n"), ("gone.txt", "x\n")]);
    let state = dir.path().join("state");
    // The root is moved into the temp dir through the layout the state dir implies.
    let p = prepare(&folder, &state, "r", false, &|_, _| {}).unwrap();
    assert!(p.worktree.created);
    let wt = std::path::PathBuf::from(&p.worktree.path);
    assert!(wt.starts_with(dir.path()), "{wt:?}: next to the state dir");
    std::fs::write(wt.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(wt.join("new.rs"), "fn x() {}\n").unwrap();
    std::fs::remove_file(wt.join("gone.txt")).unwrap();
    let r = review(&folder, &state, "r").unwrap();
    let got: Vec<(&str, ReviewStatus, u32, u32)> = r
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status, f.added, f.removed))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a.txt", ReviewStatus::Modified, 1, 0),
            ("gone.txt", ReviewStatus::Deleted, 0, 1),
            ("new.rs", ReviewStatus::Added, 1, 0),
        ]
    );
    assert!(r.files[0].diff.contains("+two"), "{}", r.files[0].diff);
    let rows = list(&folder, &state).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].changed_files, rows[0].unapplied_files), (3, 3));
}

#[test]
fn a_worktree_removal_and_the_checkpoints_leave_out_the_same_folders() {
    // Two homes of one list (cairn-worktree does not depend on cairn-vcs): kept in step here.
    assert_eq!(
        cairn_worktree::keep::DEFAULT_EXCLUDES,
        cairn_vcs::DEFAULT_EXCLUDES
    );
}
