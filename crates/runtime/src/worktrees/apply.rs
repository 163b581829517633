//! `apply`: a worktree's changes merged into the folder, recorded as a change-turn of a
//! folder session so a restore undoes it.

use std::path::Path;

use cairn_vcs::{Vcs, VcsConfig, VcsError};
use cairn_worktree::{ApplyConflict, Record, Repo, Resolution, StateStore, WorktreeError};
use serde::Serialize;

use crate::index::SessionQuery;
use crate::store::lock::SessionLock;
use crate::store::SavedSession;
use crate::store::SessionStore;

/// What an apply did (`cairn worktrees apply --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApplyReport {
    /// Paths applied (written, removed, or already as in the worktree).
    pub applied: Vec<String>,
    /// Paths left untouched, and why.
    pub conflicts: Vec<ApplyConflict>,
    /// Entries of the worktree not applied as files, each with why (a nested git
    /// repository, an unreadable file): named, never silently left out.
    pub skipped: Vec<String>,
    /// The folder session the apply is a change-turn of.
    pub session: Option<String>,
    /// Its name (may be empty), so a face can say where the apply is recorded.
    pub session_name: Option<String>,
    /// That change-turn (null for a dry run or when nothing changed).
    pub checkpoint: Option<u32>,
    /// The `cairn restore` command that undoes it.
    pub undo: Option<String>,
}

/// Which folder session an apply is a change-turn of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplyTarget {
    /// The newest folder session of the folder that no process holds, else a new one.
    Auto,
    /// This saved session (its lock is taken for the apply).
    Session(String),
    /// A session this process holds open and idle (the app's viewed folder session), with
    /// the number of turns it ran.
    Held {
        /// Its id.
        id: String,
        /// Its turns so far.
        turns: u32,
    },
    /// The worktree's own folder session: made on its first apply ("Applied from worktree
    /// NAME") and reused by every later one, so its applies are one timeline.
    Own,
}

/// Applies worktree `name` as [`apply`] does, first settling the conflicting paths of
/// `resolutions` as each says (the folder's version kept, or the worktree's taken: part of
/// the apply's change-turn, so its Undo brings the folder's back).
pub fn apply_resolving(
    workspace: &Path,
    state_dir: &Path,
    name: &str,
    target: &ApplyTarget,
    resolutions: &[(String, Resolution)],
) -> Result<ApplyReport, WorktreeError> {
    run(workspace, state_dir, name, false, target, resolutions)
}

/// Applies worktree `name` of the repository of `workspace` to its folder, as a change-turn
/// of the folder session `target` names.
pub fn apply(
    workspace: &Path,
    state_dir: &Path,
    name: &str,
    dry_run: bool,
    target: &ApplyTarget,
) -> Result<ApplyReport, WorktreeError> {
    run(workspace, state_dir, name, dry_run, target, &[])
}

fn run(
    workspace: &Path,
    state_dir: &Path,
    name: &str,
    dry_run: bool,
    target: &ApplyTarget,
    resolutions: &[(String, Resolution)],
) -> Result<ApplyReport, WorktreeError> {
    let repo = Repo::discover(workspace, &super::layout(state_dir))?;
    // A half-done merge or rebase is never applied: an update killed half-way is rolled
    // back first.
    cairn_worktree::rollback_update(&repo, name)?;
    let _lock = repo.records.lock(name)?;
    let mut record = cairn_worktree::owned(&repo, name)?;
    cairn_worktree::check(&repo, &record)?;
    let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
    let mut plan = cairn_worktree::plan_apply(&store, &record)?;
    for (path, how) in resolutions {
        plan.resolve(&store, path, *how)?;
    }
    if dry_run || plan.writes().is_empty() {
        if !dry_run && !plan.applied().is_empty() {
            // Already in the folder: remember them as applied.
            record.applied = cairn_worktree::record_applied(&store, &record, &plan)?.to_string();
            repo.records.put(&record)?;
        }
        return Ok(ApplyReport {
            applied: plan.applied(),
            conflicts: plan.conflicts,
            skipped: plan.skipped,
            session: None,
            session_name: None,
            checkpoint: None,
            undo: None,
        });
    }
    let sessions = SessionStore::new(state_dir);
    let (session_id, _held, turns) = match target {
        ApplyTarget::Held { id, turns } => (id.clone(), None, *turns),
        ApplyTarget::Session(id) => {
            let (id, lock, turns) = folder_session(&sessions, &repo.folder, name, Some(id))?;
            (id, Some(lock), turns)
        }
        ApplyTarget::Auto => {
            let (id, lock, turns) = folder_session(&sessions, &repo.folder, name, None)?;
            (id, Some(lock), turns)
        }
        ApplyTarget::Own => {
            let (id, lock, turns) = own_session(&sessions, &repo.folder, &mut record)?;
            (id, Some(lock), turns)
        }
    };
    let mut vcs = Vcs::open(
        state_dir,
        &repo.folder,
        VcsConfig {
            watch: false,
            ..VcsConfig::default()
        },
    )
    .map_err(|e| WorktreeError::Usage(format!("the folder's checkpoint store: {e}")))?;
    let summary = format!("apply worktree {name}");
    // Journaled like a restore: a failed write rolls back, a killed apply is finished or
    // rolled back by `cairn restore --session ID --recover finish|rollback`.
    let applied = vcs
        .apply_journaled(&session_id, turns, &summary, name, &plan.edits())
        .map_err(|e| match e {
            VcsError::PendingRestore { .. }
            | VcsError::ApplyRolledBack { .. }
            | VcsError::ApplyUnfinished { .. } => WorktreeError::Refused(e.to_string()),
            other => WorktreeError::Usage(format!("recording the apply: {other}")),
        })?;
    plan.set_aside(
        &applied.uncovered,
        "not covered by the folder's checkpoints (too large, or in an excluded folder), so \
         an undo could not bring it back: copy it by hand",
    );
    let checkpoint = applied.turn;
    record.applied = cairn_worktree::record_applied(&store, &record, &plan)?.to_string();
    repo.records.put(&record)?;
    let undo = checkpoint.map(|n| {
        format!(
            "cairn restore --session {session_id} --to-turn {} --state-dir {}",
            n - 1,
            shell_quote(&state_dir.display().to_string())
        )
    });
    Ok(ApplyReport {
        applied: plan.applied(),
        conflicts: plan.conflicts,
        skipped: plan.skipped,
        session_name: sessions.load(&session_id).ok().map(|s| s.name),
        session: Some(session_id),
        checkpoint,
        undo,
    })
}

