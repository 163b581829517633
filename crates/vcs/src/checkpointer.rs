//! [`cairn_engine::Checkpointer`] over a workspace's [`Vcs`]: a snapshot before every
//! side-effecting tool call (so shell edits are covered), one after every command (closing
//! its window), and a change-turn record at turn end. The store lives on its own thread
//! (libgit2's index is not `Send`); a failure is returned to the engine, which fails the turn.

use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc};

use async_trait::async_trait;
use cairn_engine::{CheckpointError, SideEffect};
use tokio::sync::{oneshot, watch};

use crate::config::VcsConfig;
use crate::log::StepKind;
use crate::progress::ProgressFn;
use crate::vcs::Vcs;

type Done = oneshot::Sender<Result<(), String>>;

/// The latest progress report of the store's snapshots: (entries done, total when known).
type Reports = Arc<watch::Sender<Option<(u64, Option<u64>)>>>;

/// An observer publishing a store's snapshot progress to `reports`.
fn reporter(reports: &Reports) -> ProgressFn {
    let reports = reports.clone();
    Arc::new(move |done, total| {
        reports.send_replace(Some((done, total)));
    })
}

enum Cmd {
    Begin {
        turn: u32,
        tool: String,
        call_id: String,
        kind: StepKind,
        done: Done,
    },
    After {
        turn: u32,
        call_id: String,
        produced: Vec<String>,
        done: Done,
    },
    End {
        turn: u32,
        input: String,
        done: Done,
    },
}

/// Snapshots a session's workspace around side effects.
pub struct VcsCheckpointer {
    tx: Option<mpsc::Sender<Cmd>>,
    reports: Reports,
}

impl VcsCheckpointer {
    /// Opens the store on a background thread and takes a first snapshot there (starting the
    /// watcher and warming the stat cache); the first tool call waits for it if needed.
    pub fn start(state_dir: &Path, workspace: &Path, session: &str, config: VcsConfig) -> Self {
        let state_dir: PathBuf = state_dir.to_path_buf();
        let workspace: PathBuf = workspace.to_path_buf();
        let reports: Reports = Arc::new(watch::channel(None).0);
        let observer = reporter(&reports);
        Self::run(session, reports, move || {
            open_and_prime(&state_dir, &workspace, config, observer)
        })
    }

    /// Runs a store made by `open` (on the store's thread; an error makes every side effect fail).
    pub fn start_with<F>(session: &str, open: F) -> Self
    where
        F: FnOnce() -> Result<Vcs, String> + Send + 'static,
    {
        Self::run(session, Arc::new(watch::channel(None).0), open)
    }

    fn run<F>(session: &str, reports: Reports, open: F) -> Self
    where
        F: FnOnce() -> Result<Vcs, String> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel::<Cmd>();
        let session = session.to_string();
        let observer = reporter(&reports);
        let spawned = std::thread::Builder::new()
            .name("cairn-vcs".into())
            .spawn(move || {
                let mut vcs = open();
                if let Ok(v) = vcs.as_mut() {
                    v.set_progress(Some(observer));
                }
                serve(vcs, &session, rx)
            });
        let tx = match spawned {
            Ok(_) => Some(tx),
            Err(e) => {
                tracing::warn!(error = %e, "checkpoints disabled: cannot start a thread");
                None
            }
        };
        VcsCheckpointer { tx, reports }
    }

    async fn send(&self, make: impl FnOnce(Done) -> Cmd) -> Result<(), CheckpointError> {
        let Some(tx) = &self.tx else {
            return Err(CheckpointError(
                "the checkpoint store could not be started".into(),
            ));
        };
        let (done, wait) = oneshot::channel();
        tx.send(make(done))
            .map_err(|_| CheckpointError("the checkpoint store stopped".into()))?;
        match wait.await {
            Ok(r) => r.map_err(CheckpointError),
            Err(_) => Err(CheckpointError("the checkpoint store stopped".into())),
        }
    }
}

