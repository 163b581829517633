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

/// A saved chat of `turns` turns in `workspace` (in worktree `worktree`).
fn saved_chat(
    state: &std::path::Path,
    id: &str,
    workspace: &std::path::Path,
    worktree: Option<&str>,
) {
    let now = chrono::Utc::now().to_rfc3339();
    let saved = cairn_runtime::store::SavedSession {
        name: format!("chat {id}"),
        name_source: "user".into(),
        turns: 1,
        worktree: worktree.map(str::to_string),
        ..cairn_runtime::store::SavedSession::new(
            id,
            &workspace.display().to_string(),
            "m",
            "",
            &now,
        )
    };
    cairn_runtime::SessionStore::new(state)
        .save(&saved)
        .unwrap();
}

#[test]
fn a_removed_worktrees_chat_stays_on_its_folders_board_marked_and_continues_in_the_folder() {
    use cairn_runtime::host::board::{board, BoardCache};
    use cairn_runtime::worktrees::{handoff, prepare, remove, HandoffTo};
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("repo");
    cairn_testkit::git::repo_with(&folder, &[("a.txt", "one\n")]);
    let folder = folder.canonicalize().unwrap();
    let other = dir.path().join("other");
    cairn_testkit::git::repo_with(&other, &[("b.txt", "two\n")]);
    let other = other.canonicalize().unwrap();
    let state = dir.path().join("state");
    let kept = prepare(&folder, &state, "kept", false, &|_, _| {}).unwrap();
    let gone = prepare(&folder, &state, "gone", false, &|_, _| {}).unwrap();
    // Another repository's worktree of the same name, removed too: not this folder's.
    let foreign = prepare(&other, &state, "gone", false, &|_, _| {}).unwrap();
    saved_chat(&state, "folder-chat", &folder, None);
    saved_chat(&state, "kept-chat", &kept.workspace, Some("kept"));
    saved_chat(&state, "gone-chat", &gone.workspace, Some("gone"));
    saved_chat(&state, "foreign-chat", &foreign.workspace, Some("gone"));
    remove(&folder, &state, "gone", true, &[]).unwrap();
    remove(&other, &state, "gone", true, &[]).unwrap();
    assert!(!gone.workspace.exists());

    let host = cairn_runtime::host::Host::new();
    let view = board(&host, &state, &BoardCache::default(), &folder, &[], None).unwrap();
    let mut rows: Vec<(&str, Option<&str>, bool)> = view
        .rows
        .iter()
        .map(|r| (r.id.as_str(), r.worktree.as_deref(), r.worktree_removed))
        .collect();
    rows.sort();
    assert_eq!(
        rows,
        vec![
            ("folder-chat", None, false),
            ("gone-chat", Some("gone"), true),
            ("kept-chat", Some("kept"), false),
        ]
    );
    let names: Vec<&str> = view.worktrees.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(
        names,
        ["kept"],
        "a removed worktree has no group of its own"
    );

    // Continued in the folder: a copy with its history, the original kept as it was.
    let refused = handoff(&state, "gone-chat", &HandoffTo::RemovedTo(other.clone())).unwrap_err();
    assert!(refused.is_usage(), "{refused}");
    let refused = handoff(&state, "kept-chat", &HandoffTo::RemovedTo(folder.clone())).unwrap_err();
    assert!(refused.to_string().contains("still exists"), "{refused}");
    let moved = handoff(&state, "gone-chat", &HandoffTo::RemovedTo(folder.clone())).unwrap();
    assert_eq!(moved.workspace, folder.display().to_string());
    assert_eq!((moved.worktree, moved.apply), (None, None));
    let store = cairn_runtime::SessionStore::new(&state);
    let copy = store.load(&moved.session).unwrap();
    assert_eq!(
        (copy.worktree, copy.name.as_str()),
        (None, "chat gone-chat (folder)")
    );
    assert_eq!(
        store.load("gone-chat").unwrap().worktree.as_deref(),
        Some("gone")
    );
    let view = board(&host, &state, &BoardCache::default(), &folder, &[], None).unwrap();
    assert!(view
        .rows
        .iter()
        .any(|r| r.id == moved.session && !r.worktree_removed));
    assert!(view
        .rows
        .iter()
        .any(|r| r.id == "gone-chat" && r.worktree_removed));
}

#[test]
fn applies_from_outside_a_folder_chat_go_to_the_worktrees_own_chat_and_settle_a_conflict() {
    use cairn_runtime::worktrees::{apply, apply_resolving, prepare, ApplyTarget, Resolution};
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("repo");
    cairn_testkit::git::repo_with(&folder, &[("clash.txt", "base\n")]);
    let folder = folder.canonicalize().unwrap();
    let state = dir.path().join("state");
    // A folder chat exists: an apply from outside a folder chat does not pick it.
    saved_chat(&state, "someone-elses", &folder, None);
    let p = prepare(&folder, &state, "w", false, &|_, _| {}).unwrap();
    std::fs::write(p.workspace.join("clash.txt"), "worktree\n").unwrap();
    std::fs::write(p.workspace.join("extra.txt"), "new\n").unwrap();
    std::fs::write(folder.join("clash.txt"), "folder\n").unwrap();

    let first = apply(&folder, &state, "w", false, &ApplyTarget::Own).unwrap();
    let own = first.session.clone().expect("recorded in a chat");
    assert_ne!(own, "someone-elses");
    assert_eq!(
        first.session_name.as_deref(),
        Some("Applied from worktree w")
    );
    assert_eq!(first.checkpoint, Some(1));
    let conflicts: Vec<(&str, bool)> = first
        .conflicts
        .iter()
        .map(|c| (c.path.as_str(), c.resolvable))
        .collect();
    assert_eq!(conflicts, [("clash.txt", true)]);
    assert_eq!(
        std::fs::read_to_string(folder.join("clash.txt")).unwrap(),
        "folder\n"
    );

    // Settled by taking the worktree's version: the same chat's next change-turn.
    let second = apply_resolving(
        &folder,
        &state,
        "w",
        &ApplyTarget::Own,
        &[("clash.txt".to_string(), Resolution::TakeWorktree)],
    )
    .unwrap();
    assert_eq!(second.session.as_deref(), Some(own.as_str()));
    assert_eq!(second.checkpoint, Some(2));
    assert!(second.conflicts.is_empty(), "{:?}", second.conflicts);
    assert_eq!(
        std::fs::read_to_string(folder.join("clash.txt")).unwrap(),
        "worktree\n"
    );
    // Its Undo command brings the folder's version back.
    assert!(second
        .undo
        .unwrap()
        .contains(&format!("--session {own} --to-turn 1")));
}
