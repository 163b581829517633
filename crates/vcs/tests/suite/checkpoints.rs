//! Snapshot, turn records, diff and restore across the kinds of work trees users have. After
//! every scenario the user's `.git` is byte-for-byte what it was.

mod attribution;
use crate::common;

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use cairn_vcs::{RestoreOptions, StepKind, TurnKind, VcsError};
use common::*;

const S: &str = "session-1";

fn restore_to(n: u32) -> RestoreOptions {
    RestoreOptions {
        to_turn: n,
        ..RestoreOptions::default()
    }
}

/// Every kind of change in one shell-made turn, undone and redone.
fn every_kind_of_change(ws: &Path, state_dir: &Path) {
    write(ws, "keep.txt", "unchanged\n");
    write(ws, "edit.txt", "one\ntwo\nthree\n");
    write(ws, "gone.txt", "delete me\n");
    write(
        ws,
        "old_name.txt",
        "renamed content that is long enough to be detected\n",
    );
    write(ws, "script.sh", "echo hi\n");
    fs::create_dir_all(ws.join("was_empty")).unwrap();
    write(ws, "link_target.txt", "target\n");
    let mut vcs = open(state_dir, ws, false);
    let before = state(ws);
    let rec = turn(&mut vcs, S, 1, "change everything\nsecond line", || {
        write(ws, "edit.txt", "one\nTWO\nthree\n");
        fs::remove_file(ws.join("gone.txt")).unwrap();
        fs::rename(ws.join("old_name.txt"), ws.join("new_name.txt")).unwrap();
        write_bytes(ws, "blob.bin", &[0u8, 159, 146, 150, 0, 255, 1, 2]);
        fs::set_permissions(ws.join("script.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        symlink("link_target.txt", ws.join("link")).unwrap();
        fs::create_dir_all(ws.join("new_empty/inner")).unwrap();
        fs::remove_dir(ws.join("was_empty")).unwrap();
    })
    .expect("a change-turn");
    let after = state(ws);
    assert_eq!(rec.turn, 1);
    assert_eq!(rec.session_turn, 1);
    assert_eq!(rec.summary, "change everything");
    assert_eq!(rec.kind, TurnKind::Agent);
    for f in [
        "edit.txt",
        "gone.txt",
        "old_name.txt",
        "new_name.txt",
        "blob.bin",
        "script.sh",
        "link",
        "new_empty/inner/",
        "was_empty/",
    ] {
        assert!(rec.files.contains(&f.to_string()), "{f} in {:?}", rec.files);
    }
    assert!(!rec.files.contains(&"keep.txt".to_string()));
    let diff = vcs.diff_turn(S, 1).unwrap();
    assert!(diff.contains("-two\n+TWO\n"), "{diff}");
    assert!(diff.contains("rename from old_name.txt"), "{diff}");
    assert!(diff.contains("Binary files"), "{diff}");
    assert!(diff.contains("old mode 100644\nnew mode 100755"), "{diff}");

    let report = vcs.restore(S, 1, &restore_to(0)).unwrap();
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(report.turn, Some(2));
    assert!(report.deleted.contains(&"blob.bin".to_string()));
    assert!(report.overwritten.contains(&"edit.txt".to_string()));
    assert_eq!(state(ws), before, "restore to 0 brings back the start");

    let turns = vcs.turns(S).unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].kind, TurnKind::Restore);
    let redo = vcs.restore(S, 1, &restore_to(1)).unwrap();
    assert!(redo.conflicts.is_empty(), "{redo:?}");
    assert_eq!(state(ws), after, "restoring to turn 1 redoes it");
}

#[test]
fn every_kind_of_change_in_a_git_repo_leaves_dot_git_alone() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    user_repo(ws.path());
    let head = git(ws.path(), &["rev-parse", "HEAD"]);
    let git_before = digest(&ws.path().join(".git"));
    every_kind_of_change(ws.path(), st.path());
    assert_eq!(digest(&ws.path().join(".git")), git_before);
    assert_eq!(git(ws.path(), &["rev-parse", "HEAD"]), head);
    assert_eq!(git(ws.path(), &["stash", "list"]).lines().count(), 1);
}

