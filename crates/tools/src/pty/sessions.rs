//! Long-running command sessions of one agent session: programs on a pseudo-terminal that the
//! model reads incrementally and writes to. Every session is killed when the registry is
//! dropped (the agent session ends).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cairn_engine::{ToolContext, ToolError};
use tokio_util::sync::CancellationToken;

use super::ansi;
use super::process::{PtyProcess, PtySpawn, PtyState};
use crate::shell::shell_program;

/// Command sessions that may run at once.
pub const MAX_SESSIONS: usize = 8;
/// Raw output kept per session.
const KEEP_BYTES: usize = 2 * 1024 * 1024;
/// Terminal size of a command session.
const COLS: u16 = 200;
const ROWS: u16 = 50;
/// A call returns once output has been quiet this long (the program is probably waiting).
pub(crate) const IDLE_RETURN: Duration = Duration::from_millis(1000);
/// After the program exits, how long to wait for the rest of its output.
const EXIT_DRAIN: Duration = Duration::from_millis(300);

/// Live raw output chunks of a session, for a terminal view.
pub type LiveOutput = tokio::sync::broadcast::Receiver<Arc<[u8]>>;

/// A session as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Id handed to the model (`cmd-1`, ...).
    pub id: String,
    /// The command line.
    pub command: String,
    /// Process id of the session's shell.
    pub pid: Option<u32>,
    /// Whether it still runs.
    pub running: bool,
}

/// One command session.
pub(crate) struct Session {
    pub command: String,
    pub proc: PtyProcess,
    pub started: Instant,
    /// Offset of the first output byte the model has not seen; one reader at a time.
    cursor: tokio::sync::Mutex<u64>,
    /// Started outside the session's sandbox (an approved `sandbox: false` call).
    pub unsandboxed: bool,
    /// Kept while the session is known (sandbox mount points on the host, its network
    /// proxy).
    _sandbox: Option<Box<dyn std::any::Any + Send + Sync>>,
    /// The host of the call that started it: where its network proxy's refusals land.
    pub net: cairn_engine::ToolHost,
}

/// What one call saw.
pub(crate) struct Collected {
    /// Output since the previous call, as plain text.
    pub text: String,
    /// Output bytes that were dropped before the model could read them.
    pub dropped: u64,
    /// State at the end of the call.
    pub state: PtyState,
    /// How long the program had printed nothing when the call returned.
    pub quiet: Duration,
}

/// The command sessions of one agent session.
#[derive(Default)]
pub struct CommandSessions {
    map: Mutex<BTreeMap<u64, Arc<Session>>>,
    next: AtomicU64,
}

impl std::fmt::Debug for CommandSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandSessions")
            .field("sessions", &self.lock().len())
            .finish()
    }
}

impl CommandSessions {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<Session>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every session, oldest first.
    pub fn list(&self) -> Vec<SessionInfo> {
        self.lock()
            .iter()
            .map(|(n, s)| SessionInfo {
                id: format!("cmd-{n}"),
                command: s.command.clone(),
                pid: s.proc.pid(),
                running: s.proc.state().exit.is_none(),
            })
            .collect()
    }

    /// What session `id` printed so far (raw) and its live output from now on: for a terminal
    /// view where the user takes the session over. `None` when there is no such session.
    pub fn attach(&self, id: &str) -> Option<(Vec<u8>, LiveOutput)> {
        let session = parse_id(id).and_then(|n| self.lock().get(&n).cloned())?;
        let live = session.proc.subscribe();
        Some((session.proc.output_since(0).0, live))
    }

    /// Types `bytes` into session `id` (the user answering the program's prompt).
    pub async fn write_input(&self, id: &str, bytes: Vec<u8>) -> Result<(), String> {
        let session = parse_id(id)
            .and_then(|n| self.lock().get(&n).cloned())
            .ok_or_else(|| format!("no command session `{id}`"))?;
        session.proc.write(bytes).await.map_err(|e| e.to_string())
    }

