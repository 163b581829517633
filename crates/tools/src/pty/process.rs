//! One program on a pseudo-terminal (portable-pty): output collected by a reader thread into a
//! ring buffer (and broadcast to live subscribers), exit status from a waiter thread, input
//! written to the master, the whole process group stopped on `terminate` or drop.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use nix::sys::signal::Signal;
use nix::sys::wait::{waitpid, WaitStatus};
use nix::unistd::Pid;
use portable_pty::{native_pty_system, CommandBuilder, MasterPty, PtySize};
use tokio::sync::{broadcast, watch};

use crate::shell::process::signal_group;
use crate::shell::Exit;

/// How a PTY program is started.
#[derive(Debug, Clone)]
pub struct PtySpawn {
    /// Program and arguments.
    pub argv: Vec<String>,
    /// Working directory.
    pub cwd: std::path::PathBuf,
    /// Variables removed from the inherited environment (before `env` is applied).
    pub remove_env: Vec<String>,
    /// Start from an empty environment (the sandbox's explicit one is in `env`).
    pub clear_env: bool,
    /// Marks the program's processes so that stopping it also reaches those that left its
    /// session (`setsid`); `None` for the user's own terminals.
    pub marker: Option<crate::marker::RunMarker>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Terminal size.
    pub cols: u16,
    /// Terminal size.
    pub rows: u16,
    /// Raw output bytes kept (the most recent).
    pub keep_bytes: usize,
}

/// What the program has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PtyState {
    /// Output bytes received in total.
    pub bytes: u64,
    /// The output is closed (the program and everything holding the terminal are gone).
    pub eof: bool,
    /// How the program ended, once it has.
    pub exit: Option<Exit>,
}

/// Output bytes kept, addressed by absolute offset.
#[derive(Debug)]
struct Ring {
    data: VecDeque<u8>,
    /// Absolute offset of `data[0]`.
    start: u64,
    cap: usize,
}

impl Ring {
    fn push(&mut self, chunk: &[u8]) {
        self.data.extend(chunk);
        if self.data.len() > self.cap {
            let excess = self.data.len() - self.cap;
            self.data.drain(..excess);
            self.start += excess as u64;
        }
    }

    fn end(&self) -> u64 {
        self.start + self.data.len() as u64
    }

    /// Bytes from absolute offset `from` to the end, and how many wanted bytes were dropped.
    fn since(&self, from: u64) -> (Vec<u8>, u64) {
        let dropped = self.start.saturating_sub(from);
        let skip = from.saturating_sub(self.start) as usize;
        (self.data.iter().skip(skip).copied().collect(), dropped)
    }
}

/// A running (or finished) PTY program.
pub struct PtyProcess {
    pid: Option<i32>,
    marker: Option<crate::marker::RunMarker>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    ring: Arc<Mutex<Ring>>,
    state: watch::Receiver<PtyState>,
    raw: broadcast::Sender<Arc<[u8]>>,
}

impl std::fmt::Debug for PtyProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PtyProcess")
            .field("pid", &self.pid)
            .field("state", &*self.state.borrow())
            .finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why a PTY program could not start or be driven.
#[derive(Debug, thiserror::Error)]
pub enum PtyError {
    /// Opening the terminal or starting the program failed.
    #[error("cannot start `{program}` on a terminal: {message}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        message: String,
    },
    /// Writing input failed.
    #[error("cannot write to the terminal: {0}")]
    Write(String),
    /// Resizing failed.
    #[error("cannot resize the terminal: {0}")]
    Resize(String),
}

