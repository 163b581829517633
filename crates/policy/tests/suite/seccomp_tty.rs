//! The seccomp filter inside real bubblewrap: a sandboxed program that owns a terminal (its
//! controlling terminal, as a PTY command does) cannot push input into it (`TIOCSTI`) or use
//! the console's paste (`TIOCLINUX`): both fail with `EPERM`. The same program without the
//! filter gets anything but `EPERM` (success, or `EIO` where the kernel turned TIOCSTI
//! off), so the filter is what refuses it.

use cairn_policy::sandbox::SandboxSpec;
use cairn_policy::sandbox_seccomp::write_filter;

use crate::common::{bwrap_or_skip, run_spec};

/// Takes a new terminal as its controlling terminal, then tries both requests; prints
/// `ran`, then each request's errno (0 = it worked).
const PROBE: &str = r#"
import errno, fcntl, os, pty, termios
print("ran")
m, s = os.openpty()
name = os.ttyname(s)
if os.fork() == 0:
    os.setsid()
    fd = os.open(name, os.O_RDWR)  # becomes the controlling terminal
    out = []
    for req, arg in ((termios.TIOCSTI, b"y"), (0x541C, b"\x02")):
        try:
            fcntl.ioctl(fd, req, arg)
            out.append("0")
        except OSError as e:
            out.append(str(e.errno))
    print(" ".join(out), flush=True)
    os._exit(0)
os.wait()
"#;

fn probe(spec: &SandboxSpec, bwrap: &std::path::Path) -> Vec<i32> {
    let script = format!("python3 -c '{}'", PROBE.replace('\'', "'\\''"));
    let (out, err) = run_spec(bwrap, spec, &[], &script);
    assert!(out.starts_with("ran"), "the probe did not run: {out} {err}");
    out.lines()
        .nth(1)
        .unwrap_or_else(|| panic!("no result: {out} {err}"))
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect()
}

#[test]
fn tiocsti_and_tioclinux_are_refused_inside_the_sandbox() {
    let Some(bwrap) = bwrap_or_skip() else { return };
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut spec = SandboxSpec::for_workspace(&ws);
    let without = probe(&spec, &bwrap);
    assert_ne!(without[0], libc::EPERM, "EPERM already without the filter");
    spec.seccomp = Some(write_filter(&d.path().join("state")).unwrap());
    assert_eq!(probe(&spec, &bwrap), vec![libc::EPERM, libc::EPERM]);
}
