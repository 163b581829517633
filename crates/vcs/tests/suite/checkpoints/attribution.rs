//! Whose change is whose: a turn claims only what its own file tools and command windows
//! changed; other sessions' and the user's changes are kept by a restore and reported.

use std::path::Path;

use cairn_vcs::{Cause, RestoreOptions, StepKind, Vcs};

use super::common::*;

const A: &str = "session-a";
const B: &str = "session-b";

fn restore(vcs: &mut Vcs, session: &str, force: bool) -> cairn_vcs::RestoreReport {
    vcs.restore(
        session,
        9,
        &RestoreOptions {
            to_turn: 0,
            force,
            ..RestoreOptions::default()
        },
    )
    .unwrap()
}

/// A file tool call of `session`: snapshot, write, report the written path.
fn file_tool(vcs: &mut Vcs, session: &str, turn: u32, ws: &Path, path: &str) {
    let call = format!("w-{path}");
    vcs.begin_step(session, turn, "write_file", &call, StepKind::File)
        .unwrap();
    write(ws, path, "by a file tool\n");
    vcs.end_step(session, turn, &call, &[path.to_string()])
        .unwrap();
}

fn cause_of<'a>(t: &'a cairn_vcs::TurnRecord, path: &str) -> Option<&'a Cause> {
    t.others.iter().find(|f| f.path == path).map(|f| &f.cause)
}

fn conflict<'a>(r: &'a cairn_vcs::RestoreReport, path: &str) -> Option<&'a str> {
    r.conflicts
        .iter()
        .find(|c| c.path == path)
        .map(|c| c.reason.as_str())
}

#[test]
fn own_file_tool_and_exclusive_command_paths_are_the_turns_the_users_are_not() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    write(ws.path(), "notes.md", "the user's notes\n");
    let mut a = open(st.path(), ws.path(), false);
    file_tool(&mut a, A, 1, ws.path(), "tool.txt");
    // The user works while no command runs.
    write(ws.path(), "notes.md", "edited by the user\n");
    write(ws.path(), "user-new.md", "new\n");
    a.begin_step(A, 1, "run_shell", "c1", StepKind::Command)
        .unwrap();
    write(ws.path(), "shell.txt", "by a command\n");
    a.end_step(A, 1, "c1", &[]).unwrap();
    let t = a.end_turn(A, 1, "work").unwrap().unwrap();
    assert_eq!(t.files, vec!["shell.txt", "tool.txt"]);
    assert_eq!(cause_of(&t, "notes.md"), Some(&Cause::Outside));
    assert_eq!(cause_of(&t, "user-new.md"), Some(&Cause::Outside));
    assert!(a.diff_turn(A, 1).unwrap().contains("tool.txt"));
    assert!(!a.diff_turn(A, 1).unwrap().contains("notes.md"));

    let r = restore(&mut a, A, false);
    assert!(!ws.path().join("tool.txt").exists());
    assert!(!ws.path().join("shell.txt").exists());
    assert_eq!(read(ws.path(), "notes.md"), "edited by the user\n");
    assert!(ws.path().join("user-new.md").exists());
    assert!(conflict(&r, "notes.md").is_some_and(|c| c.contains("outside the agent's commands")));
    assert!(conflict(&r, "user-new.md").is_some(), "{r:?}");
}

#[test]
fn overlapping_commands_of_two_sessions_are_uncertain() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut a = open(st.path(), ws.path(), false);
    let mut b = open(st.path(), ws.path(), false);
    a.begin_step(A, 1, "run_shell", "a1", StepKind::Command)
        .unwrap();
    b.begin_step(B, 1, "run_shell", "b1", StepKind::Command)
        .unwrap();
    write(ws.path(), "a.txt", "a\n");
    write(ws.path(), "b.txt", "b\n");
    a.end_step(A, 1, "a1", &[]).unwrap();
    b.end_step(B, 1, "b1", &[]).unwrap();
    let ta = a.end_turn(A, 1, "a").unwrap().unwrap();
    let tb = b.end_turn(B, 1, "b").unwrap().unwrap();
    let uncertain_b = Cause::Uncertain {
        sessions: vec![B.to_string()],
    };
    assert!(ta.files.is_empty(), "{ta:?}");
    assert_eq!(cause_of(&ta, "a.txt"), Some(&uncertain_b));
    assert_eq!(cause_of(&ta, "b.txt"), Some(&uncertain_b));
    assert!(tb.files.is_empty(), "{tb:?}");

    // Kept and reported; --force may overwrite uncertain paths.
    let r = restore(&mut a, A, false);
    assert!(ws.path().join("a.txt").exists() && ws.path().join("b.txt").exists());
    assert!(conflict(&r, "a.txt").is_some_and(|c| c.contains("uncertain") && c.contains(B)));
    restore(&mut a, A, true);
    assert!(!ws.path().join("a.txt").exists());
}