    /// Starts `command` under the shell on a terminal in `cwd`, inside the session's sandbox
    /// unless `sandboxed` is false.
    pub(crate) fn start(
        &self,
        command: &str,
        cwd: &Path,
        host: &cairn_engine::ToolHost,
        sandboxed: bool,
    ) -> Result<(String, Arc<Session>), ToolError> {
        let running = self
            .lock()
            .values()
            .filter(|s| s.proc.state().exit.is_none())
            .count();
        if running >= MAX_SESSIONS {
            return Err(ToolError::Failed(format!(
                "{running} command sessions are already running; stop one with input_command \
                 {{\"kill\": true}} first. Running: {}",
                self.describe_known()
            )));
        }
        let argv = vec![shell_program().into(), "-c".into(), command.into()];
        let wrapped = if sandboxed {
            host.wrap_command(argv)
        } else {
            cairn_engine::WrappedCommand::plain(argv)
        };
        let proc = PtyProcess::spawn(&PtySpawn {
            argv: wrapped.argv,
            cwd: cwd.to_path_buf(),
            remove_env: host.removed_env(),
            clear_env: wrapped.env.is_some(),
            marker: Some(crate::marker::RunMarker::new()),
            env: wrapped
                .env
                .clone()
                .unwrap_or_default()
                .into_iter()
                .chain([
                    ("TERM".to_string(), "dumb".to_string()),
                    ("PAGER".into(), "cat".into()),
                    ("GIT_PAGER".into(), "cat".into()),
                    ("NO_COLOR".into(), "1".into()),
                ])
                .chain(host.vault_env())
                .collect(),
            cols: COLS,
            rows: ROWS,
            keep_bytes: KEEP_BYTES,
        })
        .map_err(|e| ToolError::Failed(e.to_string()))?;
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let session = Arc::new(Session {
            command: command.to_string(),
            proc,
            started: Instant::now(),
            cursor: tokio::sync::Mutex::new(0),
            unsandboxed: !sandboxed && host.sandboxed(),
            _sandbox: wrapped.guard,
            net: host.clone(),
        });
        self.lock().insert(n, session.clone());
        Ok((format!("cmd-{n}"), session))
    }

    /// The session called `id`.
    pub(crate) fn get(&self, id: &str) -> Result<Arc<Session>, ToolError> {
        let found = parse_id(id).and_then(|n| self.lock().get(&n).cloned());
        found.ok_or_else(|| {
            ToolError::NotFound(format!(
                "no command session `{id}` (sessions: {}); sessions end when their program exits",
                self.describe_known()
            ))
        })
    }

    /// Forgets a session (its program has ended and its output was read, or it was killed).
    pub(crate) fn remove(&self, id: &str) {
        if let Some(n) = parse_id(id) {
            self.lock().remove(&n);
        }
    }

    fn describe_known(&self) -> String {
        let list = self.list();
        if list.is_empty() {
            return "none".into();
        }
        list.iter()
            .map(|s| {
                format!(
                    "{} ({}, `{}`)",
                    s.id,
                    if s.running { "running" } else { "ended" },
                    s.command
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn parse_id(id: &str) -> Option<u64> {
    id.trim().strip_prefix("cmd-")?.parse().ok()
}

impl Session {
    /// Waits up to `yield_for` for output, streaming it as partial tool output, and returns
    /// everything new. Returns early when the program exits or its output goes quiet.
    /// `None` when `cancel` fired.
    pub(crate) async fn collect(
        &self,
        ctx: &ToolContext,
        yield_for: Duration,
        cancel: &CancellationToken,
    ) -> Option<Collected> {
        let mut cursor = self.cursor.lock().await;
        let start = *cursor;
        let mut emitted = start;
        let mut rx = self.proc.watch();
        let called = Instant::now();
        let deadline = called + yield_for;
        let mut last_output: Option<Instant> = None;
        let mut exited_at: Option<Instant> = None;
        // Set once both reader and waiter threads are gone (no more changes will come).
        let mut closed = false;
        loop {
            let state = rx.borrow_and_update().clone();
            if state.bytes > emitted {
                let (raw, end, _) = self.proc.output_since(emitted);
                emitted = end;
                last_output = Some(Instant::now());
                let text = ansi::clean(&raw);
                if !text.trim().is_empty() {
                    ctx.host.output(text).await;
                }
            }
            let now = Instant::now();
            if state.exit.is_some() {
                let at = *exited_at.get_or_insert(now);
                if state.eof || now >= at + EXIT_DRAIN {
                    break;
                }
            }
            if now >= deadline {
                break;
            }
            if last_output.is_some_and(|t| now >= t + IDLE_RETURN) && state.exit.is_none() {
                break;
            }
            let mut wake = deadline;
            if let Some(t) = last_output {
                wake = wake.min(t + IDLE_RETURN);
            }
            if let Some(t) = exited_at {
                wake = wake.min(t + EXIT_DRAIN);
            }
            tokio::select! {
                _ = cancel.cancelled() => return None,
                r = rx.changed(), if !closed => closed = r.is_err(),
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
        }
        let (raw, end, dropped) = self.proc.output_since(start);
        *cursor = end;
        Some(Collected {
            text: ansi::clean(&raw),
            dropped,
            state: self.proc.state(),
            quiet: last_output.unwrap_or(called).elapsed(),
        })
    }
}