#[test]
fn every_kind_of_change_in_a_non_git_folder() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    every_kind_of_change(ws.path(), st.path());
    assert!(!ws.path().join(".git").exists(), "no .git is ever created");
}

#[test]
fn unborn_repository() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    git(ws.path(), &["init", "-q"]);
    let git_before = digest(&ws.path().join(".git"));
    every_kind_of_change(ws.path(), st.path());
    assert_eq!(digest(&ws.path().join(".git")), git_before);
}

#[test]
fn nested_repository_and_submodule_are_plain_files() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let upstream = tempfile::tempdir().unwrap();
    user_repo(ws.path());
    // A nested repository (not a submodule).
    let nested = ws.path().join("vendor/nested");
    fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    write(&nested, "lib.rs", "pub fn nested() {}\n");
    git(&nested, &["add", "-A"]);
    git(&nested, &["commit", "-q", "-m", "nested"]);
    // A submodule.
    git(upstream.path(), &["init", "-q"]);
    write(upstream.path(), "sub.txt", "submodule file\n");
    git(upstream.path(), &["add", "-A"]);
    git(upstream.path(), &["commit", "-q", "-m", "sub"]);
    let url = upstream.path().display().to_string();
    git(ws.path(), &["submodule", "add", "-q", &url, "modules/sub"]);
    git(ws.path(), &["commit", "-q", "-m", "add submodule"]);
    let digests = [
        digest(&ws.path().join(".git")),
        digest(&nested.join(".git")),
        digest(&ws.path().join("modules/sub/.git")),
    ];
    let mut vcs = open(st.path(), ws.path(), false);
    let before = state(ws.path());
    let rec = turn(&mut vcs, S, 1, "edit inside nested repos", || {
        write(&nested, "lib.rs", "pub fn nested() { changed() }\n");
        write(
            ws.path(),
            "modules/sub/sub.txt",
            "edited in the submodule\n",
        );
        write(
            ws.path(),
            "modules/sub/new.txt",
            "new file in the submodule\n",
        );
    })
    .unwrap();
    assert!(
        rec.files.contains(&"vendor/nested/lib.rs".to_string()),
        "{:?}",
        rec.files
    );
    assert!(rec.files.contains(&"modules/sub/sub.txt".to_string()));
    assert!(
        rec.files
            .iter()
            .all(|f| !f.contains(".git/") && !f.ends_with(".git")),
        "{:?}",
        rec.files
    );
    vcs.restore(S, 1, &restore_to(0)).unwrap();
    assert_eq!(state(ws.path()), before);
    assert_eq!(
        digests,
        [
            digest(&ws.path().join(".git")),
            digest(&nested.join(".git")),
            digest(&ws.path().join("modules/sub/.git")),
        ]
    );
}

#[test]
fn workspace_in_a_subfolder_of_a_repo_uses_the_parent_ignores() {
    let repo = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    user_repo(repo.path());
    let ws = repo.path().join("pkg");
    write(&ws, "a.txt", "a\n");
    let git_before = digest(&repo.path().join(".git"));
    let mut vcs = open(st.path(), &ws, false);
    let rec = turn(&mut vcs, S, 1, "work in pkg", || {
        write(&ws, "a.txt", "changed\n");
        write(&ws, "debug.log", "ignored by the repo root's .gitignore\n");
    })
    .unwrap();
    assert_eq!(rec.files, vec!["a.txt".to_string()]);
    vcs.restore(S, 1, &restore_to(0)).unwrap();
    assert_eq!(read(&ws, "a.txt"), "a\n");
    assert!(
        ws.join("debug.log").exists(),
        "ignored files are never deleted"
    );
    assert_eq!(digest(&repo.path().join(".git")), git_before);
    assert!(!ws.join(".git").exists());
}

