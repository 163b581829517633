//! One shell command in its own session and process group: spawn, collect output, stop the whole tree.

use std::future::Future;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use cairn_engine::ToolError;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

/// How long output is still read after SIGKILL, or after the shell exits.
const DRAIN: Duration = Duration::from_millis(250);

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exit {
    /// Exited normally with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
    /// The status could not be read.
    Unknown(String),
}

impl Exit {
    fn from_status(s: ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (s.code(), s.signal()) {
            (Some(c), _) => Exit::Code(c),
            (None, Some(sig)) => Exit::Signal(sig),
            (None, None) => Exit::Unknown(s.to_string()),
        }
    }

    /// The final line of a run_shell result: `[exit code: N]` or `[killed by signal S]`.
    pub fn footer(&self) -> String {
        match self {
            Exit::Code(c) => format!("[exit code: {c}]"),
            Exit::Signal(s) => {
                let name = Signal::try_from(*s).map(|s| s.as_str()).unwrap_or("?");
                format!("[killed by signal {s} ({name})]")
            }
            Exit::Unknown(m) => format!("[exit status unknown: {m}]"),
        }
    }
}

/// The shell used for commands: `bash` when present, else `sh` (never a login shell).
pub fn shell_program() -> &'static str {
    static SHELL: OnceLock<&'static str> = OnceLock::new();
    SHELL.get_or_init(|| {
        ["/bin/bash", "/usr/bin/bash"]
            .into_iter()
            .find(|p| Path::new(p).exists())
            .unwrap_or("/bin/sh")
    })
}

/// A running command: the shell is the leader of its own process group.
pub(crate) struct ShellProcess {
    child: Child,
    reader: Option<pipe::Receiver>,
    pgid: Option<Pid>,
    exit: Option<Exit>,
    chunk: Vec<u8>,
    /// Finds the command's processes that left its group (`setsid`).
    marker: crate::marker::RunMarker,
    /// Kept until the process is gone (sandbox mount points on the host).
    _sandbox: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl ShellProcess {
    /// Starts `command` under the shell in `cwd`, stdin from /dev/null, stdout and stderr
    /// sharing one pipe (so they interleave in arrival order).
    /// `host` supplies the session's sandbox wrapper and vault environment; `sandboxed` false
    /// (an approved `sandbox: false` call) runs it outside the sandbox.
    pub(crate) fn spawn(
        command: &str,
        cwd: &Path,
        host: &cairn_engine::ToolHost,
        sandboxed: bool,
    ) -> Result<Self, ToolError> {
        if !cwd.is_dir() {
            return Err(ToolError::Failed(format!(
                "the workspace directory {} does not exist",
                cwd.display()
            )));
        }
        let (reader, writer) =
            std::io::pipe().map_err(|e| ToolError::io("cannot create an output pipe", e))?;
        let writer2 = writer
            .try_clone()
            .map_err(|e| ToolError::io("cannot create an output pipe", e))?;
        let argv = vec![
            shell_program().to_string(),
            "-c".to_string(),
            command.to_string(),
        ];
        let wrapped = if sandboxed {
            host.wrap_command(argv)
        } else {
            cairn_engine::WrappedCommand::plain(argv)
        };
        let Some((program, args)) = wrapped.argv.split_first() else {
            return Err(ToolError::Failed("empty command line".into()));
        };
        let marker = crate::marker::RunMarker::new();
        let mut cmd = Command::new(program);
        match &wrapped.env {
            // The sandbox's explicit environment: nothing of Cairn's own unless named.
            Some(env) => {
                cmd.env_clear().envs(env.iter().cloned());
            }
            None => {
                for name in host.removed_env() {
                    cmd.env_remove(name);
                }
            }
        }
        cmd.args(args)
            .envs(host.vault_env())
            .envs([marker.env()])
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(writer2)
            .env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .env("GIT_TERMINAL_PROMPT", "0")
            .kill_on_drop(true);
        // A session of its own (also its own process group): no controlling terminal to
        // push input into or read keystrokes from, sandboxed or not.
        cairn_engine::process_session::own_session_tokio(&mut cmd);
        let spawned = cmd.spawn();
        // The command owns the parent's copies of the pipe's write end: drop it now, or the
        // reader would never see end-of-file.
        drop(cmd);
        let child =
            spawned.map_err(|e| ToolError::io(format!("cannot start {}", shell_program()), e))?;
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let reader = pipe::Receiver::from_owned_fd(OwnedFd::from(reader))
            .map_err(|e| ToolError::io("cannot read the command's output", e))?;
        tracing::debug!(pid = ?pgid, command, "run_shell: started");
        Ok(ShellProcess {
            child,
            reader: Some(reader),
            pgid,
            exit: None,
            chunk: vec![0; 64 * 1024],
            marker,
            _sandbox: wrapped.guard,
        })
    }

    /// Process id of the shell (also the process group id).
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pgid.and_then(|p| u32::try_from(p.as_raw()).ok())
    }

