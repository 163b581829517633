//! The terminal manager: the user's terminals (interactive shells on pseudo-terminals), scoped
//! per project. The desktop terminal panel opens, writes to, resizes and watches them; the
//! agent reads them through [`TerminalSource`]. Every lookup is by (project, terminal id), so
//! one project can never see or touch another project's terminals.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use tokio::sync::broadcast;

use crate::pty::{ansi, PtyProcess, PtySpawn};
use crate::shell::shell_program;

/// Raw output kept per terminal (what a re-attached view replays, what the agent can read).
pub const TERMINAL_KEEP_BYTES: usize = 2 * 1024 * 1024;
/// Grace between SIGHUP/SIGTERM and SIGKILL when a terminal is closed.
const CLOSE_GRACE: Duration = Duration::from_millis(500);

/// How to open a terminal.
#[derive(Debug, Clone)]
pub struct TerminalOptions {
    /// Working directory (the project's folder, usually).
    pub cwd: PathBuf,
    /// Program and arguments; empty = the user's interactive shell.
    pub argv: Vec<String>,
    /// Title shown in the panel and to the agent; default: the program name.
    pub title: Option<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Size in columns.
    pub cols: u16,
    /// Size in rows.
    pub rows: u16,
}

impl TerminalOptions {
    /// An interactive shell in `cwd`, 120×32.
    pub fn shell(cwd: impl Into<PathBuf>) -> Self {
        TerminalOptions {
            cwd: cwd.into(),
            argv: Vec::new(),
            title: None,
            env: Vec::new(),
            cols: 120,
            rows: 32,
        }
    }
}

/// A terminal as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalInfo {
    /// Id, unique across projects (`term-3`).
    pub id: String,
    /// Title.
    pub title: String,
    /// Working directory it was opened in.
    pub cwd: PathBuf,
    /// Process id of its program.
    pub pid: Option<u32>,
    /// Whether its program still runs.
    pub running: bool,
    /// How its program ended (`[exit code: 0]`), once it has.
    pub exit: Option<String>,
    /// When it was opened.
    pub opened_at: SystemTime,
}

/// Why a terminal operation failed.
#[derive(Debug, thiserror::Error)]
pub enum TerminalError {
    /// No such terminal in this project (also for another project's terminal).
    #[error("no terminal `{0}` in this project")]
    NotFound(String),
    /// Starting or driving the terminal failed.
    #[error(transparent)]
    Pty(#[from] crate::pty::PtyError),
}

/// Read access to a project's terminals: what the agent's terminal tools need.
pub trait TerminalSource: Send + Sync {
    /// The project's terminals, oldest first.
    fn list(&self, project_id: &str) -> Vec<TerminalInfo>;
    /// The last `tail_lines` lines a terminal shows, as plain text (escape sequences removed).
    fn read(
        &self,
        project_id: &str,
        terminal_id: &str,
        tail_lines: usize,
    ) -> Result<String, TerminalError>;
}

struct Terminal {
    title: String,
    cwd: PathBuf,
    opened_at: SystemTime,
    proc: PtyProcess,
}

impl Terminal {
    fn info(&self, id: u64) -> TerminalInfo {
        let exit = self.proc.state().exit;
        TerminalInfo {
            id: format!("term-{id}"),
            title: self.title.clone(),
            cwd: self.cwd.clone(),
            pid: self.proc.pid(),
            running: exit.is_none(),
            exit: exit.map(|e| e.footer()),
            opened_at: self.opened_at,
        }
    }
}

/// Terminals of every project; closing the manager (drop) kills them all.
#[derive(Default)]
pub struct TerminalManager {
    projects: Mutex<BTreeMap<String, BTreeMap<u64, Arc<Terminal>>>>,
    next: AtomicU64,
}

impl std::fmt::Debug for TerminalManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalManager")
            .field("projects", &self.lock().len())
            .finish()
    }
}

fn parse_id(id: &str) -> Option<u64> {
    id.trim().strip_prefix("term-")?.parse().ok()
}

