//! The timeline of a window's session: its change-turns (per-turn checkpoints) with the files
//! each one changed, their diffs, the changes since the session started, and restores (dry
//! run, chosen paths, conflicts with the user's own edits, undoable). The same checkpoint
//! store and API as `cairn turns|diff|restore`; each call opens the store on a blocking
//! thread (libgit2 handles are not `Send`) and closes it again.

use std::path::{Path, PathBuf};

use cairn_vcs::{RestoreOptions, RestoreReport, TurnKind, TurnRecord, Vcs, VcsConfig, VcsError};

use crate::types::{
    CheckpointKind, CheckpointView, ConflictView, FileChange, RestoreRequest, RestoreView,
    RewindArchiveView, RewoundTurnView, TimelineView,
};

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

fn open(src: &TimelineSource) -> Result<Vcs, String> {
    let config = VcsConfig {
        watch: false,
        ..VcsConfig::default()
    };
    Vcs::open(&src.state_dir, &src.workspace, config).map_err(|e| e.to_string())
}

/// Per-file added and removed line counts of a unified diff (git's patch format), in the
/// order the files appear.
pub fn diff_stats(diff: &str) -> Vec<FileChange> {
    let mut out: Vec<FileChange> = Vec::new();
    let mut in_hunk = false;
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            in_hunk = false;
            let path = rest
                .rsplit_once(" b/")
                .map(|(_, b)| b)
                .unwrap_or(rest)
                .to_string();
            out.push(FileChange {
                path,
                added: 0,
                removed: 0,
            });
            continue;
        }
        if line.starts_with("@@") {
            in_hunk = true;
            continue;
        }
        let Some(file) = out.last_mut().filter(|_| in_hunk) else {
            continue;
        };
        if line.starts_with('+') {
            file.added += 1;
        } else if line.starts_with('-') {
            file.removed += 1;
        }
    }
    out
}

/// The files of a change-turn: the diff's counts, plus paths the record names that the diff
/// does not show (folders, unreadable files) with no counts.
fn files_of(record: &TurnRecord, diff: &str) -> Vec<FileChange> {
    let mut files = diff_stats(diff);
    for f in &record.files {
        if !files.iter().any(|c| &c.path == f) {
            files.push(FileChange {
                path: f.clone(),
                added: 0,
                removed: 0,
            });
        }
    }
    files
}

/// The checkpoint a restore went back to, from the summary the store records
/// (`restore to turn N` or `restore to turn N (paths)`).
pub fn restored_to(summary: &str) -> Option<u32> {
    let rest = summary.strip_prefix("restore to turn ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn view_of(record: &TurnRecord, diff: &str) -> CheckpointView {
    let kind = match record.kind {
        TurnKind::Agent => CheckpointKind::Agent,
        TurnKind::Restore => CheckpointKind::Restore,
        TurnKind::User => CheckpointKind::User,
    };
    CheckpointView {
        turn: record.turn,
        session_turn: record.session_turn,
        kind,
        summary: record.summary.clone(),
        at: record.at.clone(),
        files: files_of(record, diff),
        restored_to: match kind {
            CheckpointKind::Restore => restored_to(&record.summary),
            CheckpointKind::Agent | CheckpointKind::User => None,
        },
    }
}

/// Every change-turn of the session and the files changed since it started (empty when the
/// session changed nothing yet).
pub fn timeline(src: &TimelineSource) -> Result<TimelineView, String> {
    let vcs = open(src)?;
    let records = match vcs.turns(&src.session_id) {
        Ok(r) => r,
        Err(VcsError::NoCheckpoints(_)) => Vec::new(),
        Err(e) => return Err(e.to_string()),
    };
    let mut checkpoints = Vec::with_capacity(records.len());
    for r in &records {
        let diff = vcs
            .diff_turn(&src.session_id, r.turn)
            .map_err(|e| e.to_string())?;
        checkpoints.push(view_of(r, &diff));
    }
    let changes = match records.len() as u32 {
        0 => Vec::new(),
        n => {
            let diff = vcs
                .diff_checkpoints(&src.session_id, 0, n, &[])
                .map_err(|e| e.to_string())?;
            // A file changed and changed back does not count.
            diff_stats(&diff)
        }
    };
    let pending_restore = vcs
        .pending_restore()
        .map_err(|e| e.to_string())?
        .map(|p| format!("an interrupted restore to turn {} is pending", p.to_turn));
    Ok(TimelineView {
        checkpoints,
        changes,
        pending_restore,
        rewinds: rewinds(src),
    })
}

/// What the session's conversation rewinds removed, newest first.
fn rewinds(src: &TimelineSource) -> Vec<RewindArchiveView> {
    let store = cairn_runtime::store::SessionStore::new(&src.state_dir);
    let Ok(dir) = store.session_dir(&src.session_id) else {
        return Vec::new();
    };
    cairn_runtime::rewind_read::read_archives(&dir)
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
pub fn diff(src: &TimelineSource, turn: u32, paths: &[String]) -> Result<String, String> {
    let vcs = open(src)?;
    let count = vcs.turns(&src.session_id).map_err(|e| e.to_string())?.len() as u32;
    match turn {
        0 => vcs.diff_checkpoints(&src.session_id, 0, count, paths),
        n if paths.is_empty() => vcs.diff_turn(&src.session_id, n),
        n => vcs.diff_checkpoints(&src.session_id, n - 1, n, paths),
    }
    .map_err(|e| e.to_string())
}

/// Restores (or with `dry_run`, plans restoring) the workspace or `req.paths` to checkpoint
/// `req.to_turn`; a real restore is recorded as change-turn in session turn `session_turn`.
pub fn restore(
    src: &TimelineSource,
    session_turn: u32,
    req: &RestoreRequest,
) -> Result<RestoreView, String> {
    if let Some(bad) = req.paths.iter().find(|p| !is_inside(p)) {
        return Err(format!("`{bad}` is not a path inside the workspace."));
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
    let report = vcs
        .restore(&src.session_id, session_turn, &opts)
        .map_err(|e| e.to_string())?;
    Ok(restore_view(report))
}

/// The page's view of a restore report.
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

    const DIFF: &str = "diff --git a/a.txt b/a.txt\nindex 1..2 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-old\n+new\n+more\n same\ndiff --git a/dir/b.rs b/dir/b.rs\nnew file mode 100644\n--- /dev/null\n+++ b/dir/b.rs\n@@ -0,0 +1 @@\n+fn main() {}\n";

    #[test]
    fn stats_count_lines_per_file_and_skip_headers() {
        let s = diff_stats(DIFF);
        assert_eq!(
            s,
            vec![
                FileChange {
                    path: "a.txt".into(),
                    added: 2,
                    removed: 1
                },
                FileChange {
                    path: "dir/b.rs".into(),
                    added: 1,
                    removed: 0
                },
            ]
        );
        assert!(diff_stats("").is_empty());
    }

    #[test]
    fn a_restore_summary_names_its_target() {
        assert_eq!(restored_to("restore to turn 3"), Some(3));
        assert_eq!(restored_to("restore to turn 0 (a.txt, b/)"), Some(0));
        assert_eq!(restored_to("add a file"), None);
    }

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
