//! Memory the app holds without using it: freed memory given back to the OS after a heavy
//! step (a session opened, a turn ended, sessions closed), and the web process's garbage
//! collector set to reach DOM nodes of rows that scrolled away, and to run before its heap
//! has grown far past what is live.
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

/// JavaScriptCore's switch for generational collection, read by the web process at start.
pub const GENERATIONAL_GC: &str = "JSC_useGenerationalGC";

/// JavaScriptCore's bound on how far its heap grows past the live heap before the next full
/// collection, read by the web process at start.
pub const HEAP_GROWTH: &str = "JSC_heapGrowthMaxIncrease";

/// How the app sets up the web process's garbage collector: each variable and its value.
///
/// - [`GENERATIONAL_GC`] `0`: each row a virtualised transcript draws leaves DOM nodes behind
///   JS wrappers that survive one young-generation collection and then wait for a full one,
///   which a scrolling page seldom gets (51 young collections and 2 full ones while a
///   10,000-event session was scrolled end to end): the web process grew by 130 MiB and kept
///   it. Collecting the whole heap each time kept the growth at 60–80 MiB (release build),
///   with the same frame times in `scripts/bench-app.sh`.
/// - [`HEAP_GROWTH`] `1`: on machines with 16 GiB of RAM or more JavaScriptCore lets its heap
///   grow to about four times the live heap before collecting (`3·e^(−2·heap/RAM) + 1`); the
///   rows scrolled away between two collections are what the web process then keeps. With
///   `1` the heap collects at about twice the live heap, as it does on smaller machines: the
///   10,000-event session opened and scrolled end to end stood at 1.25× idle instead of 1.31×
///   (release build, two runs each; `benches/app_memory`), frame times unchanged.
pub const WEB_PROCESS_GC: [(&str, &str); 2] = [(GENERATIONAL_GC, "0"), (HEAP_GROWTH, "1")];

/// Sets [`WEB_PROCESS_GC`] for the WebKit web process, each variable unless the user set it;
/// the variables it set. Call before any thread starts.
pub fn tune_web_process_gc() -> Vec<&'static str> {
    if !cfg!(target_os = "linux") {
        return Vec::new();
    }
    let mut set = Vec::new();
    for (var, value) in WEB_PROCESS_GC {
        if std::env::var_os(var).is_none() {
            std::env::set_var(var, value);
            set.push(var);
        }
    }
    set
}

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
        let kept: Vec<Vec<u8>> = blocks.iter_mut().step_by(100).map(std::mem::take).collect();
        drop(blocks);
        assert!(release_freed(), "the freed pages were given back");
        assert!(
            kept.iter().all(|b| b.len() == 2048),
            "kept blocks are intact"
        );
    }
}
