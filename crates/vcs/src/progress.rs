//! Progress of long snapshots: reported to an observer only once a snapshot has run for over
//! a second, and then at most ten times a second.

use std::sync::Arc;
use std::time::{Duration, Instant};

/// Observer of a long snapshot: entries done so far and, once the walk has found them all,
/// how many there are in all. Called on the snapshotting thread; keep it cheap.
pub type ProgressFn = Arc<dyn Fn(u64, Option<u64>) + Send + Sync>;

/// Nothing is reported for snapshots shorter than this.
const QUIET: Duration = Duration::from_secs(1);
/// At most one report per this much time.
const EVERY: Duration = Duration::from_millis(100);

/// Rate-limits the reports of one snapshot.
pub(crate) struct Ticker {
    observer: Option<ProgressFn>,
    started: Instant,
    quiet: Duration,
    last: Option<Instant>,
}

impl Ticker {
    /// A ticker for a snapshot that started at `started`.
    pub fn started_at(observer: Option<ProgressFn>, started: Instant) -> Ticker {
        Ticker {
            observer,
            started,
            quiet: QUIET,
            last: None,
        }
    }

    /// Reports from `quiet` after the start on (tests use zero).
    #[cfg(test)]
    pub fn with_quiet(mut self, quiet: Duration) -> Ticker {
        self.quiet = quiet;
        self
    }

    /// Reports `done` of `total` if the snapshot is long and the last report is old enough.
    pub fn tick(&mut self, done: u64, total: Option<u64>) {
        if self.observer.is_some() {
            self.tick_at(Instant::now(), done, total);
        }
    }

    /// [`Ticker::tick`] at a given time.
    pub fn tick_at(&mut self, now: Instant, done: u64, total: Option<u64>) {
        let Some(observer) = &self.observer else {
            return;
        };
        if now.saturating_duration_since(self.started) <= self.quiet {
            return;
        }
        if self
            .last
            .is_some_and(|l| now.saturating_duration_since(l) < EVERY)
        {
            return;
        }
        self.last = Some(now);
        observer(done, total);
    }

    /// The last report (all done), made only when something was reported before, so a
    /// progress display that appeared also completes.
    pub fn finish(&mut self, done: u64, total: Option<u64>) {
        if let (Some(observer), Some(_)) = (&self.observer, self.last) {
            observer(done, total);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    type Seen = Arc<Mutex<Vec<(u64, Option<u64>)>>>;

    fn recorder() -> (ProgressFn, Seen) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let f: ProgressFn = Arc::new(move |d, t| s.lock().unwrap().push((d, t)));
        (f, seen)
    }

    #[test]
    fn nothing_is_reported_in_the_first_second() {
        let (f, seen) = recorder();
        let t0 = Instant::now();
        let mut t = Ticker::started_at(Some(f), t0);
        for ms in (0..=1000).step_by(10) {
            t.tick_at(t0 + Duration::from_millis(ms), ms, None);
        }
        t.finish(1000, Some(1000));
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn reports_are_ten_a_second_at_most_and_end_complete() {
        let (f, seen) = recorder();
        let t0 = Instant::now();
        let mut t = Ticker::started_at(Some(f), t0);
        // Three seconds of ticks every millisecond.
        for ms in 0..3000u64 {
            t.tick_at(t0 + Duration::from_millis(ms), ms, None);
        }
        t.finish(3000, Some(3000));
        let seen = seen.lock().unwrap();
        // Two seconds past the quiet one: about 20 reports, and the final one.
        assert!(seen.len() <= 21, "{} reports", seen.len());
        assert!(seen.len() >= 19, "{} reports", seen.len());
        assert_eq!(seen.first().map(|s| s.0), Some(1001));
        assert_eq!(seen.last(), Some(&(3000, Some(3000))));
    }
}
