//! The background writer of one session's checkpoint: a thread that writes the newest state
//! handed to it, off the thread running the turn. It keeps at most one state waiting (a
//! newer one replaces it: never a queue of full histories), records the first failed write
//! of a turn as a sticky failure, and lets callers wait until what they handed over is on
//! disk ([`Writer::wait`], [`Writer::flush`]). Dropping it writes what is waiting, then
//! joins the thread.

use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::store::held::HeldState;
use crate::store::StoreError;

/// How one state is written: the checkpoint file, plus whatever upkeep goes with it. The
/// flag allows the upkeep: the state is a turn's (see [`Writer::submit`]) and no write of
/// the turn failed.
pub type WriteFn = Box<dyn FnMut(&HeldState, bool) -> Result<(), StoreError> + Send>;

/// A state waiting to be written.
struct Job {
    session: Arc<HeldState>,
    /// A turn's state: its failure is sticky (see [`Writer::failure`]).
    turn: bool,
}

#[derive(Default)]
struct Slot {
    /// The newest state not yet taken by the thread.
    pending: Option<Job>,
    /// Generation of the newest state handed over.
    submitted: u64,
    /// Generation of the newest state whose write has finished (well or not).
    done: u64,
    /// Why the last finished write failed (`None`: it succeeded).
    last_error: Option<StoreError>,
    /// The first failed write of a turn's state since [`Writer::take_failure`].
    failure: Option<String>,
    /// Old states to free here, off the caller's thread (freeing a long history takes as
    /// long as copying it).
    garbage: Vec<Arc<HeldState>>,
    /// No more states come: write what is waiting and end.
    stop: bool,
}

struct Shared {
    slot: Mutex<Slot>,
    /// Signalled when a state is handed over, a write finishes or the writer stops.
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The checkpoint writer of one session (see the module docs).
pub struct Writer {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the writing thread; `write` does each write.
    pub fn spawn(name: &str, write: WriteFn) -> Result<Writer, StoreError> {
        let shared = Arc::new(Shared {
            slot: Mutex::new(Slot::default()),
            changed: Condvar::new(),
        });
        let inner = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("cairn-save-{name}"))
            .spawn(move || run(&inner, write))
            .map_err(|e| StoreError::from_io("starting the session's checkpoint writer", e))?;
        Ok(Writer {
            shared,
            thread: Some(thread),
        })
    }

    /// Hands over the session's newest state and returns at once with its generation (for
    /// [`Writer::wait`]); a state still waiting is replaced, never queued behind. `turn`
    /// marks a turn's state: if its write fails, the failure is sticky.
    pub fn submit(&self, session: Arc<HeldState>, turn: bool) -> u64 {
        let mut slot = self.shared.lock();
        // A replaced turn state is only on disk if this one is.
        let turn = turn || slot.pending.as_ref().is_some_and(|j| j.turn);
        if let Some(replaced) = slot.pending.replace(Job { session, turn }) {
            slot.garbage.push(replaced.session);
        }
        slot.submitted += 1;
        let generation = slot.submitted;
        drop(slot);
        self.shared.changed.notify_all();
        generation
    }

    /// Hands over a state the caller no longer needs, to be freed on the writer's thread.
    pub fn discard(&self, old: Arc<HeldState>) {
        self.shared.lock().garbage.push(old);
    }

    /// Waits until the state of `generation` (or a newer one, which holds it) is written;
    /// that write's error, if it failed.
    pub fn wait(&self, generation: u64) -> Result<(), StoreError> {
        let mut slot = self.shared.lock();
        while slot.done < generation {
            slot = self
                .shared
                .changed
                .wait(slot)
                .unwrap_or_else(|e| e.into_inner());
        }
        match &slot.last_error {
            None => Ok(()),
            Some(e) => Err(e.duplicate()),
        }
    }

    /// Waits until everything handed over so far is written (see [`Writer::wait`]).
    pub fn flush(&self) -> Result<(), StoreError> {
        let generation = self.shared.lock().submitted;
        self.wait(generation)
    }

    /// The first failed write of a turn's state since [`Writer::take_failure`], once that
    /// write has finished.
    pub fn failure(&self) -> Option<String> {
        self.shared.lock().failure.clone()
    }

    /// Reports and clears the sticky failure.
    pub fn take_failure(&self) -> Option<String> {
        self.shared.lock().failure.take()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            if thread.join().is_err() {
                tracing::warn!("the session's checkpoint writer panicked");
            }
        }
    }
}

