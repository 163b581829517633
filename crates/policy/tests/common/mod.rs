//! Helpers shared by the tests that run real bubblewrap.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_policy::sandbox::{bwrap_guarded, bwrap_path, bwrap_works, SandboxSpec};

/// Bubblewrap when it can run here; `None` (after a skip message) otherwise, which is a
/// failure when `CAIRN_SANDBOX_TEST=1` (CI).
pub fn bwrap_or_skip() -> Option<PathBuf> {
    let found = bwrap_path().filter(|_| bwrap_works());
    if found.is_none() {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        eprintln!("bubblewrap cannot run here; skipped");
    }
    found
}

/// Runs `sh -c script` sandboxed in `ws` with the default spec; its stdout (the mount points
/// are cleaned up before it returns).
pub fn run_sandboxed(bwrap: &Path, ws: &Path, script: &str) -> String {
    run_spec(bwrap, &SandboxSpec::for_workspace(ws), &[], script).0
}

/// Runs `sh -c script` under `spec` with `extra_writable` folders; its stdout and stderr.
pub fn run_spec(
    bwrap: &Path,
    spec: &SandboxSpec,
    extra_writable: &[PathBuf],
    script: &str,
) -> (String, String) {
    let (argv, guard) = bwrap_guarded(
        bwrap,
        spec,
        extra_writable,
        &["sh".into(), "-c".into(), script.into()],
        None,
    );
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    drop(guard);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}