#[test]
fn ignored_and_excluded_files_created_after_a_snapshot_survive_a_restore() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    user_repo(ws.path());
    let git_before = digest(&ws.path().join(".git"));
    let mut vcs = open(st.path(), ws.path(), false);
    turn(&mut vcs, S, 1, "make output", || {
        write(ws.path(), "out/result.txt", "agent output\n");
        write(ws.path(), "out/run.log", "agent log (ignored)\n");
    })
    .unwrap();
    // The user's own ignored and excluded files, made after the snapshot.
    write(ws.path(), "server.log", "user log\n");
    write(ws.path(), "node_modules/dep/index.js", "module\n");
    write(ws.path(), "target/debug/app", "binary\n");
    let report = vcs.restore(S, 1, &restore_to(0)).unwrap();
    assert_eq!(report.deleted, vec!["out/result.txt".to_string()]);
    assert!(!ws.path().join("out/result.txt").exists());
    assert_eq!(read(ws.path(), "out/run.log"), "agent log (ignored)\n");
    assert_eq!(read(ws.path(), "server.log"), "user log\n");
    assert!(ws.path().join("node_modules/dep/index.js").exists());
    assert!(ws.path().join("target/debug/app").exists());
    assert_eq!(digest(&ws.path().join(".git")), git_before);
}

#[test]
fn a_user_edit_after_a_turn_is_a_conflict_and_is_kept() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    user_repo(ws.path());
    let git_before = digest(&ws.path().join(".git"));
    write(ws.path(), "a.txt", "original\n");
    let mut vcs = open(st.path(), ws.path(), false);
    turn(&mut vcs, S, 1, "edit a, add b", || {
        write(ws.path(), "a.txt", "agent\n");
        write(ws.path(), "b.txt", "agent file\n");
    })
    .unwrap();
    write(ws.path(), "a.txt", "user's own work\n");

    let dry = vcs
        .restore(
            S,
            1,
            &RestoreOptions {
                dry_run: true,
                ..restore_to(0)
            },
        )
        .unwrap();
    assert!(dry.dry_run);
    assert_eq!(dry.deleted, vec!["b.txt".to_string()]);
    assert_eq!(dry.conflicts.len(), 1);
    assert!(
        ws.path().join("b.txt").exists(),
        "a dry run changes nothing"
    );
    assert_eq!(vcs.turns(S).unwrap().len(), 1, "a dry run records nothing");

    let report = vcs.restore(S, 1, &restore_to(0)).unwrap();
    assert_eq!(report.conflicts.len(), 1, "{report:?}");
    assert_eq!(report.conflicts[0].path, "a.txt");
    assert_eq!(read(ws.path(), "a.txt"), "user's own work\n");
    assert!(!ws.path().join("b.txt").exists());

    // Forced, the user's edit is overwritten, and still recoverable: undo the forced restore.
    let forced = vcs
        .restore(
            S,
            1,
            &RestoreOptions {
                force: true,
                ..restore_to(0)
            },
        )
        .unwrap();
    assert_eq!(forced.overwritten, vec!["a.txt".to_string()]);
    assert_eq!(read(ws.path(), "a.txt"), "original\n");
    let undo_to = forced.turn.unwrap() - 1;
    vcs.restore(S, 1, &restore_to(undo_to)).unwrap();
    assert_eq!(read(ws.path(), "a.txt"), "user's own work\n");
    assert_eq!(digest(&ws.path().join(".git")), git_before);
}