/// The thread: takes the newest waiting state, writes it, records how that went.
fn run(shared: &Shared, mut write: WriteFn) {
    loop {
        let (job, generation, upkeep, garbage) = {
            let mut slot = shared.lock();
            loop {
                if let Some(job) = slot.pending.take() {
                    let upkeep = job.turn && slot.failure.is_none();
                    break (
                        job,
                        slot.submitted,
                        upkeep,
                        std::mem::take(&mut slot.garbage),
                    );
                }
                if slot.stop {
                    return;
                }
                slot = shared.changed.wait(slot).unwrap_or_else(|e| e.into_inner());
            }
        };
        drop(garbage);
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| write(&job.session, upkeep)))
                .unwrap_or_else(|_| {
                    Err(StoreError::from_io(
                        "saving the session",
                        std::io::Error::other("the checkpoint writer panicked"),
                    ))
                });
        // The state is no longer needed here: the next change to it need not copy it.
        drop(job.session);
        let mut slot = shared.lock();
        slot.done = generation;
        match result {
            Ok(()) => slot.last_error = None,
            Err(e) => {
                tracing::warn!(error = %e, "could not checkpoint the session");
                if job.turn {
                    let reason = format!("could not save the session: {e}");
                    slot.failure.get_or_insert(reason);
                }
                slot.last_error = Some(e);
            }
        }
        drop(slot);
        shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::sync::mpsc;

    fn session(turns: u32) -> Arc<HeldState> {
        Arc::new(HeldState::new(crate::store::SavedSession {
            turns,
            protocol_version: 1,
            ..crate::store::SavedSession::new("w", "/w", "m", "", "")
        }))
    }

    /// A writer whose writes report the state they got and wait for the test's go.
    fn gated() -> (Writer, mpsc::Receiver<u32>, mpsc::Sender<bool>) {
        let (started_tx, started) = mpsc::channel();
        let (go, go_rx) = mpsc::channel::<bool>();
        let writer = Writer::spawn(
            "test",
            Box::new(move |s, _| {
                started_tx.send(s.meta.turns).unwrap();
                match go_rx.recv() {
                    Ok(true) => Ok(()),
                    _ => Err(StoreError::from_io(
                        "writing state.json",
                        std::io::Error::other("disk full"),
                    )),
                }
            }),
        )
        .unwrap();
        (writer, started, go)
    }

    #[test]
    fn a_newer_state_replaces_a_waiting_one() {
        let (writer, started, go) = gated();
        writer.submit(session(1), true);
        assert_eq!(started.recv().unwrap(), 1, "the first write is under way");
        // While it is, two more arrive: only the newest is written next.
        let second = writer.submit(session(2), true);
        let third = writer.submit(session(3), true);
        go.send(true).unwrap();
        assert_eq!(started.recv().unwrap(), 3);
        go.send(true).unwrap();
        writer.wait(second).unwrap();
        writer.wait(third).unwrap();
        writer.flush().unwrap();
        drop(writer);
        assert!(started.try_recv().is_err(), "state 2 was never written");
    }

    #[test]
    fn a_failed_turn_write_is_sticky_until_taken() {
        let (writer, started, go) = gated();
        let first = writer.submit(session(1), true);
        started.recv().unwrap();
        go.send(false).unwrap();
        assert!(writer
            .wait(first)
            .unwrap_err()
            .to_string()
            .contains("disk full"));
        // A later success does not hide it.
        let second = writer.submit(session(2), true);
        started.recv().unwrap();
        go.send(true).unwrap();
        writer.wait(second).unwrap();
        let reason = writer.failure().unwrap();
        assert!(reason.starts_with("could not save the session"), "{reason}");
        assert_eq!(writer.take_failure(), Some(reason));
        assert_eq!(writer.failure(), None);
        // Not a turn's state: the caller gets the error, no turn is failed by it.
        let third = writer.submit(session(3), false);
        started.recv().unwrap();
        go.send(false).unwrap();
        assert!(writer.wait(third).is_err());
        assert_eq!(writer.failure(), None);
    }

    #[test]
    fn dropping_the_writer_writes_what_is_waiting() {
        let (writer, started, go) = gated();
        writer.submit(session(1), true);
        assert_eq!(started.recv().unwrap(), 1);
        writer.submit(session(2), true);
        go.send(true).unwrap();
        go.send(true).unwrap();
        drop(writer);
        assert_eq!(started.recv().unwrap(), 2);
    }
}
