//! The timeline of a session as a face shows it: its change-turns (per-turn checkpoints) with the files
//! each one changed, their diffs, the changes since the session started, and restores (dry
//! run, chosen paths, conflicts with the user's own edits, undoable). The same checkpoint
//! store and API as `cairn turns|diff|restore`; each call opens the store on a blocking
//! thread (libgit2 handles are not `Send`) and closes it again.

use std::path::{Path, PathBuf};

use cairn_vcs::{
    FileStat, RestoreOptions, RestoreReport, TurnEntry, TurnKind, Vcs, VcsConfig, VcsError,
};

pub mod types;

/// What the checkpoint store refuses with.
pub use cairn_vcs::VcsError as CheckpointError;
pub use types::{
    CheckpointKind, CheckpointView, ConflictKind, ConflictView, FileChange, RestoreRequest,
    RestoreView, RewindArchiveView, RewoundTurnView, TimelineView,
};

/// Why a timeline call failed.
#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    /// The checkpoint store refused.
    #[error(transparent)]
    Vcs(#[from] VcsError),
    /// A path of the request leaves the workspace.
    #[error("`{0}` is not a path inside the workspace.")]
    Outside(String),
}

/// Where a session's checkpoints live.
#[derive(Debug, Clone)]
pub struct TimelineSource {
    /// The state dir shared with the CLI.
    pub state_dir: PathBuf,
    /// The workspace root.
    pub workspace: PathBuf,
    /// The session id.
    pub session_id: String,
}

fn open(src: &TimelineSource) -> Result<Vcs, TimelineError> {
    let config = VcsConfig {
        watch: false,
        ..VcsConfig::default()
    };
    Ok(Vcs::open(&src.state_dir, &src.workspace, config)?)
}

/// The face's view of a file's line counts.
fn change_of(f: FileStat) -> FileChange {
    FileChange {
        path: f.path,
        added: f.added,
        removed: f.removed,
    }
}

/// The face's view of a listed change-turn.
fn view_of(e: TurnEntry) -> CheckpointView {
    let r = e.record;
    CheckpointView {
        turn: r.turn,
        session_turn: r.session_turn,
        kind: match r.kind {
            TurnKind::Agent => CheckpointKind::Agent,
            TurnKind::Restore => CheckpointKind::Restore,
            TurnKind::User => CheckpointKind::User,
            TurnKind::Apply => CheckpointKind::Apply,
        },
        summary: r.summary,
        at: r.at,
        files: e.files.into_iter().map(change_of).collect(),
        restored_to: e.restored_to,
        applied_from: r.applied_from,
    }
}

/// Every change-turn of the session and the files changed since it started (empty when the
/// session changed nothing yet).
pub fn timeline(src: &TimelineSource) -> Result<TimelineView, TimelineError> {
    let vcs = open(src)?;
    let entries = match vcs.listing(&src.session_id, true) {
        Ok(r) => r,
        Err(VcsError::NoCheckpoints(_)) => Vec::new(),
        Err(e) => return Err(e.into()),
    };
    let changes = vcs.changes_since_start(&src.session_id)?;
    let pending_restore = vcs.pending_restore()?.map(|p| match &p.applied_from {
        Some(name) => format!("an interrupted apply of worktree {name} is pending"),
        None => format!("an interrupted restore to turn {} is pending", p.to_turn),
    });
    Ok(TimelineView {
        checkpoints: entries.into_iter().map(view_of).collect(),
        changes: changes.into_iter().map(change_of).collect(),
        pending_restore,
        rewinds: rewinds(src),
    })
}

