//! [`cairn_engine::Checkpointer`] over a workspace's [`Vcs`]: a snapshot before every
//! side-effecting tool call (so shell edits are covered) and a change-turn record at turn end.
//! The store lives on its own thread (libgit2's index is not `Send`); failures are logged and
//! never stop a turn.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use async_trait::async_trait;
use tokio::sync::oneshot;

use crate::config::VcsConfig;
use crate::vcs::Vcs;

enum Cmd {
    Begin {
        turn: u32,
        tool: String,
        call_id: String,
        done: oneshot::Sender<()>,
    },
    End {
        turn: u32,
        input: String,
        done: oneshot::Sender<()>,
    },
}

/// Snapshots a session's workspace around side effects.
pub struct VcsCheckpointer {
    tx: Option<mpsc::Sender<Cmd>>,
}

impl VcsCheckpointer {
    /// Opens the store on a background thread and takes a first snapshot there (starting the
    /// watcher and warming the stat cache); the first tool call waits for it if needed.
    pub fn start(state_dir: &Path, workspace: &Path, session: &str, config: VcsConfig) -> Self {
        let state_dir: PathBuf = state_dir.to_path_buf();
        let workspace: PathBuf = workspace.to_path_buf();
        Self::start_with(session, move || {
            open_and_prime(&state_dir, &workspace, config)
        })
    }

    /// Runs a store made by `open` (on the store's thread; `None` disables checkpoints).
    pub fn start_with<F>(session: &str, open: F) -> Self
    where
        F: FnOnce() -> Option<Vcs> + Send + 'static,
    {
        let (tx, rx) = mpsc::channel::<Cmd>();
        let session = session.to_string();
        let spawned = std::thread::Builder::new()
            .name("cairn-vcs".into())
            .spawn(move || serve(open(), &session, rx));
        match spawned {
            Ok(_) => VcsCheckpointer { tx: Some(tx) },
            Err(e) => {
                tracing::warn!(error = %e, "checkpoints disabled: cannot start a thread");
                VcsCheckpointer { tx: None }
            }
        }
    }

    async fn send(&self, make: impl FnOnce(oneshot::Sender<()>) -> Cmd) {
        let Some(tx) = &self.tx else { return };
        let (done, wait) = oneshot::channel();
        if tx.send(make(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

fn serve(mut vcs: Option<Vcs>, session: &str, rx: mpsc::Receiver<Cmd>) {
    while let Ok(cmd) = rx.recv() {
        match cmd {
            Cmd::Begin {
                turn,
                tool,
                call_id,
                done,
            } => {
                if let Some(v) = vcs.as_mut() {
                    if let Err(e) = v.begin_step(session, turn, &tool, &call_id) {
                        tracing::warn!(error = %e, "checkpoint snapshot failed");
                    }
                }
                let _ = done.send(());
            }
            Cmd::End { turn, input, done } => {
                if let Some(v) = vcs.as_mut() {
                    if let Err(e) = v.end_turn(session, turn, &input) {
                        tracing::warn!(error = %e, "checkpoint turn record failed");
                    }
                }
                let _ = done.send(());
            }
        }
    }
    if let Some(v) = vcs.as_mut() {
        let _ = v.flush();
    }
}

fn open_and_prime(state_dir: &Path, workspace: &Path, config: VcsConfig) -> Option<Vcs> {
    let mut vcs = match Vcs::open(state_dir, workspace, config) {
        Ok(v) => v,
        Err(e) => {
            tracing::warn!(error = %e, "checkpoints disabled for this session");
            return None;
        }
    };
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
    Some(vcs)
}

#[async_trait]
impl cairn_engine::Checkpointer for VcsCheckpointer {
    async fn before_side_effect(&self, turn: u32, tool: &str, call_id: &str) {
        let tool = tool.to_string();
        let call_id = call_id.to_string();
        self.send(|done| Cmd::Begin {
            turn,
            tool,
            call_id,
            done,
        })
        .await;
    }

    async fn turn_end(&self, turn: u32, input: &str) {
        let input = input.to_string();
        self.send(|done| Cmd::End { turn, input, done }).await;
    }
}