impl TerminalManager {
    /// A manager with no terminals.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, BTreeMap<u64, Arc<Terminal>>>> {
        self.projects.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, project_id: &str, id: &str) -> Result<Arc<Terminal>, TerminalError> {
        parse_id(id)
            .and_then(|n| self.lock().get(project_id)?.get(&n).cloned())
            .ok_or_else(|| TerminalError::NotFound(id.to_string()))
    }

    /// Opens a terminal for `project_id`.
    pub fn open(
        &self,
        project_id: &str,
        opts: TerminalOptions,
    ) -> Result<TerminalInfo, TerminalError> {
        let argv = if opts.argv.is_empty() {
            vec![shell_program().to_string()]
        } else {
            opts.argv.clone()
        };
        let mut env = vec![
            ("TERM".to_string(), "xterm-256color".to_string()),
            ("COLORTERM".to_string(), "truecolor".to_string()),
        ];
        env.extend(opts.env.iter().cloned());
        let proc = PtyProcess::spawn(&PtySpawn {
            argv: argv.clone(),
            cwd: opts.cwd.clone(),
            // The user's own terminal: their environment as it is.
            remove_env: Vec::new(),
            clear_env: false,
            marker: None,
            env,
            cols: opts.cols,
            rows: opts.rows,
            keep_bytes: TERMINAL_KEEP_BYTES,
        })?;
        let title = opts.title.clone().unwrap_or_else(|| {
            argv[0]
                .rsplit('/')
                .next()
                .unwrap_or(argv[0].as_str())
                .to_string()
        });
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let term = Arc::new(Terminal {
            title,
            cwd: opts.cwd,
            opened_at: SystemTime::now(),
            proc,
        });
        let info = term.info(n);
        self.lock()
            .entry(project_id.to_string())
            .or_default()
            .insert(n, term);
        tracing::debug!(project_id, id = %info.id, "terminal opened");
        Ok(info)
    }

    /// Types `bytes` into a terminal.
    pub async fn write(
        &self,
        project_id: &str,
        id: &str,
        bytes: &[u8],
    ) -> Result<(), TerminalError> {
        let term = self.get(project_id, id)?;
        term.proc.write(bytes.to_vec()).await?;
        Ok(())
    }

    /// Resizes a terminal.
    pub fn resize(
        &self,
        project_id: &str,
        id: &str,
        cols: u16,
        rows: u16,
    ) -> Result<(), TerminalError> {
        self.get(project_id, id)?.proc.resize(cols, rows)?;
        Ok(())
    }

    /// The raw output kept so far (to replay into a re-attached view).
    pub fn raw_output(&self, project_id: &str, id: &str) -> Result<Vec<u8>, TerminalError> {
        Ok(self.get(project_id, id)?.proc.output_since(0).0)
    }

    /// Live raw output chunks from now on.
    pub fn subscribe(
        &self,
        project_id: &str,
        id: &str,
    ) -> Result<broadcast::Receiver<Arc<[u8]>>, TerminalError> {
        Ok(self.get(project_id, id)?.proc.subscribe())
    }

    /// Closes a terminal: its program and process group are stopped.
    pub async fn close(&self, project_id: &str, id: &str) -> Result<(), TerminalError> {
        let term = self.get(project_id, id)?;
        if let Some(n) = parse_id(id) {
            if let Some(p) = self.lock().get_mut(project_id) {
                p.remove(&n);
            }
        }
        term.proc.terminate(CLOSE_GRACE).await;
        Ok(())
    }

    /// Closes every terminal of a project (the project was closed).
    pub async fn close_project(&self, project_id: &str) {
        let terms: Vec<Arc<Terminal>> = self
            .lock()
            .remove(project_id)
            .map(|m| m.into_values().collect())
            .unwrap_or_default();
        for t in terms {
            t.proc.terminate(CLOSE_GRACE).await;
        }
    }
}

impl TerminalSource for TerminalManager {
    fn list(&self, project_id: &str) -> Vec<TerminalInfo> {
        self.lock()
            .get(project_id)
            .map(|m| m.iter().map(|(n, t)| t.info(*n)).collect())
            .unwrap_or_default()
    }

    fn read(
        &self,
        project_id: &str,
        terminal_id: &str,
        tail_lines: usize,
    ) -> Result<String, TerminalError> {
        let term = self.get(project_id, terminal_id)?;
        let (raw, _, _) = term.proc.output_since(0);
        Ok(ansi::tail(&ansi::clean(&raw), tail_lines))
    }
}
