//! A restore that dies half-way is detected and can be finished or rolled back.

use crate::common;

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cairn_vcs::{FsWriter, Recovery, RestoreOptions, TreeWriter, Vcs, VcsError};
use common::*;

/// The real file system, until `left` operations have run; then every call fails (a crash).
struct CrashAfter {
    left: AtomicUsize,
}

impl CrashAfter {
    fn step(&self) -> io::Result<()> {
        let ok = self
            .left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        if ok {
            Ok(())
        } else {
            Err(io::Error::other("simulated crash"))
        }
    }
}

impl TreeWriter for CrashAfter {
    fn write_file(&self, path: &Path, data: &[u8], executable: bool) -> io::Result<()> {
        self.step()?;
        FsWriter.write_file(path, data, executable)
    }
    fn write_symlink(&self, path: &Path, target: &[u8]) -> io::Result<()> {
        self.step()?;
        FsWriter.write_symlink(path, target)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.step()?;
        FsWriter.remove_file(path)
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        FsWriter.create_dir_all(path)
    }
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        FsWriter.remove_dir(path)
    }
}

const S: &str = "s";

fn setup(
    ws: &Path,
    st: &Path,
) -> (
    std::collections::BTreeMap<String, String>,
    std::collections::BTreeMap<String, String>,
) {
    for i in 0..6 {
        write(ws, &format!("f{i}.txt"), "start\n");
    }
    let mut vcs = open(st, ws, false);
    let start = state(ws);
    turn(&mut vcs, S, 1, "edit all", || {
        for i in 0..6 {
            write(ws, &format!("f{i}.txt"), "agent\n");
        }
        write(ws, "added.txt", "new\n");
    })
    .unwrap();
    (start, state(ws))
}

fn crash(st: &Path, ws: &Path) -> Vcs {
    let mut vcs = open(st, ws, false).with_writer(Arc::new(CrashAfter {
        left: AtomicUsize::new(3),
    }));
    let err = vcs
        .restore(S, 1, &RestoreOptions::default())
        .expect_err("the restore crashes");
    // The first error already says how to resolve the half-restored tree.
    assert!(
        matches!(&err, VcsError::Unfinished { source, .. } if matches!(**source, VcsError::Interrupted { .. })),
        "{err}"
    );
    assert!(
        err.to_string().contains(&format!(
            "cairn restore --session {S} --recover finish|rollback"
        )),
        "{err}"
    );
    vcs
}

#[test]
fn crash_mid_restore_then_roll_back() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    user_repo(ws.path());
    let git_before = digest(&ws.path().join(".git"));
    let (_start, after_turn) = setup(ws.path(), st.path());
    drop(crash(st.path(), ws.path()));
    assert_ne!(
        state(ws.path()),
        after_turn,
        "the crash left a half-restored tree"
    );

    // Next start: the journal is found, and new restores refuse to run until it is resolved.
    let mut vcs = open(st.path(), ws.path(), false);
    let pending = vcs.pending_restore().unwrap().expect("pending restore");
    assert_eq!((pending.session.as_str(), pending.to_turn), (S, 0));
    assert_eq!(pending.paths.len(), 7);
    assert!(matches!(
        vcs.restore(S, 2, &RestoreOptions::default()),
        Err(VcsError::PendingRestore { .. })
    ));
    let report = vcs.recover(Recovery::RollBack, 2).unwrap();
    assert_eq!(report.restored.len(), 7);
    assert_eq!(
        state(ws.path()),
        after_turn,
        "rolled back to the pre-restore state"
    );
    assert!(vcs.pending_restore().unwrap().is_none());
    assert_eq!(
        vcs.turns(S).unwrap().len(),
        1,
        "a rolled-back restore records nothing"
    );
    assert!(matches!(
        vcs.recover(Recovery::Finish, 2),
        Err(VcsError::NothingToRecover)
    ));
    assert_eq!(digest(&ws.path().join(".git")), git_before);
}

#[test]
fn crash_mid_restore_then_finish() {
    let ws = tempfile::tempdir().unwrap();
    let st = tempfile::tempdir().unwrap();
    user_repo(ws.path());
    let git_before = digest(&ws.path().join(".git"));
    let (start, after_turn) = setup(ws.path(), st.path());
    drop(crash(st.path(), ws.path()));
    let mut vcs = open(st.path(), ws.path(), false);
    let report = vcs.recover(Recovery::Finish, 2).unwrap();
    assert_eq!(report.turn, Some(2));
    assert_eq!(report.deleted, vec!["added.txt".to_string()]);
    assert_eq!(state(ws.path()), start, "finished: the target state");
    // The finished restore is undoable like any other.
    vcs.restore(
        S,
        2,
        &RestoreOptions {
            to_turn: 1,
            ..RestoreOptions::default()
        },
    )
    .unwrap();
    assert_eq!(state(ws.path()), after_turn);
    assert_eq!(digest(&ws.path().join(".git")), git_before);
}