#[test]
fn restore_of_chosen_paths_only_and_missing_paths() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut vcs = open(st.path(), ws.path(), false);
    write(ws.path(), "src/a.txt", "a0\n");
    write(ws.path(), "b.txt", "b0\n");
    turn(&mut vcs, S, 1, "edit both", || {
        write(ws.path(), "src/a.txt", "a1\n");
        write(ws.path(), "b.txt", "b1\n");
    })
    .unwrap();
    let report = vcs
        .restore(
            S,
            2,
            &RestoreOptions {
                paths: vec!["src/".into(), "nope.txt".into()],
                ..restore_to(0)
            },
        )
        .unwrap();
    assert_eq!(report.restored, vec!["src/a.txt".to_string()]);
    assert_eq!(report.missing, vec!["nope.txt".to_string()]);
    assert_eq!(read(ws.path(), "src/a.txt"), "a0\n");
    assert_eq!(read(ws.path(), "b.txt"), "b1\n");
    // Paths are normalised; one that leaves the workspace is a clear error.
    let dry = |p: &str| RestoreOptions {
        paths: vec![p.into()],
        dry_run: true,
        ..restore_to(0)
    };
    let odd = vcs.restore(S, 2, &dry("./src//a.txt")).unwrap();
    assert!(odd.missing.is_empty(), "{odd:?}");
    for bad in ["../etc", "src/../../x", "/etc/passwd"] {
        assert!(
            matches!(vcs.restore(S, 2, &dry(bad)), Err(VcsError::PathOutside(_))),
            "{bad}"
        );
    }
    let history = vcs.file_history(S, "src/a.txt").unwrap();
    assert_eq!(
        history.iter().map(|t| t.turn).collect::<Vec<_>>(),
        vec![1, 2]
    );
    let between = vcs.diff_checkpoints(S, 0, 2, &[]).unwrap();
    assert!(
        between.contains("b.txt") && !between.contains("src/a.txt"),
        "{between}"
    );
}

#[test]
fn turns_without_changes_take_no_number() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut vcs = open(st.path(), ws.path(), false);
    assert!(turn(&mut vcs, S, 1, "look around", || {}).is_none());
    assert!(vcs.end_turn(S, 2, "no tools at all").unwrap().is_none());
    let rec = turn(&mut vcs, S, 3, "write", || write(ws.path(), "x.txt", "x\n")).unwrap();
    assert_eq!((rec.turn, rec.session_turn), (1, 3));
    assert!(matches!(
        vcs.restore(S, 3, &restore_to(5)),
        Err(VcsError::NoSuchTurn {
            turn: 5,
            first: 0,
            count: 1
        })
    ));
    let e = vcs.diff_turn(S, 0).unwrap_err().to_string();
    assert!(e.contains("valid: 1..=1"), "a diff has no turn 0: {e}");
    assert!(matches!(
        vcs.restore("other", 1, &restore_to(0)),
        Err(VcsError::NoCheckpoints(_))
    ));
    assert!(matches!(
        vcs.turns("../escape"),
        Err(VcsError::InvalidSession(_))
    ));
}

/// A turn whose process was killed is recorded when the next one starts, up to its last
/// snapshot (taken before its last side effect). What the killed step and the user changed
/// after that counts as changed outside the agent's turns: a restore keeps it.
#[test]
fn an_interrupted_turn_is_recorded_when_the_next_one_starts() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    {
        let mut vcs = open(st.path(), ws.path(), false);
        vcs.begin_step(S, 1, "write_file", "c1", StepKind::File)
            .unwrap();
        write(ws.path(), "done.txt", "written by a finished step\n");
        vcs.end_step(S, 1, "c1", &["done.txt".to_string()]).unwrap();
        vcs.begin_step(S, 1, "run_shell", "c2", StepKind::Command)
            .unwrap();
        write(ws.path(), "half.txt", "written before the crash\n");
        // The process dies here: no end_turn.
    }
    // The user works on while nothing runs.
    write(ws.path(), "mine.txt", "the user's\n");
    let mut vcs = open(st.path(), ws.path(), false);
    turn(&mut vcs, S, 2, "next", || {
        write(ws.path(), "next.txt", "n\n")
    })
    .unwrap();
    let turns = vcs.turns(S).unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0].summary, "(interrupted turn)");
    assert_eq!(turns[0].files, vec!["done.txt".to_string()]);
    assert_eq!(turns[1].files, vec!["next.txt".to_string()]);

    let report = vcs.restore(S, 3, &restore_to(0)).unwrap();
    assert!(!ws.path().join("done.txt").exists());
    assert!(!ws.path().join("next.txt").exists());
    let mut kept: Vec<_> = report.conflicts.iter().map(|c| c.path.as_str()).collect();
    kept.sort();
    assert_eq!(kept, vec!["half.txt", "mine.txt"], "{report:?}");
    assert_eq!(read(ws.path(), "mine.txt"), "the user's\n");
}

