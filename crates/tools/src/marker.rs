//! Finds every process a command started, also those that left its process group and
//! terminal session (`setsid`, double forks): the command runs with a unique environment
//! marker, and stopping it signals each process that still carries that marker.

use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::Signal;
use nix::unistd::Pid;

/// The variable that carries the marker.
pub const MARKER_VAR: &str = "CAIRN_RUN";

static NEXT: AtomicU64 = AtomicU64::new(1);

/// One command's marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunMarker {
    value: String,
}

impl RunMarker {
    /// A marker no other command of any process has.
    pub fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or_default();
        RunMarker {
            value: format!(
                "{}-{}-{nanos}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
        }
    }

    /// The environment entry to start the command with.
    pub fn env(&self) -> (String, String) {
        (MARKER_VAR.to_string(), self.value.clone())
    }

    /// Sends `sig` to every process but this one whose environment holds the marker (Linux:
    /// read from `/proc`; elsewhere nothing). Returns how many were signalled.
    pub fn signal_all(&self, sig: Signal) -> usize {
        let needle = format!("{MARKER_VAR}={}", self.value).into_bytes();
        signal_matching(|var| var == needle.as_slice(), sig)
    }
}

/// Kills what the commands of process `pid` left running, once `pid` is gone (it was killed
/// and could not stop them itself): every process whose marker says `pid` started it. Does
/// nothing while `pid` still exists. Returns how many were killed.
pub fn reap_orphans_of(pid: u32) -> usize {
    if pid == std::process::id() || std::path::Path::new(&format!("/proc/{pid}")).exists() {
        return 0;
    }
    let prefix = format!("{MARKER_VAR}={pid}-").into_bytes();
    signal_matching(|var| var.starts_with(&prefix), Signal::SIGKILL)
}

/// Sends `sig` to every process but this one with an environment entry `matches` accepts.
fn signal_matching(matches: impl Fn(&[u8]) -> bool, sig: Signal) -> usize {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let me = std::process::id();
    let mut signalled = 0;
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        // Unreadable (another user's, or gone): not ours.
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(&matches) {
            if let Ok(raw) = i32::try_from(pid) {
                if nix::sys::signal::kill(Pid::from_raw(raw), sig).is_ok() {
                    signalled += 1;
                }
            }
        }
    }
    signalled
}

impl Default for RunMarker {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_orphans_of_a_dead_process_are_reaped_and_a_live_ones_are_not() {
        // A pid that existed and is gone: the "killed Cairn".
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        gone.wait().unwrap();
        let dead = gone.id();
        let mut orphan = std::process::Command::new("setsid")
            .args(["sleep", "30"])
            .env(MARKER_VAR, format!("{dead}-7-123"))
            .spawn()
            .unwrap();
        // Markers of this (live) process are never touched.
        let mine = RunMarker::new();
        let (k, v) = mine.env();
        let mut live = std::process::Command::new("sleep")
            .arg("30")
            .env(k, v)
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut hit = 0;
        while hit == 0 && std::time::Instant::now() < deadline {
            assert_eq!(reap_orphans_of(std::process::id()), 0);
            hit = reap_orphans_of(dead);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(hit, 1);
        assert!(!orphan.wait().unwrap().success());
        assert!(
            live.try_wait().unwrap().is_none(),
            "a live process's command runs on"
        );
        live.kill().unwrap();
        let _ = live.wait();
    }

    #[test]
    fn a_process_that_left_its_group_and_session_is_still_found() {
        let marker = RunMarker::new();
        let (k, v) = marker.env();
        // setsid: a new session and group, so neither killpg nor the session scan reach it.
        let mut child = std::process::Command::new("setsid")
            .args(["sleep", "30"])
            .env(k, v)
            .spawn()
            .unwrap();
        let other = RunMarker::new();
        assert_ne!(marker, other);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut hit = 0;
        while hit == 0 && std::time::Instant::now() < deadline {
            assert_eq!(
                other.signal_all(Signal::SIGKILL),
                0,
                "another marker matches nothing"
            );
            hit = marker.signal_all(Signal::SIGKILL);
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(hit, 1);
        let status = child.wait().unwrap();
        assert!(!status.success());
    }
}
