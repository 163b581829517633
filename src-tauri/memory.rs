//! Gives memory the app freed back to the OS after a heavy step: a session opened, a turn
//! ended, sessions closed.
//!
//! glibc's allocator keeps freed small chunks in its arenas and returns only the top of each
//! heap by itself. Opening a 10,000-event session (reading its log, building its view and
//! the reply the page receives) left the app process holding 13 MiB it no longer used
//! (measured with `benches/app_memory`); a trim gives those pages back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long after a request the trim runs: the step's IPC reply is serialised and freed only
/// after its command returned.
const DELAY: Duration = Duration::from_secs(1);

/// Whether a trim is already scheduled (requests meanwhile share it).
static SCHEDULED: AtomicBool = AtomicBool::new(false);

/// Schedules one trim shortly after a heavy step (see [`DELAY`]); cheap to call often.
pub fn release_freed_soon() {
    if SCHEDULED.swap(true, Ordering::AcqRel) {
        return;
    }
    tauri::async_runtime::spawn(async {
        tokio::time::sleep(DELAY).await;
        SCHEDULED.store(false, Ordering::Release);
        let released = tauri::async_runtime::spawn_blocking(release_freed).await;
        tracing::debug!(?released, "freed memory given back to the OS");
    });
}

/// Gives the allocator's free pages back to the OS now; whether any were.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release_freed() -> bool {
    // SAFETY: malloc_trim takes no pointers; it walks glibc's own arenas under their locks,
    // so it may run on any thread while others allocate.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// Other allocators give memory back by themselves.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_freed() -> bool {
    false
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    #[test]
    fn pages_freed_in_the_middle_of_the_heap_are_given_back() {
        // Many small blocks, all freed but one in a hundred: the free pages between the kept
        // blocks are below the heap's top, where glibc does not return them by itself.
        let mut blocks: Vec<Vec<u8>> = (0..20_000).map(|i| vec![(i % 251) as u8; 2048]).collect();
        let kept: Vec<Vec<u8>> = blocks
            .iter_mut()
            .step_by(100)
            .map(std::mem::take)
            .collect();
        drop(blocks);
        assert!(release_freed(), "the freed pages were given back");
        assert!(kept.iter().all(|b| b.len() == 2048), "kept blocks are intact");
    }
}