#[test]
fn size_caps_exclude_and_report_untracked_files() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    user_repo(ws.path());
    let cfg = cairn_vcs::VcsConfig {
        watch: false,
        max_untracked_file_bytes: 100,
        max_untracked_dir_files: 5,
        ..cairn_vcs::VcsConfig::default()
    };
    let mut vcs = cairn_vcs::Vcs::open(st.path(), ws.path(), cfg).unwrap();
    write(ws.path(), "big.dat", &"x".repeat(500));
    for i in 0..10 {
        write(ws.path(), &format!("dataset/f{i}.txt"), "row\n");
    }
    write(ws.path(), "small.txt", "ok\n");
    let snap = vcs.snapshot().unwrap();
    let paths: Vec<_> = snap.excluded.iter().map(|e| e.path.as_str()).collect();
    assert!(paths.contains(&"big.dat"), "{:?}", snap.excluded);
    assert!(paths.contains(&"dataset"), "{:?}", snap.excluded);
    let rec = turn(&mut vcs, S, 1, "edit", || {
        write(ws.path(), "small.txt", "changed\n");
        write(ws.path(), "dataset/f0.txt", "changed\n");
    })
    .unwrap();
    assert_eq!(rec.files, vec!["small.txt".to_string()]);
    assert!(rec.excluded.iter().any(|e| e.path == "big.dat"));
    vcs.restore(S, 1, &restore_to(0)).unwrap();
    assert_eq!(
        read(ws.path(), "dataset/f0.txt"),
        "changed\n",
        "excluded files are never touched"
    );
    assert!(ws.path().join("big.dat").exists());
}

/// A file too large for the checkpoint that the agent shrank (or a folder too big that it
/// thinned) is absent from that checkpoint only because it could not be held: a restore must
/// not delete it, even with --force, and says why it kept it.
#[test]
fn a_restore_never_deletes_what_its_checkpoint_could_not_hold() {
    for git in [true, false] {
        let ws = tempfile::tempdir().unwrap();
        let st = tempfile::tempdir().unwrap();
        if git {
            user_repo(ws.path());
        }
        let cfg = cairn_vcs::VcsConfig {
            watch: false,
            max_untracked_file_bytes: 100,
            ..cairn_vcs::VcsConfig::default()
        };
        let mut vcs = cairn_vcs::Vcs::open(st.path(), ws.path(), cfg).unwrap();
        write(ws.path(), "data.bin", &"x".repeat(500));
        write(ws.path(), "notes.txt", "one\n");
        let rec = turn(&mut vcs, S, 1, "shrink", || {
            write(ws.path(), "data.bin", "tiny");
            write(ws.path(), "notes.txt", "two\n");
        })
        .unwrap();
        assert!(rec.excluded_before.iter().any(|e| e.path == "data.bin"));
        let turn2 = turn(&mut vcs, S, 2, "more", || {
            write(ws.path(), "notes.txt", "three\n");
        })
        .unwrap();
        assert!(turn2.excluded.is_empty(), "{:?}", turn2.excluded);

        for force in [false, true] {
            let opts = cairn_vcs::RestoreOptions {
                force,
                ..restore_to(0)
            };
            let report = vcs.restore(S, 3, &opts).unwrap();
            assert_eq!(
                read(ws.path(), "data.bin"),
                "tiny",
                "git={git} force={force}"
            );
            assert!(report.deleted.is_empty(), "{report:?}");
            let kept = report
                .conflicts
                .iter()
                .find(|c| c.path == "data.bin")
                .unwrap_or_else(|| panic!("{report:?}"));
            assert!(
                kept.reason
                    .contains("not covered by that checkpoint (untracked file of 500 bytes"),
                "{}",
                kept.reason
            );
            assert_eq!(read(ws.path(), "notes.txt"), "one\n");
        }
        // To turn 1, where it was covered (small), it is restored as usual.
        write(ws.path(), "data.bin", "changed by the user");
        let report = vcs.restore(S, 4, &{
            let mut o = restore_to(1);
            o.force = true;
            o
        });
        report.unwrap();
        assert_eq!(read(ws.path(), "data.bin"), "tiny");
    }
}