fn serve(mut vcs: Result<Vcs, String>, session: &str, rx: mpsc::Receiver<Cmd>) {
    let unavailable = |e: &String| format!("the checkpoint store is unavailable ({e})");
    loop {
        let cmd = match rx.recv_timeout(crate::windows::HEARTBEAT) {
            Ok(cmd) => cmd,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Ok(v) = vcs.as_ref() {
                    v.heartbeat();
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        let (result, done) = match cmd {
            Cmd::Begin {
                turn,
                tool,
                call_id,
                kind,
                done,
            } => {
                let r = match vcs.as_mut() {
                    Ok(v) => v
                        .begin_step(session, turn, &tool, &call_id, kind)
                        .map_err(|e| format!("snapshot before {tool}: {e}")),
                    Err(e) => Err(unavailable(e)),
                };
                (r, done)
            }
            Cmd::After {
                turn,
                call_id,
                produced,
                done,
            } => {
                let r = match vcs.as_mut() {
                    Ok(v) => v
                        .end_step(session, turn, &call_id, &produced)
                        .map_err(|e| format!("snapshot after a side effect: {e}")),
                    Err(e) => Err(unavailable(e)),
                };
                (r, done)
            }
            Cmd::End { turn, input, done } => {
                let r = match vcs.as_mut() {
                    Ok(v) => v
                        .end_turn(session, turn, &input)
                        .map(|_| ())
                        .map_err(|e| format!("recording the turn: {e}")),
                    // Nothing was snapshotted: nothing to record.
                    Err(_) => Ok(()),
                };
                (r, done)
            }
        };
        if let Err(e) = &result {
            tracing::warn!(error = %e, "checkpoint failed");
        }
        let _ = done.send(result);
    }
    if let Ok(v) = vcs.as_mut() {
        let _ = v.flush();
    }
}

fn open_and_prime(
    state_dir: &Path,
    workspace: &Path,
    config: VcsConfig,
    progress: ProgressFn,
) -> Result<Vcs, String> {
    let mut vcs = match Vcs::open(state_dir, workspace, config) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "checkpoints cannot be stored for this session");
            return Err(e.to_string());
        }
    };
    // The first tool call of a turn may be waiting for this snapshot: it shows the progress.
    vcs.set_progress(Some(progress));
    match vcs.pending_restore() {
        Ok(Some(p)) => tracing::warn!(
            "an interrupted restore (session {}, to turn {}) is pending: run `cairn restore --session {} --recover finish|rollback`",
            p.session, p.to_turn, p.session
        ),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e, "cannot read the restore journal"),
    }
    let started = std::time::Instant::now();
    match vcs.snapshot() {
        Ok(s) => {
            tracing::debug!(
                full = s.full_walk,
                hashed = s.hashed,
                ms = started.elapsed().as_millis() as u64,
                "initial snapshot"
            );
            for e in &s.excluded {
                tracing::info!(path = %e.path, reason = %e.reason, "not covered by checkpoints");
            }
        }
        Err(e) => tracing::warn!(error = %e, "initial snapshot failed"),
    }
    let store = vcs.store_dir().to_path_buf();
    let budget = vcs.config().budget_bytes;
    let _ = std::thread::Builder::new()
        .name("cairn-vcs-usage".into())
        .spawn(move || {
            let bytes = crate::gc::dir_size(&store);
            if bytes > budget {
                tracing::warn!(
                    bytes,
                    budget,
                    "checkpoint store is over its budget; run garbage collection"
                );
            }
        });
    Ok(vcs)
}

#[async_trait]
impl cairn_engine::Checkpointer for VcsCheckpointer {
    async fn before_side_effect(
        &self,
        turn: u32,
        tool: &str,
        call_id: &str,
        kind: SideEffect,
    ) -> Result<(), CheckpointError> {
        let tool = tool.to_string();
        let call_id = call_id.to_string();
        let kind = match kind {
            SideEffect::FileEdit => StepKind::File,
            SideEffect::Command => StepKind::Command,
            SideEffect::ReadOnlyCommand => StepKind::ReadOnly,
        };
        self.send(|done| Cmd::Begin {
            turn,
            tool,
            call_id,
            kind,
            done,
        })
        .await
    }

    async fn after_side_effect(
        &self,
        turn: u32,
        call_id: &str,
        produced: &[String],
        _kind: SideEffect,
    ) -> Result<(), CheckpointError> {
        let call_id = call_id.to_string();
        let produced = produced.to_vec();
        self.send(|done| Cmd::After {
            turn,
            call_id,
            produced,
            done,
        })
        .await
    }

    async fn turn_end(&self, turn: u32, input: &str) -> Result<(), CheckpointError> {
        let input = input.to_string();
        self.send(|done| Cmd::End { turn, input, done }).await
    }

    fn progress(&self) -> Option<watch::Receiver<Option<(u64, Option<u64>)>>> {
        Some(self.reports.subscribe())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use cairn_engine::Checkpointer;

    #[tokio::test]
    async fn a_long_snapshot_before_a_tool_call_reports_progress_to_the_engine() {
        let ws = tempfile::tempdir().unwrap();
        let st = tempfile::tempdir().unwrap();
        for i in 0..300 {
            let dir = ws.path().join(format!("d{}", i % 7));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(format!("f{i}")), format!("{i}\n")).unwrap();
        }
        let (s, w) = (st.path().to_path_buf(), ws.path().to_path_buf());
        let cp = VcsCheckpointer::start_with("s1", move || {
            let config = VcsConfig {
                watch: false,
                ..VcsConfig::default()
            };
            let mut v = Vcs::open(&s, &w, config).map_err(|e| e.to_string())?;
            // Report from the start instead of after a second.
            v.snap.quiet = Some(std::time::Duration::ZERO);
            Ok(v)
        });
        let mut reports = cp.progress().unwrap();
        cp.before_side_effect(1, "run_shell", "c1", SideEffect::Command)
            .await
            .unwrap();
        assert!(reports.has_changed().unwrap());
        assert_eq!(*reports.borrow_and_update(), Some((300, Some(300))));
    }
}
