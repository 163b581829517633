//! The workspace's side-effect windows, shared by every Cairn process using the store: when
//! each session's commands ran and which paths changed meanwhile (between the snapshots
//! around them), and which paths its file tools wrote. One small JSON file per
//! window under `<store>/windows/`, written by rename while the store lock is held. A window
//! whose process died is closed when next read, at its last heartbeat: the owner touches its
//! open windows every [`HEARTBEAT`] while their command runs.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use crate::error::{io, Result};
use crate::store::{read_json, write_json_with};

/// How often an open window's owner touches it (so a crash bounds it).
pub(crate) const HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(2);

/// How long closed windows are kept (turns longer than this lose their attribution).
const KEEP_MS: i64 = 48 * 3600 * 1000;

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// What ran in a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WindowKind {
    /// A command (or a tool that may change anything): whatever changed meanwhile may be it.
    Command,
    /// A file tool: it wrote exactly `paths`.
    File,
}

/// One side effect of one session, open while it runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Window {
    pub session: String,
    pub pid: u32,
    /// The process's start time (clock ticks since boot), against pid reuse.
    #[serde(default)]
    pub pid_start: Option<u64>,
    pub kind: WindowKind,
    pub opened_ms: i64,
    #[serde(default)]
    pub closed_ms: Option<i64>,
    /// Paths a file tool wrote, or that changed during a command (workspace-relative);
    /// `None` while open or when unknown (a crashed process's): then it may be any path.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
}

impl Window {
    /// Whether `path` may be among its changes.
    pub fn may_have_changed(&self, path: &str) -> bool {
        self.paths.as_ref().is_none_or(|ps| {
            ps.iter()
                .any(|p| p.trim_start_matches("./").trim_end_matches('/') == path)
        })
    }

    /// Whether it was open at some time in `[from, to]`.
    pub fn overlaps(&self, from: i64, to: i64) -> bool {
        self.opened_ms <= to && self.closed_ms.unwrap_or(i64::MAX) >= from
    }
}

/// The windows folder of a store.
pub(crate) struct Registry {
    dir: PathBuf,
}

/// The start time of process `pid` (field 22 of `/proc/PID/stat`), if it runs.
fn proc_start(pid: u32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces: fields after it follow the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn alive(w: &Window) -> bool {
    match proc_start(w.pid) {
        None => false,
        Some(start) => w.pid_start.is_none_or(|s| s == start),
    }
}

impl Registry {
    /// The registry of the store at `root`.
    pub fn new(root: &Path) -> Registry {
        Registry {
            dir: root.join("windows"),
        }
    }

    /// Opens a window for `session` (now); returns its id.
    pub fn open(&self, session: &str, kind: WindowKind) -> Result<String> {
        self.write_new(session, kind, now_ms(), None, None)
    }

    fn write_new(
        &self,
        session: &str,
        kind: WindowKind,
        opened_ms: i64,
        closed_ms: Option<i64>,
        paths: Option<&[String]>,
    ) -> Result<String> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        fs::create_dir_all(&self.dir).map_err(io(format!("creating {}", self.dir.display())))?;
        let pid = std::process::id();
        let id = format!(
            "{session}.{opened_ms}.{pid}.{}",
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let w = Window {
            session: session.to_string(),
            pid,
            pid_start: proc_start(pid),
            kind,
            opened_ms,
            closed_ms,
            paths: paths.map(<[String]>::to_vec),
        };
        write_json_with(&self.path(&id), &w, false)?;
        Ok(id)
    }

    /// Closes window `id` (now), with the paths that changed during it (`None`: unknown).
    pub fn close(&self, id: &str, paths: Option<&[String]>) -> Result<()> {
        let path = self.path(id);
        let Some(mut w) = read_json::<Window>(&path)? else {
            return Ok(());
        };
        w.closed_ms = Some(now_ms());
        w.paths = paths.map(<[String]>::to_vec);
        write_json_with(&path, &w, false)
    }

    /// Records a window that already closed (now): a file tool's, with the paths it wrote.
    pub fn record(
        &self,
        session: &str,
        kind: WindowKind,
        opened_ms: i64,
        paths: &[String],
    ) -> Result<()> {
        self.write_new(session, kind, opened_ms, Some(now_ms()), Some(paths))
            .map(|_| ())
    }

    /// Every window; those of dead processes are closed (at the time this finds out).
    /// Closed windows older than the keep time are removed.
    pub fn load(&self) -> Result<Vec<Window>> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io(format!("listing {}", self.dir.display()))(e)),
        };
        let now = now_ms();
        let mut out = Vec::new();
        for e in entries.flatten() {
            let path = e.path();
            if path.extension().is_none_or(|x| x != "json") {
                continue;
            }
            let mut w = match read_json::<Window>(&path) {
                Ok(Some(w)) => w,
                Ok(None) => continue,
                Err(err) => {
                    tracing::warn!(error = %err, "ignoring an unreadable command window");
                    continue;
                }
            };
            if w.closed_ms.is_none() && !alive(&w) {
                // It ended at most a heartbeat after its file was last touched.
                let touched = fs::metadata(&path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(w.opened_ms, |d| d.as_millis() as i64);
                let end = touched.max(w.opened_ms) + HEARTBEAT.as_millis() as i64;
                w.closed_ms = Some(end.min(now));
                if let Err(err) = write_json_with(&path, &w, false) {
                    tracing::warn!(error = %err, "cannot close a dead process's command window");
                }
            }
            if w.closed_ms.is_some_and(|c| c < now - KEEP_MS) {
                let _ = fs::remove_file(&path);
                continue;
            }
            out.push(w);
        }
        Ok(out)
    }

    /// Marks the open window `id` as still running.
    pub fn touch(&self, id: &str) {
        let path = self.path(id);
        let r = fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(std::time::SystemTime::now()));
        if let Err(e) = r {
            tracing::debug!(path = %path.display(), error = %e, "cannot touch a command window");
        }
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }
}