/// A forced restore overwrites the user's own edits made after the last turn; undoing it
/// (restoring to the change-turn before it) brings those edits back exactly, and a later
/// restore across them still treats them as the user's.
#[test]
fn undoing_a_forced_restore_brings_back_the_users_edits() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    user_repo(ws.path());
    let mut vcs = open(st.path(), ws.path(), false);
    turn(&mut vcs, S, 1, "one", || {
        write(ws.path(), "a.txt", "agent 1\n")
    })
    .unwrap();
    turn(&mut vcs, S, 2, "two", || {
        write(ws.path(), "a.txt", "agent 2\n")
    })
    .unwrap();
    write(ws.path(), "a.txt", "agent 2\nuser line\n");
    write(ws.path(), "notes.txt", "the user's notes\n");
    let edited = state(ws.path());

    let report = vcs
        .restore(
            S,
            3,
            &RestoreOptions {
                force: true,
                ..restore_to(0)
            },
        )
        .unwrap();
    assert!(!ws.path().join("notes.txt").exists());
    assert!(!ws.path().join("a.txt").exists());
    let restore_turn = report.turn.unwrap();
    let turns = vcs.turns(S).unwrap();
    let user = &turns[restore_turn as usize - 2];
    assert_eq!(user.kind, cairn_vcs::TurnKind::User);
    assert_eq!(
        user.files,
        vec!["a.txt".to_string(), "notes.txt".to_string()]
    );

    // Undo: restore to the change-turn before the restore.
    let undo = vcs.restore(S, 3, &restore_to(restore_turn - 1)).unwrap();
    assert!(undo.conflicts.is_empty(), "{undo:?}");
    assert_eq!(state(ws.path()), edited, "the user's edits are back");

    // Going back to turn 1 without --force keeps what the user wrote.
    let back = vcs.restore(S, 3, &restore_to(1)).unwrap();
    let kept: Vec<_> = back.conflicts.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(kept, vec!["a.txt", "notes.txt"], "{back:?}");
    assert_eq!(state(ws.path()), edited);
}

#[test]
fn forget_and_gc_keep_the_store_consistent() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut vcs = open(st.path(), ws.path(), false);
    write(ws.path(), "a.txt", "a\n");
    turn(&mut vcs, "s1", 1, "one", || {
        write(ws.path(), "a.txt", "1\n")
    })
    .unwrap();
    // Another file: s2's turn starts within the millisecond s1's command window closed, and
    // a change to a path that window changed is then (rightly) uncertain, not s2's own.
    turn(&mut vcs, "s2", 1, "two", || {
        write(ws.path(), "b.txt", "2\n")
    })
    .unwrap();
    let usage = vcs.usage().unwrap();
    assert_eq!(usage.sessions, 2);
    assert!(usage.bytes > 0 && !usage.over_budget);
    vcs.forget("s1").unwrap();
    assert!(vcs.turns("s1").unwrap().is_empty());
    let report = vcs.gc().unwrap();
    assert!(report.dropped_sessions.is_empty());
    assert_eq!(report.pruned_objects, 0, "young objects are never pruned");
    let back = vcs.restore("s2", 1, &restore_to(0)).unwrap();
    assert!(back.conflicts.is_empty(), "{back:?}");
    assert!(!ws.path().join("b.txt").exists());
    assert_eq!(read(ws.path(), "a.txt"), "1\n", "s1's work stays");
    vcs.restore("s2", 2, &restore_to(1)).unwrap();
    assert_eq!(read(ws.path(), "b.txt"), "2\n");
}

