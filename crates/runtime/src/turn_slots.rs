//! At most N turns run at once on this machine, across every Cairn process (desktop
//! windows and `cairn run`s share the state dir): each running turn holds an advisory lock
//! (`flock`) on one of N slot files in `<state dir>/turn-slots/`. A turn that finds every slot
//! taken waits (a typed [`SlotWait`] says so) until one is free; the OS releases a slot of a
//! process that dies, however it dies. N is the number in `turn-slots/limit` (written by the
//! desktop's Settings), [`DEFAULT_LIMIT`] without one.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use ts_rs::TS;

/// Turns running at once when no limit was set.
pub const DEFAULT_LIMIT: u32 = 4;
/// The highest limit accepted.
pub const MAX_LIMIT: u32 = 64;
/// The slots' folder inside the state dir.
pub const DIR: &str = "turn-slots";
/// The file holding the limit, inside [`DIR`].
const LIMIT_FILE: &str = "limit";
/// How often a waiting turn looks for a slot another process freed (a slot freed in this
/// process wakes it at once).
const POLL: Duration = Duration::from_millis(200);

/// Why the slot folder could not be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot use the turn slots in {}: {source}", path.display())]
pub struct SlotError {
    /// The file or folder.
    pub path: PathBuf,
    /// What the OS said.
    #[source]
    pub source: std::io::Error,
}

/// A turn waits for a slot: every one of `limit` is taken (`running` turns hold them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SlotWait {
    /// Turns running now on this machine.
    pub running: u32,
    /// How many may run at once.
    pub limit: u32,
}

impl std::fmt::Display for SlotWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "waiting for a turn slot ({} running)", self.running)
    }
}

/// The machine's turn slots in one state dir.
#[derive(Debug)]
pub struct TurnSlots {
    dir: PathBuf,
    freed: tokio::sync::Notify,
}

/// A held slot: the turn may run. Dropping it frees the slot.
#[derive(Debug)]
pub struct TurnSlot {
    _file: File,
    index: u32,
    slots: Arc<TurnSlots>,
}

impl TurnSlot {
    /// Which slot file this is.
    pub fn index(&self) -> u32 {
        self.index
    }
}

impl Drop for TurnSlot {
    fn drop(&mut self) {
        // The lock goes with the file, which is closed right after this.
        self.slots.freed.notify_waiters();
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SlotError + '_ {
    move |source| SlotError {
        path: path.to_path_buf(),
        source,
    }
}

impl TurnSlots {
    /// The slots in folder `dir` (created when first needed).
    pub fn new(dir: impl Into<PathBuf>) -> Arc<TurnSlots> {
        Arc::new(TurnSlots {
            dir: dir.into(),
            freed: tokio::sync::Notify::new(),
        })
    }

    /// The slots of a state dir (`<state dir>/turn-slots`).
    pub fn in_state_dir(state_dir: &Path) -> Arc<TurnSlots> {
        TurnSlots::new(state_dir.join(DIR))
    }

    /// The folder of the slot files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many turns may run at once (read each time: another process may change it).
    pub fn limit(&self) -> u32 {
        std::fs::read_to_string(self.dir.join(LIMIT_FILE))
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
            .map_or(DEFAULT_LIMIT, |n| n.clamp(1, MAX_LIMIT))
    }

    /// Sets the limit for every process using this state dir (clamped to 1..=[`MAX_LIMIT`]).
    pub fn set_limit(&self, limit: u32) -> Result<(), SlotError> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let path = self.dir.join(LIMIT_FILE);
        let tmp = self
            .dir
            .join(format!(".{LIMIT_FILE}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, format!("{}\n", limit.clamp(1, MAX_LIMIT))).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io(&path))?;
        // Waiters re-read the limit: a higher one may let them run now.
        self.freed.notify_waiters();
        Ok(())
    }

    fn open(&self, index: u32) -> Result<File, SlotError> {
        let path = self.dir.join(format!("slot-{index}"));
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io(&path))
    }