/// The folder session the apply is recorded in, its lock and its turn count.
fn folder_session(
    sessions: &SessionStore,
    folder: &Path,
    name: &str,
    wanted: Option<&str>,
) -> Result<(String, SessionLock, u32), WorktreeError> {
    let usage = |e: crate::store::StoreError| WorktreeError::Usage(e.to_string());
    if let Some(id) = wanted {
        let saved = sessions.load(id).map_err(usage)?;
        if saved.worktree.is_some() || Path::new(&saved.workspace) != folder {
            return Err(WorktreeError::Usage(format!(
                "session {id} is not a session of the folder {}",
                folder.display()
            )));
        }
        let lock = sessions.lock(id).map_err(usage)?;
        return Ok((id.to_string(), lock, saved.turns));
    }
    let query = SessionQuery {
        search: None,
        workspace: Some(folder.display().to_string()),
    };
    for s in sessions.search(&query).map_err(usage)? {
        if s.worktree.is_some() {
            continue;
        }
        if let Ok(lock) = sessions.lock(&s.id) {
            return Ok((s.id, lock, s.turns));
        }
    }
    let id = uuid::Uuid::new_v4().to_string();
    let now = chrono::Utc::now().to_rfc3339();
    let saved = SavedSession {
        name: format!("Applied from worktree {name}"),
        name_source: "auto".into(),
        ..SavedSession::new(&id, &folder.display().to_string(), "", "", &now)
    };

    let lock = sessions.lock(&id).map_err(usage)?;
    sessions.save(&saved).map_err(usage)?;
    Ok((id, lock, 0))
}

/// The worktree's own folder session (see [`ApplyTarget::Own`]), its lock and its turn
/// count; a new one when it has none yet or it is gone (noted in `record`, which the apply
/// saves).
fn own_session(
    sessions: &SessionStore,
    folder: &Path,
    record: &mut Record,
) -> Result<(String, SessionLock, u32), WorktreeError> {
    let usage = |e: crate::store::StoreError| WorktreeError::Usage(e.to_string());
    if let Some(id) = &record.apply_session {
        let mine = sessions
            .load(id)
            .ok()
            .filter(|s| s.worktree.is_none() && Path::new(&s.workspace) == folder);
        if let Some(saved) = mine {
            let lock = sessions.lock(id).map_err(|_| {
                WorktreeError::Usage(format!(
                    "the chat that records worktree {}'s applies is open and busy: wait for \
                     its turn to end, or apply from a folder chat",
                    record.name
                ))
            })?;
            return Ok((id.clone(), lock, saved.turns));
        }
    }
    let id = uuid::Uuid::new_v4().to_string();
    let now = chrono::Utc::now().to_rfc3339();
    let saved = SavedSession {
        name: format!("Applied from worktree {}", record.name),
        name_source: "auto".into(),
        ..SavedSession::new(&id, &folder.display().to_string(), "", "", &now)
    };
    let lock = sessions.lock(&id).map_err(usage)?;
    sessions.save(&saved).map_err(usage)?;
    record.apply_session = Some(id.clone());
    Ok((id, lock, 0))
}

/// `s` quoted for a POSIX shell when it needs it.
fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}