#[test]
fn a_tracked_folder_with_an_excluded_name_is_covered() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    user_repo(ws.path());
    write(ws.path(), "build/release.sh", "echo release\n");
    git(ws.path(), &["add", "-A"]);
    git(ws.path(), &["commit", "-q", "-m", "build script"]);
    let mut vcs = open(st.path(), ws.path(), false);
    let rec = turn(&mut vcs, S, 1, "edit the build script", || {
        write(ws.path(), "build/release.sh", "echo changed\n");
        write(ws.path(), "dist/bundle.js", "generated\n");
        write(ws.path(), "node_modules/m/index.js", "dependency\n");
    })
    .unwrap();
    assert_eq!(rec.files, vec!["build/release.sh".to_string()]);
    vcs.restore(S, 1, &restore_to(0)).unwrap();
    assert_eq!(read(ws.path(), "build/release.sh"), "echo release\n");
    assert!(ws.path().join("dist/bundle.js").exists());
}

/// A path that turned from an empty folder into a file: restoring and undoing the restore
/// each leave exactly the state they name, with nothing taken for the user's change.
#[test]
fn an_empty_folder_turned_file_restores_and_undoes_exactly() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("e")).unwrap();
    write(ws.path(), "keep", "k\n");
    let before = state(ws.path());
    {
        let mut vcs = open(st.path(), ws.path(), false);
        turn(&mut vcs, S, 1, "swap", || {
            std::fs::remove_dir(ws.path().join("e")).unwrap();
            write(ws.path(), "e", "");
        })
        .unwrap();
    }
    let after = state(ws.path());
    // Each command in its own process, as the CLI runs them.
    let report = open(st.path(), ws.path(), false)
        .restore(S, 1, &restore_to(0))
        .unwrap();
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(state(ws.path()), before);
    let undo = open(st.path(), ws.path(), false)
        .restore(S, 1, &restore_to(report.turn.unwrap() - 1))
        .unwrap();
    assert!(undo.conflicts.is_empty(), "{undo:?}");
    assert_eq!(state(ws.path()), after);
}

/// A folder the agent moved away and replaced with a link to its new place comes back in
/// one restore: the link is removed before the folder is written (not written through it).
#[test]
fn a_folder_replaced_by_a_link_comes_back_in_one_restore() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    write(ws.path(), "d/f", "f\n");
    let before = state(ws.path());
    let mut vcs = open(st.path(), ws.path(), false);
    turn(&mut vcs, S, 1, "move", || {
        std::fs::rename(ws.path().join("d"), ws.path().join("moved")).unwrap();
        symlink("moved", ws.path().join("d")).unwrap();
    })
    .unwrap();
    let report = vcs.restore(S, 1, &restore_to(0)).unwrap();
    assert!(report.conflicts.is_empty(), "{report:?}");
    assert_eq!(state(ws.path()), before);
    // And a link pointing outside that stays is still never written through.
    let outside = tempfile::tempdir().unwrap();
    let mut vcs = open(st.path(), ws.path(), false);
    let out = turn(&mut vcs, S, 2, "out", || {
        write(ws.path(), "o/x", "x\n");
    })
    .unwrap()
    .turn;
    std::fs::remove_dir_all(ws.path().join("o")).unwrap();
    symlink(outside.path(), ws.path().join("o")).unwrap();
    let report = vcs.restore(S, 2, &restore_to(out)).unwrap();
    assert!(
        report.conflicts.iter().any(|c| c.path.starts_with('o')),
        "{report:?}"
    );
    assert!(!outside.path().join("x").exists());
    // Forced, the link is replaced by the folder: still nothing written outside.
    let forced = RestoreOptions {
        force: true,
        ..restore_to(out)
    };
    vcs.restore(S, 2, &forced).unwrap();
    assert!(!outside.path().join("x").exists());
    assert!(!ws.path().join("o").is_symlink());
    assert_eq!(read(ws.path(), "o/x"), "x\n");
}