#[test]
fn another_sessions_writes_are_never_claimed_nor_forced() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut a = open(st.path(), ws.path(), false);
    let mut b = open(st.path(), ws.path(), false);
    file_tool(&mut a, A, 1, ws.path(), "a.txt");
    // During A's turn: B's file tool, and B's command while A runs none.
    file_tool(&mut b, B, 1, ws.path(), "b-tool.txt");
    b.begin_step(B, 1, "run_shell", "b2", StepKind::Command)
        .unwrap();
    write(ws.path(), "b-shell.txt", "b\n");
    b.end_step(B, 1, "b2", &[]).unwrap();
    // A's own command, after B's ended: exclusive.
    a.begin_step(A, 1, "run_shell", "a2", StepKind::Command)
        .unwrap();
    write(ws.path(), "a-shell.txt", "a\n");
    a.end_step(A, 1, "a2", &[]).unwrap();
    let ta = a.end_turn(A, 1, "a").unwrap().unwrap();
    b.end_turn(B, 1, "b").unwrap().unwrap();
    let by_b = Cause::Session {
        sessions: vec![B.to_string()],
    };
    assert_eq!(ta.files, vec!["a-shell.txt", "a.txt"]);
    assert_eq!(cause_of(&ta, "b-tool.txt"), Some(&by_b));
    assert_eq!(cause_of(&ta, "b-shell.txt"), Some(&by_b));

    let r = restore(&mut a, A, true);
    assert!(!ws.path().join("a.txt").exists());
    assert!(!ws.path().join("a-shell.txt").exists());
    assert!(
        ws.path().join("b-tool.txt").exists(),
        "--force deleted B's file"
    );
    assert!(
        ws.path().join("b-shell.txt").exists(),
        "--force deleted B's file"
    );
    assert!(conflict(&r, "b-tool.txt").is_some_and(|c| c.contains("another session (session-b)")));
}

/// B writes after A's last turn ended: the gap's changes are B's too (from the registry).
#[test]
fn another_sessions_writes_after_the_turn_are_kept_by_a_forced_restore() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut a = open(st.path(), ws.path(), false);
    let mut b = open(st.path(), ws.path(), false);
    file_tool(&mut a, A, 1, ws.path(), "a.txt");
    a.end_turn(A, 1, "a").unwrap().unwrap();
    file_tool(&mut b, B, 1, ws.path(), "b.txt");
    b.end_turn(B, 1, "b").unwrap().unwrap();
    let r = restore(&mut a, A, true);
    assert!(!ws.path().join("a.txt").exists());
    assert!(ws.path().join("b.txt").exists(), "{r:?}");
    assert!(conflict(&r, "b.txt").is_some_and(|c| c.contains("session-b")));
}

#[test]
fn a_dead_processs_window_is_closed_at_its_last_heartbeat() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut a = open(st.path(), ws.path(), false);
    // A command window left open by a process that died a minute ago.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let dir = a.store_dir().join("windows");
    std::fs::create_dir_all(&dir).unwrap();
    let opened = chrono::Utc::now().timestamp_millis() - 60_000;
    let file = dir.join("session-dead.1.1.0.json");
    std::fs::write(
        &file,
        serde_json::json!({
            "session": "session-dead", "pid": dead, "kind": "command", "openedMs": opened,
        })
        .to_string(),
    )
    .unwrap();
    let long_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(long_ago)
        .unwrap();
    a.begin_step(A, 1, "run_shell", "c1", StepKind::Command)
        .unwrap();
    write(ws.path(), "mine.txt", "m\n");
    a.end_step(A, 1, "c1", &[]).unwrap();
    let t = a.end_turn(A, 1, "a").unwrap().unwrap();
    assert_eq!(t.files, vec!["mine.txt"], "{t:?}");
    assert!(t.others.is_empty(), "{t:?}");
    let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert!(saved["closedMs"]
        .as_i64()
        .is_some_and(|c| c < opened + 10_000));
}

