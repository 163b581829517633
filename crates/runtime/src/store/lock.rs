//! One process at a time per session: an advisory lock on `<session dir>/lock`, held for as
//! long as the session is open (a `cairn run`, a desktop window) or a restore runs. Two
//! processes writing one session would each save their own history over the other's.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::store::StoreError;

/// The lock file's name inside a session's directory.
pub const LOCK_FILE: &str = "lock";

/// Longest wait for a lock whose recorded holder died (a command it left running holds it).
const ORPHAN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// How often that wait looks again.
const ORPHAN_POLL: std::time::Duration = std::time::Duration::from_millis(25);

/// Whether process `pid` still exists.
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// A held session lock; dropping it (or the process ending, however it ends) releases it.
/// A clean release also clears the holder's pid, so the file names a previous holder only
/// when that process was killed (and the next one looks for what it left running).
#[derive(Debug)]
pub struct SessionLock {
    file: File,
    previous: Option<u32>,
}

impl Drop for SessionLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
    }
}

impl SessionLock {
    /// Takes the lock of the session in `dir` (created if missing) without waiting.
    pub fn acquire(id: &str, dir: &Path) -> Result<SessionLock, StoreError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| StoreError::from_io(format!("creating {}", dir.display()), e))?;
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| StoreError::from_io(format!("opening {}", path.display()), e))?;
        let mut waited = std::time::Duration::ZERO;
        loop {
            match file.try_lock() {
                Ok(()) => break,
                Err(std::fs::TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    let _ = file.seek(SeekFrom::Start(0));
                    let _ = file.read_to_string(&mut text);
                    let holder: Option<u32> = text.trim().parse().ok();
                    // The recorded holder is gone (killed), or the file names none (released
                    // cleanly, or not yet written by a holder that just took it), yet the lock
                    // is held: a copy of the descriptor outlives its owner for a moment (a
                    // command it left running, a child forked by another thread that has not
                    // reached `exec`). Wait for it a little rather than refuse the session; a
                    // live holder writes its pid and is refused on the next look.
                    if holder.is_none_or(|pid| !alive(pid)) && waited < ORPHAN_WAIT {
                        std::thread::sleep(ORPHAN_POLL);
                        waited += ORPHAN_POLL;
                        continue;
                    }
                    return Err(StoreError::InUse {
                        id: id.to_string(),
                        holder,
                    });
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(StoreError::from_io(
                        format!("locking {}", path.display()),
                        e,
                    ))
                }
            }
        }
        let _ = file.seek(SeekFrom::Start(0));
        // The last holder (gone now, or it would still hold the lock), then who holds it,
        // for the message another process shows.
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        let previous = text.trim().parse().ok();
        let pid = std::process::id().to_string();
        let _ = file
            .set_len(0)
            .and_then(|_| file.seek(SeekFrom::Start(0)))
            .and_then(|_| file.write_all(pid.as_bytes()));
        Ok(SessionLock { file, previous })
    }

    /// The process that held the lock last and was killed holding it, when the file says.
    pub fn previous_holder(&self) -> Option<u32> {
        self.previous
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_pid_until_it_lets_go() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s1");
        let first = SessionLock::acquire("s1", &dir).unwrap();
        match SessionLock::acquire("s1", &dir) {
            Err(StoreError::InUse { id, holder }) => {
                assert_eq!(id, "s1");
                assert_eq!(holder, Some(std::process::id()));
            }
            other => panic!("expected InUse, got {other:?}"),
        }
        drop(first);
        // Released cleanly: no previous holder to clean up after.
        let again = SessionLock::acquire("s1", &dir).unwrap();
        assert_eq!(again.previous_holder(), None);
        // Killed while holding it: its pid stays in the file for the next holder.
        drop(again);
        std::fs::write(dir.join(LOCK_FILE), "4242").unwrap();
        let after_kill = SessionLock::acquire("s1", &dir).unwrap();
        assert_eq!(after_kill.previous_holder(), Some(4242));
        // Another session is independent.
        assert!(SessionLock::acquire("s2", &tmp.path().join("s2")).is_ok());
    }

    #[test]
    fn a_lock_left_by_a_dead_holder_is_waited_for_while_a_leftover_keeps_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s1");
        std::fs::create_dir_all(&dir).unwrap();
        // A leftover command of a killed process: it holds the lock, the file names a pid
        // that no longer exists, and it lets go a moment later.
        let leftover = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.join(LOCK_FILE))
            .unwrap();
        leftover.lock().unwrap();
        std::fs::write(dir.join(LOCK_FILE), "4000000000").unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let holder = std::thread::spawn(move || {
            rx.recv().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(150));
            drop(leftover);
        });
        tx.send(()).unwrap();
        let lock = SessionLock::acquire("s1", &dir).unwrap();
        assert_eq!(lock.previous_holder(), Some(4_000_000_000));
        holder.join().unwrap();
    }

    #[test]
    fn a_clean_release_is_waited_for_while_a_forked_copy_still_holds_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("s1");
        let first = SessionLock::acquire("s1", &dir).unwrap();
        // What a child forked by another thread holds until it execs: the same open file
        // description, so the lock outlives the owner's clean release (which empties the file).
        let copy = first.file.try_clone().unwrap();
        drop(first);
        assert_eq!(std::fs::read_to_string(dir.join(LOCK_FILE)).unwrap(), "");
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let child = std::thread::spawn(move || {
            rx.recv().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(150));
            drop(copy);
        });
        tx.send(()).unwrap();
        let lock = SessionLock::acquire("s1", &dir).unwrap();
        assert_eq!(lock.previous_holder(), None);
        child.join().unwrap();
    }
}
