//! Checkpoint glue: the per-turn snapshot store a session gets (`--vcs auto|off`), and access
//! to a saved session's store for `turns`, `diff` and `restore`.

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use cairn_engine::Checkpointer;
use cairn_vcs::{Vcs, VcsCheckpointer, VcsConfig};

use crate::error::RuntimeError;
use crate::store::SessionStore;
use crate::store::StoreError;

/// Whether a session snapshots its workspace turn by turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum VcsMode {
    /// Snapshots in Cairn's own store under the state dir (never in the user's `.git`).
    #[default]
    Auto,
    /// No snapshots.
    Off,
}

impl FromStr for VcsMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(VcsMode::Auto),
            "off" => Ok(VcsMode::Off),
            other => Err(format!("unknown vcs mode `{other}`: use `auto` or `off`")),
        }
    }
}

/// The checkpointer for a session, or `None` with `--vcs off`. Opening the store and the
/// first snapshot run in the background; failures only disable checkpoints (with a warning).
pub fn checkpointer(
    mode: VcsMode,
    state_dir: &Path,
    workspace: &Path,
    session_id: &str,
) -> Option<Arc<dyn Checkpointer>> {
    match mode {
        VcsMode::Off => None,
        VcsMode::Auto => Some(Arc::new(VcsCheckpointer::start(
            state_dir,
            workspace,
            session_id,
            VcsConfig::default(),
        ))),
    }
}

/// Opens the checkpoint store of a saved session's workspace (no watcher), with the number
/// of turns the session ran. When the session's checkpoint cannot be read (both copies
/// damaged), its change-turns stay reachable: the workspace comes from the checkpoint store
/// that holds them, and the turn count from its records.
pub fn open_session_vcs(state_dir: &Path, session_id: &str) -> Result<(Vcs, u32), RuntimeError> {
    let config = VcsConfig {
        watch: false,
        ..VcsConfig::default()
    };
    let open = |workspace: &Path| {
        Vcs::open(state_dir, workspace, config.clone())
            .map_err(|e| RuntimeError::Config(e.to_string()))
    };
    match SessionStore::new(state_dir).load(session_id) {
        Ok(saved) => Ok((open(Path::new(&saved.workspace))?, saved.turns)),
        Err(e @ StoreError::Corrupt { .. }) => {
            let Some(workspace) = cairn_vcs::workspace_of_session(state_dir, session_id) else {
                return Err(e.into());
            };
            tracing::warn!(error = %e, "the session cannot be loaded; using its change-turns from the checkpoint store");
            let vcs = open(&workspace)?;
            let turns = vcs
                .turns(session_id)
                .map(|t| t.iter().map(|r| r.session_turn).max().unwrap_or(0))
                .unwrap_or(0);
            Ok((vcs, turns))
        }
        Err(e) => Err(e.into()),
    }
}

/// One row of `cairn turns --json` (and the server's `GET …/turns`).
pub fn turn_json(t: &cairn_vcs::TurnRecord) -> serde_json::Value {
    let mut v = serde_json::json!({
        "turn": t.turn,
        "sessionTurn": t.session_turn,
        "files": t.files,
        "summary": t.summary,
        "at": t.at,
        "kind": t.kind,
    });
    if !t.excluded.is_empty() {
        v["excluded"] = serde_json::json!(t.excluded);
    }
    if !t.excluded_before.is_empty() {
        v["excludedBefore"] = serde_json::json!(t.excluded_before);
    }
    if !t.others.is_empty() {
        v["others"] = serde_json::json!(t.others);
    }
    v
}