impl PtyProcess {
    /// Starts `spec.argv` on a new pseudo-terminal in its own session and process group.
    pub fn spawn(spec: &PtySpawn) -> Result<Self, PtyError> {
        let program = spec.argv.first().cloned().unwrap_or_default();
        let fail = |message: String| PtyError::Spawn {
            program: program.clone(),
            message,
        };
        if program.is_empty() {
            return Err(fail("no program given".into()));
        }
        if !Path::new(&spec.cwd).is_dir() {
            return Err(fail(format!(
                "the working directory {} does not exist",
                spec.cwd.display()
            )));
        }
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: spec.rows.max(1),
                cols: spec.cols.max(1),
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| fail(e.to_string()))?;
        let mut cmd = CommandBuilder::from_argv(spec.argv.iter().map(Into::into).collect());
        cmd.cwd(&spec.cwd);
        if spec.clear_env {
            cmd.env_clear();
        }
        for k in &spec.remove_env {
            cmd.env_remove(k);
        }
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        if let Some(m) = &spec.marker {
            let (k, v) = m.env();
            cmd.env(k, v);
        }
        let child = pair
            .slave
            .spawn_command(cmd)
            .map_err(|e| fail(e.to_string()))?;
        // The slave must close in this process, or reads never see the end of output.
        drop(pair.slave);
        let pid = child.process_id().and_then(|p| i32::try_from(p).ok());
        // The child is reaped by our waiter thread (waitpid); portable-pty's handle is not used.
        drop(child);
        let reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| fail(e.to_string()))?;
        let writer = pair.master.take_writer().map_err(|e| fail(e.to_string()))?;
        let ring = Arc::new(Mutex::new(Ring {
            data: VecDeque::new(),
            start: 0,
            cap: spec.keep_bytes.max(1024),
        }));
        let (state_tx, state) = watch::channel(PtyState::default());
        let state_tx = Arc::new(state_tx);
        let (raw, _) = broadcast::channel(256);
        spawn_reader(reader, ring.clone(), state_tx.clone(), raw.clone())
            .map_err(|e| fail(e.to_string()))?;
        if let Some(pid) = pid {
            spawn_waiter(pid, state_tx).map_err(|e| fail(e.to_string()))?;
        } else {
            state_tx.send_modify(|s| s.exit = Some(Exit::Unknown("no process id".into())));
        }
        tracing::debug!(?pid, argv = ?spec.argv, "pty: started");
        Ok(PtyProcess {
            pid,
            marker: spec.marker.clone(),
            master: Mutex::new(pair.master),
            writer: Arc::new(Mutex::new(writer)),
            ring,
            state,
            raw,
        })
    }

    /// Process id (also the process group and session id).
    pub fn pid(&self) -> Option<u32> {
        self.pid.and_then(|p| u32::try_from(p).ok())
    }

    /// Current state.
    pub fn state(&self) -> PtyState {
        self.state.borrow().clone()
    }

    /// A receiver that changes whenever output arrives or the program ends.
    pub fn watch(&self) -> watch::Receiver<PtyState> {
        self.state.clone()
    }

    /// Live raw output chunks from now on (for a terminal view).
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<[u8]>> {
        self.raw.subscribe()
    }

    /// Raw output from absolute offset `from` (0 = all that is kept), the end offset, and how
    /// many bytes before the kept part were dropped.
    pub fn output_since(&self, from: u64) -> (Vec<u8>, u64, u64) {
        let ring = lock(&self.ring);
        let (bytes, dropped) = ring.since(from);
        (bytes, ring.end(), dropped)
    }

    /// Writes input to the program (blocking briefly if the terminal's buffer is full).
    pub async fn write(&self, bytes: Vec<u8>) -> Result<(), PtyError> {
        let writer = self.writer.clone();
        let job = tokio::task::spawn_blocking(move || {
            let mut w = lock(&writer);
            w.write_all(&bytes)?;
            w.flush()
        });
        match tokio::time::timeout(Duration::from_secs(5), job).await {
            Ok(Ok(Ok(()))) => Ok(()),
            Ok(Ok(Err(e))) => Err(PtyError::Write(e.to_string())),
            Ok(Err(e)) => Err(PtyError::Write(e.to_string())),
            Err(_) => Err(PtyError::Write(
                "the program is not reading its input (write blocked for 5 s)".into(),
            )),
        }
    }

    /// Changes the terminal size.
    pub fn resize(&self, cols: u16, rows: u16) -> Result<(), PtyError> {
        lock(&self.master)
            .resize(PtySize {
                rows: rows.max(1),
                cols: cols.max(1),
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| PtyError::Resize(e.to_string()))
    }

    /// Sends `sig` to the program's process group and to every other process of its terminal
    /// session (an interactive shell puts each job in a group of its own).
    pub fn signal(&self, sig: Signal) {
        if let Some(pid) = self.pid {
            signal_group(Pid::from_raw(pid), sig);
            signal_session(pid, sig);
        }
        if let Some(m) = &self.marker {
            m.signal_all(sig);
        }
    }

    /// Stops the program and its process group: SIGHUP and SIGTERM, up to `grace` to exit,
    /// then SIGKILL; waits (up to 5 s) until it is reaped and the output is closed.
    pub async fn terminate(&self, grace: Duration) {
        if self.state().exit.is_none() {
            self.signal(Signal::SIGHUP);
            self.signal(Signal::SIGTERM);
            self.signal(Signal::SIGCONT);
            let mut rx = self.watch();
            let exited = tokio::time::timeout(grace, rx.wait_for(|s| s.exit.is_some())).await;
            if !matches!(exited, Ok(Ok(_))) {
                self.signal(Signal::SIGKILL);
            }
        }
        // Whatever the leader did, nothing of its group may keep the terminal open.
        self.signal(Signal::SIGKILL);
        let mut rx = self.watch();
        let _ = tokio::time::timeout(
            Duration::from_secs(5),
            rx.wait_for(|s| s.exit.is_some() && s.eof),
        )
        .await;
    }
}