#[test]
fn listings_carry_line_counts_kinds_and_restore_targets() {
    use cairn_vcs::FileStatus;
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut vcs = open(st.path(), ws.path(), false);
    assert!(vcs.listing(S, true).unwrap().is_empty());
    assert!(vcs.changes_since_start(S).unwrap().is_empty());
    write(ws.path(), "a.txt", "old\nsame\n");
    write(ws.path(), "gone.txt", "x\n");
    turn(&mut vcs, S, 1, "edit", || {
        write(ws.path(), "a.txt", "new\nmore\nsame\n");
        fs::remove_file(ws.path().join("gone.txt")).unwrap();
        write(ws.path(), "dir/b.rs", "fn main() {}\n");
        fs::create_dir_all(ws.path().join("empty")).unwrap();
    })
    .unwrap();
    vcs.restore(S, 2, &restore_to(0)).unwrap();
    let list = vcs.listing(S, true).unwrap();
    assert_eq!(list.len(), 2);
    let stat = |i: usize, p: &str| {
        let f = list[i].files.iter().find(|f| f.path == p);
        f.map(|f| (f.status, f.added, f.removed))
            .unwrap_or_else(|| panic!("{p} in {:?}", list[i].files))
    };
    assert_eq!(stat(0, "a.txt"), (FileStatus::Modified, 2, 1));
    assert_eq!(stat(0, "gone.txt"), (FileStatus::Deleted, 0, 1));
    assert_eq!(stat(0, "dir/b.rs"), (FileStatus::Added, 1, 0));
    // A folder is named by the record but shows in no diff.
    assert_eq!(stat(0, "empty/"), (FileStatus::Unknown, 0, 0));
    assert_eq!(list[0].restored_to, None);
    assert_eq!(list[1].record.kind, TurnKind::Restore);
    assert_eq!(list[1].restored_to, Some(0));
    assert_eq!(stat(1, "a.txt"), (FileStatus::Modified, 1, 2));
    // The same diff text `cairn diff` prints, counted.
    let text = vcs.diff_turn(S, 1).unwrap();
    let plus = text
        .lines()
        .filter(|l| l.starts_with('+') && !l.starts_with("+++"));
    let added: u32 = list[0].files.iter().map(|f| f.added).sum();
    assert_eq!(plus.count() as u32, added);
    // Without line stats: the recorded paths only.
    let plain = vcs.listing(S, false).unwrap();
    assert!(plain[0]
        .files
        .iter()
        .all(|f| f.status == FileStatus::Unknown && f.added == 0));
    assert_eq!(plain[0].files.len(), list[0].record.files.len());
    // Restored to the start: nothing differs from it.
    assert!(vcs.changes_since_start(S).unwrap().is_empty());
}

/// A sandboxed command's empty read-only placeholders for missing protected folders
/// (`.claude`, `.agents`, …, made on the host by bubblewrap while it runs) are not changes;
/// an empty folder of the user's is.
#[test]
fn empty_protected_folders_at_the_root_are_sandbox_mount_points_not_changes() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let ws = ws.path();
    write(ws, "a.txt", "a\n");
    let mut vcs = open(st.path(), ws, false);
    let rec = turn(&mut vcs, S, 1, "run a command", || {
        for f in [".claude", ".agents", ".agent", ".cairn"] {
            fs::create_dir_all(ws.join(f)).unwrap();
        }
        fs::create_dir_all(ws.join("docs")).unwrap();
        write(ws, "a.txt", "b\n");
    })
    .expect("a change-turn");
    assert!(rec.files.contains(&"docs/".to_string()), "{:?}", rec.files);
    assert!(rec.files.contains(&"a.txt".to_string()), "{:?}", rec.files);
    for f in [".claude/", ".agents/", ".agent/", ".cairn/"] {
        assert!(
            !rec.files.contains(&f.to_string()),
            "{f} in {:?}",
            rec.files
        );
    }
}