/// What the session's conversation rewinds removed, newest first.
fn rewinds(src: &TimelineSource) -> Vec<RewindArchiveView> {
    let store = crate::store::SessionStore::new(&src.state_dir);
    let Ok(dir) = store.session_dir(&src.session_id) else {
        return Vec::new();
    };
    crate::store::rewind_read::read_archives(&dir)
        .into_iter()
        .map(|a| RewindArchiveView {
            file: a.file,
            rewound_to_turn: a.rewound_to_turn,
            at: a.at,
            turns: a
                .turns
                .into_iter()
                .map(|t| RewoundTurnView {
                    turn: t.turn,
                    input: t.input,
                    reply: t.reply,
                })
                .collect(),
        })
        .collect()
}

/// The unified diff of change-turn `turn`, or, with `turn == 0`, of everything the session
/// changed (its start to its last checkpoint); `paths` limits it.
pub fn diff(src: &TimelineSource, turn: u32, paths: &[String]) -> Result<String, TimelineError> {
    let vcs = open(src)?;
    let count = vcs.turns(&src.session_id)?.len() as u32;
    match turn {
        0 => vcs.diff_checkpoints(&src.session_id, 0, count, paths),
        n if paths.is_empty() => vcs.diff_turn(&src.session_id, n),
        n => vcs.diff_checkpoints(&src.session_id, n - 1, n, paths),
    }
    .map_err(TimelineError::from)
}

/// Restores (or with `dry_run`, plans restoring) the workspace or `req.paths` to checkpoint
/// `req.to_turn`; a real restore is recorded as change-turn in session turn `session_turn`.
pub fn restore(
    src: &TimelineSource,
    session_turn: u32,
    req: &RestoreRequest,
) -> Result<RestoreView, TimelineError> {
    if let Some(bad) = req.paths.iter().find(|p| !is_inside(p)) {
        return Err(TimelineError::Outside(bad.clone()));
    }
    let mut vcs = open(src)?;
    let opts = RestoreOptions {
        to_turn: req.to_turn,
        paths: req
            .paths
            .iter()
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect(),
        dry_run: req.dry_run,
        force: req.force,
    };
    let report = vcs.restore(&src.session_id, session_turn, &opts)?;
    Ok(restore_view(report))
}

/// The face's view of a restore report.
pub fn restore_view(r: RestoreReport) -> RestoreView {
    RestoreView {
        restored: r.restored,
        overwritten: r.overwritten,
        deleted: r.deleted,
        missing: r.missing,
        conflicts: r
            .conflicts
            .into_iter()
            .map(|c| ConflictView {
                kind: match c.cause {
                    Some(cairn_vcs::Cause::Outside) => ConflictKind::Outside,
                    Some(cairn_vcs::Cause::Uncertain { .. }) => ConflictKind::Uncertain,
                    Some(cairn_vcs::Cause::Session { .. }) => ConflictKind::OtherSession,
                    None => ConflictKind::Other,
                },
                path: c.path,
                reason: c.reason,
            })
            .collect(),
        dry_run: r.dry_run,
        to_turn: r.to_turn,
        turn: r.turn,
    }
}

/// Whether a relative `path` from the page stays inside the workspace once `..` and `.` are
/// resolved lexically.
pub fn is_inside(path: &str) -> bool {
    cairn_policy::lexical::stays_inside(Path::new(path))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn paths_from_the_page_stay_in_the_workspace() {
        assert!(is_inside("a/b.txt"));
        assert!(is_inside("a/../b.txt"));
        assert!(!is_inside("../x"));
        assert!(!is_inside("/etc/passwd"));
    }

    #[test]
    fn a_session_without_checkpoints_has_an_empty_timeline() {
        let state = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let src = TimelineSource {
            state_dir: state.path().to_path_buf(),
            workspace: ws.path().canonicalize().unwrap(),
            session_id: "s1".into(),
        };
        let t = timeline(&src).unwrap();
        assert!(t.checkpoints.is_empty() && t.changes.is_empty());
        assert!(t.pending_restore.is_none());
        let req = RestoreRequest {
            to_turn: 0,
            paths: vec![],
            dry_run: true,
            force: false,
        };
        assert!(restore(&src, 1, &req).is_err());
    }
}