/// Logs written before attribution (no `others`, no `span`, steps without a kind) still load
/// and restore as they did: every change of a turn is its own.
#[test]
fn logs_from_before_attribution_load_and_restore_as_before() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut a = open(st.path(), ws.path(), false);
    let mut b = open(st.path(), ws.path(), false);
    file_tool(&mut a, A, 1, ws.path(), "a.txt");
    file_tool(&mut b, B, 1, ws.path(), "b.txt");
    a.end_turn(A, 1, "a").unwrap().unwrap();
    // Rewrite A's log the way older versions wrote it.
    let log = a.store_dir().join("sessions").join(format!("{A}.json"));
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&log).unwrap()).unwrap();
    for t in v["turns"].as_array_mut().unwrap() {
        let t = t.as_object_mut().unwrap();
        assert!(t.remove("others").is_some());
        assert!(t.remove("span").is_some());
    }
    std::fs::write(&log, serde_json::to_vec(&v).unwrap()).unwrap();
    drop(a);
    let mut a = open(st.path(), ws.path(), false);
    let t = &a.turns(A).unwrap()[0];
    assert!(t.others.is_empty() && t.span.is_none());
    assert!(a.diff_turn(A, 1).unwrap().contains("b.txt"));
    restore(&mut a, A, false);
    assert!(!ws.path().join("a.txt").exists());
    assert!(
        !ws.path().join("b.txt").exists(),
        "an old log's turn owns all it changed"
    );
}

/// A pending turn written by an older version (steps without a kind) ends as before.
#[test]
fn a_pending_turn_from_before_attribution_ends_as_before() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut a = open(st.path(), ws.path(), false);
    a.begin_step(A, 1, "write_file", "c1", StepKind::File)
        .unwrap();
    write(ws.path(), "x.txt", "x\n");
    let pending = a.store_dir().join("sessions").join(format!("{A}.pending"));
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&pending).unwrap()).unwrap();
    let steps = v["pending"]["steps"].as_array_mut().unwrap();
    steps.clear();
    std::fs::write(&pending, serde_json::to_vec(&v).unwrap()).unwrap();
    let t = a.end_turn(A, 1, "a").unwrap().unwrap();
    assert_eq!(t.files, vec!["x.txt"]);
    assert!(t.span.is_none());
}

#[test]
fn cairn_temp_files_are_never_in_a_checkpoint() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut a = open(st.path(), ws.path(), false);
    let t = turn(&mut a, A, 1, "t", || {
        write(ws.path(), ".p3.txt.cairn-tmp-4242-0", "half-written\n");
        write(ws.path(), ".q.txt.cairn-restore", "half-restored\n");
        write(ws.path(), "real.txt", "r\n");
    })
    .unwrap();
    assert_eq!(t.files, vec!["real.txt"]);
    assert!(t.others.is_empty(), "{t:?}");
}

/// What another session's restore removed stays removed, even by a forced restore whose
/// checkpoint still had it: a restore publishes what it wrote.
#[test]
fn a_forced_restore_does_not_bring_back_what_another_sessions_restore_removed() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    let mut a = open(st.path(), ws.path(), false);
    let mut b = open(st.path(), ws.path(), false);
    file_tool(&mut b, B, 1, ws.path(), "b.txt");
    b.end_turn(B, 1, "b").unwrap().unwrap();
    file_tool(&mut a, A, 1, ws.path(), "a.txt");
    a.end_turn(A, 1, "a").unwrap().unwrap();
    restore(&mut b, B, false);
    assert!(!ws.path().join("b.txt").exists());
    let r = restore(&mut a, A, true);
    assert!(!ws.path().join("a.txt").exists());
    assert!(!ws.path().join("b.txt").exists(), "brought back: {r:?}");
    assert!(
        conflict(&r, "b.txt").is_some_and(|c| c.contains(B)),
        "{r:?}"
    );
}
