//! Start-up benchmark (`CAIRN_BENCH=1`, driven by `scripts/bench-app.sh`): time from process
//! start to the page's first paint, idle memory of the app and its WebKit processes, and the
//! page's transcript frame times; printed as one `CAIRN_BENCH {json}` line on stdout.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::PathBuf;
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
    /// Resident memory of the whole tree with every physical page counted once, MiB
    /// (`None` when page frames cannot be read: /proc/PID/pagemap needs CAP_SYS_ADMIN).
    pub distinct_mib: Option<f64>,
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

/// `root` and all its descendants (Linux; only `root` elsewhere).
pub fn process_tree(root: u32) -> HashSet<u32> {
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
    tree
}

/// The files mapped by `root` and its descendants (their libraries, fonts, caches).
pub fn mapped_files(root: u32) -> BTreeSet<PathBuf> {
    let mut files = BTreeSet::new();
    for pid in process_tree(root) {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
        for line in maps.lines() {
            // `start-end perms offset dev inode path`: the path is the sixth field.
            let Some(path) = line.split_whitespace().nth(5) else {
                continue;
            };
            if path.starts_with('/') && !line.ends_with("(deleted)") {
                files.insert(PathBuf::from(path));
            }
        }
    }
    files
}

/// Asks the kernel to drop `files` from the page cache (pages other processes map stay);
/// how many files it was asked for. A benchmark calls it before starting the app, so each
/// start finds its libraries as only its own reads left them: a library read whole before
/// (installed, copied, backed up) sits in the cache in large folios, which the kernel maps
/// into a process whole, and the app's resident memory then depends on that history.
pub fn drop_from_page_cache(files: &BTreeSet<PathBuf>) -> usize {
    #[cfg(target_os = "linux")]
    {
        use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
        files
            .iter()
            .filter(|f| {
                std::fs::File::open(f).is_ok_and(|file| {
                    posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).is_ok()
                })
            })
            .count()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = files;
        0
    }
}

/// Memory of `root` and all its descendants (Linux; zero elsewhere).
pub fn tree_memory(root: u32) -> TreeMemory {
    let tree = process_tree(root);
    let mut m = TreeMemory::default();
    let mut frames: HashSet<u64> = HashSet::new();
    let mut frames_known = true;
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
        frames_known &= resident_frames(pid, &mut frames);
    }
    if frames_known && !frames.is_empty() {
        m.distinct_mib = Some(frames.len() as f64 * 4096.0 / (1024.0 * 1024.0));
    }
    m
}

/// Adds the physical frame numbers of `pid`'s resident pages to `frames`; false when they
/// cannot be read (no permission: the kernel then reports every frame as 0).
fn resident_frames(pid: u32, frames: &mut HashSet<u64>) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    const PAGE: u64 = 4096;
    const PRESENT: u64 = 1 << 63;
    const FRAME_MASK: u64 = (1 << 55) - 1;
    let Ok(smaps) = std::fs::read_to_string(format!("/proc/{pid}/smaps")) else {
        return false;
    };
    let Ok(mut pagemap) = std::fs::File::open(format!("/proc/{pid}/pagemap")) else {
        return false;
    };
    let mut range: Option<(u64, u64)> = None;
    let mut present = 0usize;
    let mut zero = 0usize;
    for line in smaps.lines() {
        if let Some((start, end)) = mapping_range(line) {
            range = Some((start, end));
            continue;
        }
        let Some((start, end)) = range else { continue };
        if !line.starts_with("Rss:") || kib_field(line, "Rss:") == 0 {
            continue;
        }
        let mut bytes = vec![0u8; ((end - start) / PAGE * 8) as usize];
        if pagemap.seek(SeekFrom::Start(start / PAGE * 8)).is_err()
            || pagemap.read_exact(&mut bytes).is_err()
        {
            continue;
        }
        for entry in bytes.chunks_exact(8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(entry);
            let v = u64::from_le_bytes(word);
            if v & PRESENT != 0 {
                present += 1;
                match v & FRAME_MASK {
                    0 => zero += 1,
                    frame => {
                        frames.insert(frame);
                    }
                }
            }
        }
    }
    present > 0 && zero < present
}

/// The address range of an smaps mapping header line (`start-end perms ...`).
fn mapping_range(line: &str) -> Option<(u64, u64)> {
    let (span, _) = line.split_once(' ')?;
    let (a, b) = span.split_once('-')?;
    Some((
        u64::from_str_radix(a, 16).ok()?,
        u64::from_str_radix(b, 16).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn measures_this_process() {
        let m = tree_memory(std::process::id());
        if cfg!(target_os = "linux") {
            assert!(m.processes >= 1 && m.rss_mib > 1.0, "{m:?}");
        }
        assert_eq!(kib_field("VmRSS:\t  2048 kB\n", "VmRSS:"), 2048);
        assert_eq!(
            mapping_range("7f00-7f10 r-xp 00000000 08:01 42 /usr/lib/libc.so.6"),
            Some((0x7f00, 0x7f10))
        );
        assert_eq!(mapping_range("Rss:  12 kB"), None);
        if let Some(distinct) = m.distinct_mib {
            // One process: its distinct pages can't exceed its RSS (+ pages faulted in between).
            assert!(distinct > 0.5 && distinct < m.rss_mib * 1.5, "{m:?}");
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn lists_mapped_files_and_drops_only_files_that_exist() {
        let me = std::fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
        let files = mapped_files(std::process::id());
        assert!(files.contains(&me), "{me:?} not in {files:?}");
        assert!(files.iter().all(|f| f.is_absolute()), "{files:?}");
        let dir = tempfile::tempdir().unwrap();
        let kept = dir.path().join("lib.so");
        std::fs::write(&kept, vec![7u8; 64 * 1024]).unwrap();
        let asked = BTreeSet::from([kept.clone(), dir.path().join("gone.so")]);
        assert_eq!(drop_from_page_cache(&asked), 1);
        // Dropping from the cache never touches the file itself.
        assert_eq!(std::fs::read(&kept).unwrap(), vec![7u8; 64 * 1024]);
    }
}