    /// How the shell ended, once known.
    pub(crate) fn exit(&self) -> Option<&Exit> {
        self.exit.as_ref()
    }

    /// Feeds output to `sink` until the shell has exited (and, with `need_eof`, the output
    /// pipe is closed), or until `stop` resolves. Returns `stop`'s value if it fired first.
    pub(crate) async fn run_until<T>(
        &mut self,
        sink: &mut (dyn FnMut(&[u8]) + Send),
        need_eof: bool,
        stop: impl Future<Output = T>,
    ) -> Option<T> {
        tokio::pin!(stop);
        loop {
            let done = self.exit.is_some() && (!need_eof || self.reader.is_none());
            if done {
                return None;
            }
            let reading = self.reader.is_some();
            let waiting = self.exit.is_none();
            // `stop` goes first: a command that floods output must not starve the timeout
            // or the cancellation.
            tokio::select! {
                biased;
                v = &mut stop => return Some(v),
                r = read_some(self.reader.as_mut(), &mut self.chunk), if reading => match r {
                    Ok(0) => self.reader = None,
                    Ok(n) => sink(&self.chunk[..n]),
                    Err(e) => {
                        tracing::debug!(error = %e, "run_shell: output pipe failed");
                        self.reader = None;
                    }
                },
                s = self.child.wait(), if waiting => {
                    self.exit = Some(match s {
                        Ok(s) => Exit::from_status(s),
                        Err(e) => Exit::Unknown(e.to_string()),
                    });
                }
            }
        }
    }

    /// After the shell exited: reads what is left for a moment. Returns false when some
    /// process it left behind still holds the output open.
    pub(crate) async fn drain(&mut self, sink: &mut (dyn FnMut(&[u8]) + Send)) -> bool {
        self.run_until(sink, true, tokio::time::sleep(DRAIN))
            .await
            .is_none()
    }

    /// Stops the whole process group: SIGTERM, up to `grace` to exit, then SIGKILL; reaps the
    /// shell and reads the last output.
    pub(crate) async fn terminate(
        &mut self,
        grace: Duration,
        sink: &mut (dyn FnMut(&[u8]) + Send),
    ) {
        self.signal(Signal::SIGTERM);
        // A stopped process (e.g. SIGTTIN from reading the terminal) only sees SIGTERM once
        // it continues.
        self.signal(Signal::SIGCONT);
        let _ = self.run_until(sink, true, tokio::time::sleep(grace)).await;
        self.signal(Signal::SIGKILL);
        if self.exit.is_none() {
            let waited = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
            self.exit = Some(match waited {
                Ok(Ok(s)) => Exit::from_status(s),
                Ok(Err(e)) => Exit::Unknown(e.to_string()),
                Err(_) => Exit::Unknown("the shell did not exit after SIGKILL".into()),
            });
        }
        let _ = self.drain(sink).await;
        tracing::debug!(pid = ?self.pgid, exit = ?self.exit, "run_shell: terminated");
    }

    /// Sends `sig` to every process of the group, and to the command's processes that left
    /// it (errors such as "no such group" are ignored).
    pub(crate) fn signal(&self, sig: Signal) {
        if let Some(pgid) = self.pgid {
            signal_group(pgid, sig);
        }
        self.marker.signal_all(sig);
    }
}

impl Drop for ShellProcess {
    fn drop(&mut self) {
        // Whatever happened (the future was dropped, the command finished and left children
        // behind), nothing of the group survives the call.
        self.signal(Signal::SIGKILL);
    }
}

/// Sends `sig` to the process group `pgid`, ignoring a group that no longer exists.
pub(crate) fn signal_group(pgid: Pid, sig: Signal) {
    if let Err(e) = killpg(pgid, sig) {
        if e != nix::errno::Errno::ESRCH {
            tracing::warn!(pgid = pgid.as_raw(), ?sig, error = %e, "cannot signal process group");
        }
    }
}

async fn read_some(reader: Option<&mut pipe::Receiver>, buf: &mut [u8]) -> std::io::Result<usize> {
    match reader {
        Some(r) => r.read(buf).await,
        None => std::future::pending().await,
    }
}
