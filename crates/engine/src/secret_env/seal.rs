//! Takes the secret variables out of this process's environment at start-up: a private copy
//! is kept ([`super::var`]), the names are unset, and the original strings in the initial
//! environment block (what the kernel shows as `/proc/<pid>/environ`, which `unsetenv` never
//! touches) are overwritten in place through `/proc/self/mem`. Then the process is made
//! non-dumpable, which also closes its `/proc/<pid>/environ`, `mem` and `maps` to other
//! processes of the same (non-root) user.

use std::io::{Read, Seek, SeekFrom, Write};

use super::{is_secret_name, SEALED};

/// What [`seal_process`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SealReport {
    /// The variables taken out of the environment (names only).
    pub sealed: Vec<String>,
    /// Whether their strings were wiped from the initial environment block.
    pub wiped: bool,
    /// Whether the process is now non-dumpable.
    pub non_dumpable: bool,
    /// Why something could not be done (logged by the caller).
    pub problems: Vec<String>,
}

/// The names of this process's threads (one entry per thread).
fn thread_names() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.flatten()
        .map(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .map(|c| c.trim().to_string())
                .unwrap_or_else(|_| "?".into())
        })
        .collect()
}

/// Seals the secret variables away. Call it first thing in `main`, before any thread starts
/// (it refuses to touch the environment when the process already has several threads).
pub fn seal_process() -> SealReport {
    let mut report = SealReport::default();
    // Restarted by a process that had several threads: the secrets come on stdin, and the
    // environment already lacks them.
    if let Some(found) = super::handover::take_handed_over() {
        report.sealed = found.iter().map(|(k, _)| k.clone()).collect();
        report.wiped = true;
        if SEALED.set(found).is_err() {
            report
                .problems
                .push("the environment was already sealed".into());
        }
        report.non_dumpable = non_dumpable(&mut report.problems);
        return report;
    }
    let threads = thread_names();
    if threads.len() > 1 {
        let secrets = secrets_in_env();
        if !secrets.is_empty() {
            // Editing the environment under other threads is unsound: start again without
            // the secrets instead (returns only when that failed).
            let err = super::handover::restart_without(&secrets);
            report.problems.push(format!(
                "the process already runs several threads ({}) and could not restart without \
                 its secret variables ({err}); environment left as it is",
                threads.join(", ")
            ));
        }
        report.non_dumpable = non_dumpable(&mut report.problems);
        return report;
    }
    let found = secrets_in_env();
    for (k, _) in &found {
        std::env::remove_var(k);
    }
    report.sealed = found.iter().map(|(k, _)| k.clone()).collect();
    if SEALED.set(found).is_err() {
        report
            .problems
            .push("the environment was already sealed".into());
    }
    match wipe_initial_block() {
        Ok(()) => report.wiped = true,
        Err(e) => report
            .problems
            .push(format!("cannot wipe the initial environment block: {e}")),
    }
    report.non_dumpable = non_dumpable(&mut report.problems);
    report
}

/// The secret variables set (non-empty) in the environment.
fn secrets_in_env() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (k, v) in std::env::vars_os() {
        if let (Some(k), Some(v)) = (k.to_str(), v.to_str()) {
            if is_secret_name(k) && !v.is_empty() {
                found.push((k.to_string(), v.to_string()));
            }
        }
    }
    found
}

fn non_dumpable(problems: &mut Vec<String>) -> bool {
    #[cfg(target_os = "linux")]
    {
        match nix::sys::prctl::set_dumpable(false) {
            Ok(()) => true,
            Err(e) => {
                problems.push(format!("cannot make the process non-dumpable: {e}"));
                false
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = problems;
        false
    }
}

/// `env_start` and `env_end` of this process (fields 50 and 51 of `/proc/self/stat`).
fn env_bounds() -> std::io::Result<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let bad = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "unexpected /proc/self/stat",
        )
    };
    // Fields after the command name (field 2, in parentheses) start at field 3.
    let rest = stat.rsplit_once(')').ok_or_else(bad)?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| -> std::io::Result<u64> {
        fields
            .get(n - 3)
            .and_then(|f| f.parse().ok())
            .ok_or_else(bad)
    };
    let (start, end) = (field(50)?, field(51)?);
    if start == 0 || end <= start {
        return Err(bad());
    }
    Ok((start, end))
}

/// Overwrites every `NAME=value` of a secret variable in the initial environment block with
/// NUL bytes.
fn wipe_initial_block() -> std::io::Result<()> {
    let (start, end) = env_bounds()?;
    let len = usize::try_from(end - start)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "huge environment"))?;
    let mut mem = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/proc/self/mem")?;
    let mut block = vec![0u8; len];
    mem.seek(SeekFrom::Start(start))?;
    mem.read_exact(&mut block)?;
    if !wipe_entries(&mut block) {
        return Ok(());
    }
    mem.seek(SeekFrom::Start(start))?;
    mem.write_all(&block)?;
    Ok(())
}

/// Zeroes the secret entries of a NUL-separated `NAME=value` block; whether any was found.
fn wipe_entries(block: &mut [u8]) -> bool {
    let mut changed = false;
    let mut at = 0;
    while at < block.len() {
        let end = block[at..]
            .iter()
            .position(|b| *b == 0)
            .map_or(block.len(), |p| at + p);
        let entry = &block[at..end];
        let name = entry
            .iter()
            .position(|b| *b == b'=')
            .map(|eq| String::from_utf8_lossy(&entry[..eq]).into_owned());
        if name.is_some_and(|n| is_secret_name(&n)) {
            block[at..end].fill(0);
            changed = true;
        }
        at = end + 1;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_entries_are_zeroed_and_others_kept() {
        let mut block = b"PATH=/bin\0BRAVE_API_KEY=bk-123\0HOME=/root\0GH_TOKEN=x\0".to_vec();
        let len = block.len();
        assert!(wipe_entries(&mut block));
        assert_eq!(block.len(), len);
        let text = String::from_utf8_lossy(&block).replace('\0', " ");
        assert_eq!(
            text.split_whitespace().collect::<Vec<_>>(),
            ["PATH=/bin", "HOME=/root"]
        );
        let mut plain = b"PATH=/bin\0".to_vec();
        assert!(!wipe_entries(&mut plain));
    }

    #[test]
    fn the_environment_bounds_are_readable() {
        let (start, end) = env_bounds().unwrap_or((0, 0));
        assert!(end > start && start > 0);
    }
}