    /// Takes a free slot without waiting; `None` when all are taken.
    pub fn try_acquire(self: &Arc<Self>) -> Result<Option<TurnSlot>, SlotError> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        for index in 0..self.limit() {
            let file = self.open(index)?;
            match file.try_lock() {
                Ok(()) => {
                    return Ok(Some(TurnSlot {
                        _file: file,
                        index,
                        slots: self.clone(),
                    }))
                }
                Err(std::fs::TryLockError::WouldBlock) => continue,
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(io(&self.dir.join(format!("slot-{index}")))(e))
                }
            }
        }
        Ok(None)
    }

    /// How many slots are held now, by any process (slots beyond the limit count too, when
    /// a lowered limit left turns running in them).
    pub fn running(&self) -> u32 {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let mut held = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let is_slot = name
                .to_str()
                .and_then(|n| n.strip_prefix("slot-"))
                .is_some_and(|n| n.parse::<u32>().is_ok());
            if !is_slot {
                continue;
            }
            // A lock is per open file: this probe conflicts with holders in this process too.
            let Ok(file) = File::open(entry.path()) else {
                continue;
            };
            if matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock)) {
                held += 1;
            }
        }
        held
    }

    /// Takes a slot, waiting as long as every one is taken; `on_wait` hears when the turn
    /// starts waiting and again whenever what it waits for changes.
    pub async fn acquire(
        self: &Arc<Self>,
        mut on_wait: impl FnMut(SlotWait),
    ) -> Result<TurnSlot, SlotError> {
        let mut told: Option<SlotWait> = None;
        loop {
            let freed = self.freed.notified();
            tokio::pin!(freed);
            // Registered before looking, so a slot freed meanwhile is not missed.
            freed.as_mut().enable();
            if let Some(slot) = self.try_acquire()? {
                return Ok(slot);
            }
            let wait = SlotWait {
                running: self.running(),
                limit: self.limit(),
            };
            if told != Some(wait) {
                on_wait(wait);
                told = Some(wait);
            }
            tokio::select! {
                _ = freed => {}
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_limit_is_shared_through_the_state_dir_and_clamped() {
        let dir = tempfile::tempdir().unwrap();
        let a = TurnSlots::in_state_dir(dir.path());
        let b = TurnSlots::in_state_dir(dir.path());
        assert_eq!(a.limit(), DEFAULT_LIMIT);
        a.set_limit(2).unwrap();
        assert_eq!(b.limit(), 2);
        a.set_limit(0).unwrap();
        assert_eq!(b.limit(), 1);
        a.set_limit(1000).unwrap();
        assert_eq!(b.limit(), MAX_LIMIT);
    }

    #[test]
    fn slots_are_taken_up_to_the_limit_and_freed_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let slots = TurnSlots::in_state_dir(dir.path());
        slots.set_limit(2).unwrap();
        let one = slots.try_acquire().unwrap().expect("a first slot");
        let two = slots.try_acquire().unwrap().expect("a second slot");
        assert_ne!(one.index(), two.index());
        assert!(slots.try_acquire().unwrap().is_none());
        assert_eq!(slots.running(), 2);
        drop(one);
        assert_eq!(slots.running(), 1);
        assert!(slots.try_acquire().unwrap().is_some());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiting_turn_runs_when_the_holder_ends() {
        let dir = tempfile::tempdir().unwrap();
        let slots = TurnSlots::in_state_dir(dir.path());
        slots.set_limit(1).unwrap();
        let held = slots.try_acquire().unwrap().unwrap();
        let (told_tx, told_rx) = tokio::sync::oneshot::channel();
        let waiter = {
            let slots = slots.clone();
            tokio::spawn(async move {
                let mut told = Some(told_tx);
                slots
                    .acquire(|w| {
                        if let Some(t) = told.take() {
                            let _ = t.send(w);
                        }
                    })
                    .await
                    .map(|s| s.index())
            })
        };
        let wait = told_rx.await.unwrap();
        assert_eq!(
            wait,
            SlotWait {
                running: 1,
                limit: 1
            }
        );
        assert_eq!(wait.to_string(), "waiting for a turn slot (1 running)");
        assert!(!waiter.is_finished());
        drop(held);
        assert_eq!(waiter.await.unwrap().unwrap(), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_killed_holder_process_frees_its_slot() {
        let Ok(flock) = which_flock() else {
            eprintln!("skipped: no flock(1) here");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let slots = TurnSlots::in_state_dir(dir.path());
        slots.set_limit(1).unwrap();
        std::fs::write(dir.path().join(DIR).join("slot-0"), "").unwrap();
        // Another process holds slot 0 (flock(1) keeps the lock while `sleep` runs).
        let mut holder = std::process::Command::new(flock)
            .arg("-o")
            .arg(dir.path().join(DIR).join("slot-0"))
            .args(["sleep", "30"])
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while slots.running() == 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "flock(1) never took the slot"
            );
            tokio::task::yield_now().await;
        }
        let (told_tx, told_rx) = tokio::sync::oneshot::channel();
        let waiter = {
            let slots = slots.clone();
            tokio::spawn(async move {
                let mut told = Some(told_tx);
                slots
                    .acquire(|w| {
                        if let Some(t) = told.take() {
                            let _ = t.send(w);
                        }
                    })
                    .await
                    .map(|s| s.index())
            })
        };
        // The waiter sees the other process's slot taken, then gets it once that process dies.
        assert_eq!(told_rx.await.unwrap().running, 1);
        holder.kill().unwrap();
        holder.wait().unwrap();
        let got = tokio::time::timeout(Duration::from_secs(10), waiter)
            .await
            .expect("the slot is freed by the holder's death");
        assert_eq!(got.unwrap().unwrap(), 0);
    }

    fn which_flock() -> Result<PathBuf, ()> {
        ["/usr/bin/flock", "/bin/flock"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .ok_or(())
    }
}
