//! Start-up benchmark (`CAIRN_BENCH=1`, driven by `scripts/bench-app.sh`): time from process
//! start to the page's first paint, idle memory of the app and its WebKit processes, and the
//! page's transcript frame times; printed as one `CAIRN_BENCH {json}` line on stdout.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How long the app idles before its memory is measured.
pub const IDLE_BEFORE_RSS: Duration = Duration::from_secs(3);

static STARTED: OnceLock<(Instant, SystemTime)> = OnceLock::new();

/// Records the process start; call first thing in `main`.
pub fn mark_process_start() {
    let _ = STARTED.set((Instant::now(), SystemTime::now()));
}

/// Milliseconds from process start to a wall-clock time the page reported (ms since the
/// epoch, as `performance.timeOrigin + performance.now()` gives it).
pub fn since_start_to_epoch_ms(epoch_ms: f64) -> Option<f64> {
    let (_, wall) = STARTED.get()?;
    let start = wall.duration_since(UNIX_EPOCH).ok()?.as_secs_f64() * 1000.0;
    Some(epoch_ms - start)
}

/// Milliseconds since [`mark_process_start`].
pub fn since_start_ms() -> f64 {
    STARTED
        .get()
        .map(|(s, _)| s.elapsed().as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// Memory of a process tree.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TreeMemory {
    /// Processes counted (the app and its descendants).
    pub processes: usize,
    /// Sum of resident set sizes, MiB (shared pages counted once per process).
    pub rss_mib: f64,
    /// Sum of proportional set sizes, MiB (shared pages split between processes).
    pub pss_mib: f64,
    /// Per process: command name, RSS MiB, PSS MiB.
    pub each: Vec<(String, f64, f64)>,
}

/// `pid → parent pid` for every process in /proc.
fn parents() -> HashMap<u32, u32> {
    let mut out = HashMap::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: fields resume after the last ')'.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            out.insert(pid, ppid);
        }
    }
    out
}

/// A `kB` field of a /proc status-like file, in KiB.
fn kib_field(text: &str, field: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Memory of `root` and all its descendants (Linux; zero elsewhere).
pub fn tree_memory(root: u32) -> TreeMemory {
    let parents = parents();
    let mut tree: HashSet<u32> = HashSet::from([root]);
    loop {
        let before = tree.len();
        for (pid, ppid) in &parents {
            if tree.contains(ppid) {
                tree.insert(*pid);
            }
        }
        if tree.len() == before {
            break;
        }
    }
    let mut m = TreeMemory::default();
    for pid in tree {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let rss = kib_field(&status, "VmRSS:");
        if rss == 0 {
            continue;
        }
        let smaps =
            std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
        let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let (rss, pss) = (
            rss as f64 / 1024.0,
            kib_field(&smaps, "Pss:") as f64 / 1024.0,
        );
        m.processes += 1;
        m.rss_mib += rss;
        m.pss_mib += pss;
        m.each.push((name.trim().to_string(), rss, pss));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_this_process() {
        let m = tree_memory(std::process::id());
        if cfg!(target_os = "linux") {
            assert!(m.processes >= 1 && m.rss_mib > 1.0, "{m:?}");
        }
        assert_eq!(kib_field("VmRSS:\t  2048 kB\n", "VmRSS:"), 2048);
    }
}
