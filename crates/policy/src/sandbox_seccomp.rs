//! The seccomp filter every sandboxed command runs under: `ioctl(TIOCSTI)` (push bytes into
//! a terminal's input queue, to answer the next prompt) and `ioctl(TIOCLINUX)` (the Linux
//! console's selection paste, the same trick) fail with `EPERM`. Defence in depth: sandboxed
//! commands also run in a session of their own, with no controlling terminal to push into.
//!
//! The filter is built here with `seccompiler` (pure Rust) and handed to bubblewrap as a
//! file descriptor (`--seccomp FD`): [`seccomp_prefix`] runs bubblewrap through
//! `/bin/sh -c 'exec "$@" 9<"$0"' FILTER bwrap …`, so the filter file is opened on fd 9 of
//! the very process that becomes bubblewrap, whatever starts it (tokio, a PTY that closes
//! every other descriptor). Bubblewrap reads the program, installs it with
//! `PR_SET_NO_NEW_PRIVS` on the sandboxed process and closes the descriptor.
//!
//! A program of another architecture than the host's (a 32-bit binary on x86_64) is killed
//! at its first system call: the filter checks the architecture first.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// The descriptor bubblewrap reads the filter from (a single digit: every `sh` accepts it).
pub const SECCOMP_FD: &str = "9";

/// `TIOCSTI`: push a byte into a terminal's input queue.
const TIOCSTI: u64 = 0x5412;
/// `TIOCLINUX`: the Linux console's subcodes, among them paste of the selection.
const TIOCLINUX: u64 = 0x541C;
/// The x32 ABI's `ioctl` on x86_64 (`__X32_SYSCALL_BIT | 514`): same audit architecture,
/// another number, so it gets the same rule.
#[cfg(target_arch = "x86_64")]
const X32_IOCTL: i64 = 0x4000_0000 + 514;

/// Why the filter could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    /// seccomp filters are not built for this architecture.
    #[error("no seccomp filter for the {0} architecture")]
    Arch(String),
    /// Building the BPF program failed.
    #[error("cannot build the seccomp filter: {0}")]
    Build(String),
    /// Writing the filter file failed.
    #[error("cannot write the seccomp filter to {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The BPF program refusing `TIOCSTI` and `TIOCLINUX` with `EPERM`, everything else allowed.
pub fn tty_filter() -> Result<BpfProgram, SeccompError> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|_| SeccompError::Arch(std::env::consts::ARCH.to_string()))?;
    let build = |e: seccompiler::BackendError| SeccompError::Build(e.to_string());
    let rules: Vec<SeccompRule> = [TIOCSTI, TIOCLINUX]
        .into_iter()
        .map(|request| {
            // The kernel reads the request as a 32-bit `unsigned int`: compare the low word
            // only, or setting the high bits would slip past.
            let cond = SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
                .map_err(build)?;
            SeccompRule::new(vec![cond]).map_err(build)
        })
        .collect::<Result<_, _>>()?;
    let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    map.insert(libc::SYS_ioctl, rules.clone());
    #[cfg(target_arch = "x86_64")]
    map.insert(X32_IOCTL, rules);
    let filter = SeccompFilter::new(
        map,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(build)?;
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| SeccompError::Build(e.to_string()))
}

/// The program as the bytes bubblewrap reads (`struct sock_filter` in native byte order).
pub fn program_bytes(program: &BpfProgram) -> Vec<u8> {
    let mut out = Vec::with_capacity(program.len() * 8);
    for ins in program {
        out.extend(ins.code.to_ne_bytes());
        out.push(ins.jt);
        out.push(ins.jf);
        out.extend(ins.k.to_ne_bytes());
    }
    out
}

/// Writes the filter to `dir/sandbox-seccomp.bpf` (atomically: a command starting meanwhile
/// never reads half a program) and returns the file.
pub fn write_filter(dir: &Path) -> Result<PathBuf, SeccompError> {
    let bytes = program_bytes(&tty_filter()?);
    let path = dir.join("sandbox-seccomp.bpf");
    let fail = |source: std::io::Error| SeccompError::Write {
        path: path.clone(),
        source,
    };
    if std::fs::read(&path).is_ok_and(|old| old == bytes) {
        return Ok(path);
    }
    std::fs::create_dir_all(dir).map_err(fail)?;
    let tmp = dir.join(format!("sandbox-seccomp.bpf.{}.tmp", std::process::id()));
    let mut f = std::fs::File::create(&tmp).map_err(fail)?;
    f.write_all(&bytes).map_err(fail)?;
    f.sync_all().map_err(fail)?;
    std::fs::rename(&tmp, &path).map_err(fail)?;
    Ok(path)
}

/// The argv prefix that opens `filter` on fd [`SECCOMP_FD`] and then becomes the program
/// that follows (bubblewrap, given `--seccomp 9`).
pub fn seccomp_prefix(filter: &Path) -> Vec<String> {
    vec![
        "/bin/sh".into(),
        "-c".into(),
        format!("exec \"$@\" {SECCOMP_FD}<\"$0\""),
        filter.display().to_string(),
    ]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_filter_checks_the_architecture_and_both_requests() {
        let p = tty_filter().unwrap();
        let ks: Vec<u32> = p.iter().map(|i| i.k).collect();
        assert!(ks.contains(&(TIOCSTI as u32)));
        assert!(ks.contains(&(TIOCLINUX as u32)));
        assert_eq!(program_bytes(&p).len(), p.len() * 8);
        let d = tempfile::tempdir().unwrap();
        let f = write_filter(d.path()).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), program_bytes(&p));
        assert_eq!(seccomp_prefix(&f)[3], f.display().to_string());
    }
}
