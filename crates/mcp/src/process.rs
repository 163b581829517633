//! Stdio server processes: each in its own session and process group (no controlling
//! terminal; the whole tree can be signalled), stderr drained into a bounded [`StderrLog`], exit observed by a reaper task, and a
//! shutdown that escalates SIGTERM → SIGKILL within a bound. Dropping a [`ChildProc`] kills
//! its group, so no server outlives its owner.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use crate::stderr_log::StderrLog;

/// How a server process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    /// `exit status 3`, `killed by signal 9`, …
    pub description: String,
}

/// A running server process (the leader of its own process group).
#[derive(Debug)]
pub struct ChildProc {
    pid: u32,
    exit: watch::Receiver<Option<ExitInfo>>,
    exited: Arc<AtomicBool>,
    stderr: StderrLog,
}

/// What `spawn` hands back: the process and its stdio pipes.
pub struct Spawned {
    /// The process.
    pub child: ChildProc,
    /// Its stdout (JSON-RPC from the server).
    pub stdout: ChildStdout,
    /// Its stdin (JSON-RPC to the server).
    pub stdin: ChildStdin,
}

/// Starts `program args` in `cwd` with `env` added, in a session and process group of its own.
///
/// With `sandbox` (a project's server), it runs inside the session's sandbox: bubblewrap's
/// argv, the sandbox's explicit environment plus the server's own `env` block (never the
/// secrets Cairn was started with), the sandbox's guard kept until the process has ended.
pub fn spawn(
    program: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: &Path,
    stderr_cap: usize,
    sandbox: Option<&dyn cairn_engine::CommandWrapper>,
) -> std::io::Result<Spawned> {
    let argv: Vec<String> = std::iter::once(program.to_string())
        .chain(args.iter().cloned())
        .collect();
    let wrapped = match sandbox {
        Some(w) => w.wrap_guarded(argv, &[]),
        None => cairn_engine::WrappedCommand::plain(argv),
    };
    let Some((program, args)) = wrapped.argv.split_first() else {
        return Err(std::io::Error::other("empty command line"));
    };
    let mut cmd = Command::new(program);
    match &wrapped.env {
        Some(inside) => {
            cmd.env_clear().envs(inside.iter().cloned());
        }
        // Servers the user configured (and trusted) still get the secrets Cairn was
        // started with.
        None => {
            cmd.envs(cairn_engine::secret_env::sealed().iter().cloned());
        }
    }
    cmd.args(args)
        .envs(env)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Its own session and process group: no controlling terminal, killed as a group.
    cairn_engine::process_session::own_session_tokio(&mut cmd);
    let mut child = cmd.spawn()?;
    let pid = child
        .id()
        .ok_or_else(|| std::io::Error::other("the process exited before it could be watched"))?;
    let (Some(stdout), Some(stdin), Some(stderr)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        return Err(std::io::Error::other("the process's pipes are missing"));
    };
    let log = StderrLog::new(stderr_cap);
    tokio::spawn(log.clone().drain(stderr));
    let (tx, rx) = watch::channel(None);
    let exited = Arc::new(AtomicBool::new(false));
    {
        let exited = exited.clone();
        let guard = wrapped.guard;
        tokio::spawn(async move {
            let description = match child.wait().await {
                Ok(status) => describe(status),
                Err(e) => format!("could not be waited for ({e})"),
            };
            drop(guard);
            exited.store(true, Ordering::SeqCst);
            // The leader is gone; take anything it left behind in its group with it.
            let _ = killpg(Pid::from_raw(pid as i32), Signal::SIGKILL);
            let _ = tx.send(Some(ExitInfo { description }));
        });
    }
    Ok(Spawned {
        child: ChildProc {
            pid,
            exit: rx,
            exited,
            stderr: log,
        },
        stdout,
        stdin,
    })
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => status.to_string(),
    }
}

impl ChildProc {
    /// Process id (also the process-group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The stderr log.
    pub fn stderr(&self) -> &StderrLog {
        &self.stderr
    }

    /// How it ended, once it has.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.exit.borrow().clone()
    }

    /// Waits up to `within` for the process to end; its exit, if seen.
    pub async fn wait_exit(&self, within: Duration) -> Option<ExitInfo> {
        let mut rx = self.exit.clone();
        let _ = tokio::time::timeout(within, rx.wait_for(Option::is_some)).await;
        self.exit_info()
    }

    /// Bounded shutdown: wait `grace` for a voluntary exit (stdin is already closed),
    /// then SIGTERM the group and wait `grace` again, then SIGKILL it.
    pub async fn shutdown(&self, grace: Duration) -> ExitInfo {
        if let Some(e) = self.wait_exit(grace).await {
            return e;
        }
        self.signal(Signal::SIGTERM);
        if let Some(e) = self.wait_exit(grace).await {
            return e;
        }
        self.signal(Signal::SIGKILL);
        self.wait_exit(Duration::from_secs(2))
            .await
            .unwrap_or_else(|| ExitInfo {
                description: "did not exit after SIGKILL".into(),
            })
    }

    /// Kills the whole group now (no waiting).
    pub fn kill_now(&self) {
        self.signal(Signal::SIGKILL);
    }

    fn signal(&self, sig: Signal) {
        if !self.exited.load(Ordering::SeqCst) {
            let _ = killpg(Pid::from_raw(self.pid as i32), sig);
        }
    }
}

impl Drop for ChildProc {
    fn drop(&mut self) {
        self.kill_now();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[tokio::test]
    async fn reports_exit_and_keeps_stderr() {
        let s = spawn(
            "sh",
            &["-c".into(), "echo oops >&2; exit 4".into()],
            &BTreeMap::new(),
            Path::new("/"),
            1024,
            None,
        )
        .unwrap();
        let e = s.child.wait_exit(Duration::from_secs(5)).await.unwrap();
        assert_eq!(e.description, "exit status 4");
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(s.child.stderr().tail(100), "oops");
    }

    #[tokio::test]
    async fn shutdown_escalates_and_kills_the_group() {
        let s = spawn(
            "sh",
            &[
                "-c".into(),
                "trap '' TERM; sleep 600 & echo $! >&2; wait".into(),
            ],
            &BTreeMap::new(),
            Path::new("/"),
            1024,
            None,
        )
        .unwrap();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let grandchild: i32 = s.child.stderr().tail(100).trim().parse().unwrap();
        let e = s.child.shutdown(Duration::from_millis(200)).await;
        assert_eq!(e.description, "killed by signal 9");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!alive(grandchild), "grandchild {grandchild} survived");
    }

    fn alive(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(s) => s.split_whitespace().nth(2).is_none_or(|st| st != "Z"),
            Err(_) => false,
        }
    }
}
