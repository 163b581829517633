//! Handoff: a session moved between the folder and a worktree with its history (Codex's
//! "Handoff"). The session is copied (its conversation and event log) to a new session in
//! the other place, so the original stays as it was; the work comes along: the folder's
//! uncommitted changes are carried into a new worktree, a worktree's changes are applied to
//! the folder.

use std::path::{Path, PathBuf};

use cairn_worktree::{Repo, WorktreeError};
use serde::Serialize;

use super::{ApplyReport, ApplyTarget};
use crate::store::SessionStore;

/// Where a session goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HandoffTo {
    /// Into worktree NAME (created, with the folder's uncommitted changes, if new).
    Worktree(String),
    /// Back to the folder (the worktree's changes applied to it).
    Folder,
    /// A chat whose worktree was removed, on to the folder workspace PATH (checked to be
    /// the folder that worktree was made from); nothing is applied (the worktree is gone).
    RemovedTo(PathBuf),
}

/// What a handoff did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Handoff {
    /// The new session (the copy in its new place).
    pub session: String,
    /// Its workspace.
    pub workspace: String,
    /// Its worktree's NAME, or null in the folder.
    pub worktree: Option<String>,
    /// For a handoff to the folder: the apply of the worktree's changes.
    pub apply: Option<ApplyReport>,
    /// For a handoff into a new worktree: carried changes and `.worktreeinclude` files not
    /// copied, each with why (a link on the way is never followed).
    pub skipped: Vec<String>,
}

/// Hands session `id` over to `to`.
pub fn handoff(state_dir: &Path, id: &str, to: &HandoffTo) -> Result<Handoff, WorktreeError> {
    let usage = |e: crate::store::StoreError| WorktreeError::Usage(e.to_string());
    let sessions = SessionStore::new(state_dir);
    let _held = sessions.lock(id).map_err(usage)?;
    let saved = sessions.load(id).map_err(usage)?;
    let from = PathBuf::from(&saved.workspace);
    let mut skipped = Vec::new();
    let (workspace, worktree) = match (to, &saved.worktree) {
        (HandoffTo::Worktree(name), None) => {
            // A new worktree takes the folder's uncommitted changes along.
            let repo = Repo::discover(&from, &super::layout(state_dir))?;
            let carry = repo.records.get(name)?.is_none();
            let p = super::prepare(&from, state_dir, name, carry, &|_, _| {})?;
            skipped = p.skipped;
            (p.workspace, Some(name.clone()))
        }
        (HandoffTo::Worktree(name), Some(current)) => {
            return Err(WorktreeError::Usage(format!(
                "session {id} already runs in worktree {current}; hand it to the folder first \
                 (not to {name})"
            )))
        }
        (HandoffTo::Folder | HandoffTo::RemovedTo(_), None) => {
            return Err(WorktreeError::Usage(format!(
                "session {id} already runs in the folder"
            )))
        }
        (HandoffTo::RemovedTo(folder), Some(name)) => {
            let home = super::counterparts(folder, state_dir)?.of(name);
            if home != from {
                return Err(WorktreeError::Usage(format!(
                    "session {id} did not run in a worktree of {}",
                    folder.display()
                )));
            }
            if from.exists() {
                return Err(WorktreeError::Usage(format!(
                    "worktree {name} of session {id} still exists: continue it in the folder \
                     from its review"
                )));
            }
            (folder.clone(), None)
        }
        (HandoffTo::Folder, Some(name)) => {
            let record = super::trusted(&from, state_dir, name)?;
            let sub = from.strip_prefix(&record.path).unwrap_or(Path::new(""));
            let repo = Repo::discover(&from, &super::layout(state_dir))?;
            (super::under(&repo.folder, sub), None)
        }
    };
    let new_id = uuid::Uuid::new_v4().to_string();
    copy_session(&sessions, id, &new_id)?;
    let mut copy = saved.clone();
    copy.session_id = new_id.clone();
    copy.workspace = workspace.display().to_string();
    copy.worktree = worktree.clone();
    if !copy.name.is_empty() {
        copy.name = match &worktree {
            Some(n) => format!("{} ({n})", copy.name),
            None => format!("{} (folder)", copy.name),
        };
    }
    copy.created_at = chrono::Utc::now().to_rfc3339();
    copy.updated_at = copy.created_at.clone();
    let lock = sessions.lock(&new_id).map_err(usage)?;
    sessions.save(&copy).map_err(usage)?;
    let apply = match (&saved.worktree, to) {
        (Some(name), HandoffTo::Folder) => Some(super::apply(
            &workspace,
            state_dir,
            name,
            false,
            &ApplyTarget::Held {
                id: new_id.clone(),
                turns: copy.turns,
            },
        )?),
        _ => None,
    };
    drop(lock);
    Ok(Handoff {
        session: new_id,
        workspace: workspace.display().to_string(),
        worktree,
        apply,
        skipped,
    })
}

/// Copies the files of session `from` (event log, attachments, tool results) to `to`.
fn copy_session(sessions: &SessionStore, from: &str, to: &str) -> Result<(), WorktreeError> {
    let usage = |e: crate::store::StoreError| WorktreeError::Usage(e.to_string());
    let src = sessions.session_dir(from).map_err(usage)?;
    let dst = sessions.session_dir(to).map_err(usage)?;
    copy_dir(&src, &dst).map_err(|e| WorktreeError::Io {
        context: format!("copying session {from}"),
        source: e,
    })
}

fn copy_dir(src: &Path, dst: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let name = entry.file_name();
        // The lock and the checkpoint are the new session's own.
        if matches!(
            name.to_str(),
            Some(crate::store::lock::LOCK_FILE | "state.json" | "state.json.bak")
        ) {
            continue;
        }
        let (from, to) = (entry.path(), dst.join(&name));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_dir(&from, &to)?;
        } else if kind.is_file() {
            std::fs::copy(&from, &to)?;
        }
    }
    Ok(())
}
