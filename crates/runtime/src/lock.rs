//! One process at a time per session: an advisory lock on `<session dir>/lock`, held for as
//! long as the session is open (a `cairn run`, a desktop window) or a restore runs. Two
//! processes writing one session would each save their own history over the other's.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::store::StoreError;

/// The lock file's name inside a session's directory.
pub const LOCK_FILE: &str = "lock";

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
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(StoreError::InUse {
                    id: id.to_string(),
                    holder: text.trim().parse().ok(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(StoreError::from_io(
                    format!("locking {}", path.display()),
                    e,
                ))
            }
        }
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
}