impl Drop for PtyProcess {
    fn drop(&mut self) {
        self.signal(Signal::SIGKILL);
    }
}

/// Sends `sig` to every process whose session id is `sid` (Linux: read from `/proc`).
fn signal_session(sid: i32, sig: Signal) {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == sid {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name: state ppid pgrp session ...
        let session = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(3))
            .and_then(|s| s.parse::<i32>().ok());
        if session == Some(sid) {
            let _ = nix::sys::signal::kill(Pid::from_raw(pid), sig);
        }
    }
}

fn spawn_reader(
    mut reader: Box<dyn Read + Send>,
    ring: Arc<Mutex<Ring>>,
    state: Arc<watch::Sender<PtyState>>,
    raw: broadcast::Sender<Arc<[u8]>>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("cairn-pty-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; 16 * 1024];
            loop {
                match reader.read(&mut buf) {
                    // EIO after the program exits is the terminal's end of output.
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        lock(&ring).push(&buf[..n]);
                        let _ = raw.send(Arc::from(&buf[..n]));
                        state.send_modify(|s| s.bytes += n as u64);
                    }
                }
            }
            state.send_modify(|s| s.eof = true);
        })
        .map(|_| ())
}

fn spawn_waiter(pid: i32, state: Arc<watch::Sender<PtyState>>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("cairn-pty-wait".into())
        .spawn(move || {
            let exit = loop {
                match waitpid(Pid::from_raw(pid), None) {
                    Ok(WaitStatus::Exited(_, code)) => break Exit::Code(code),
                    Ok(WaitStatus::Signaled(_, sig, _)) => break Exit::Signal(sig as i32),
                    Ok(_) => continue,
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(e) => break Exit::Unknown(e.to_string()),
                }
            };
            state.send_modify(|s| s.exit = Some(exit));
        })
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn ring_keeps_the_tail_and_counts_drops() {
        let mut r = Ring {
            data: VecDeque::new(),
            start: 0,
            cap: 4,
        };
        r.push(b"abcdef");
        assert_eq!(r.end(), 6);
        assert_eq!(r.since(0), (b"cdef".to_vec(), 2));
        assert_eq!(r.since(5), (b"f".to_vec(), 0));
        assert_eq!(r.since(6), (Vec::new(), 0));
    }
}
