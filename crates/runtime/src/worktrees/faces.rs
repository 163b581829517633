//! What a face shows of the worktree operations (apply, handoff, commit, remove), and the
//! check of a worktree name a user typed, for every face.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Serialize;
use ts_rs::TS;

use super::{ApplyReport, Committed, Handoff, Removal};

/// What applying a worktree to the folder did (or, for a dry run, would do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ApplyView {
    /// Nothing was written.
    pub dry_run: bool,
    /// Paths applied (written, removed, or already as in the worktree).
    pub applied: Vec<String>,
    /// Paths left untouched, and why (plain words).
    pub conflicts: Vec<ApplyConflictView>,
    /// The folder session the apply is a change-turn of.
    pub session: Option<String>,
    /// Its name (may be empty: the face shows a placeholder).
    pub session_name: Option<String>,
    /// That change-turn (its Undo restores to the one before).
    pub checkpoint: Option<u32>,
}

/// What handing a session over did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct HandoffView {
    /// The new session (the copy, in its new place).
    pub session: String,
    /// Its worktree, or null in the folder.
    pub worktree: Option<String>,
    /// Handed to the folder: the apply of the worktree's changes.
    pub apply: Option<ApplyView>,
}

/// A path an apply left untouched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ApplyConflictView {
    /// Path relative to the folder.
    pub path: String,
    /// Why.
    pub reason: String,
    /// Settled by "Keep folder's version" or "Take worktree's version"; otherwise it is for
    /// the user to sort out by hand (a link or folder in the way).
    pub resolvable: bool,
}

/// A commit made on a worktree's branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct CommitView {
    /// The new commit.
    pub commit: String,
    /// The branch.
    pub branch: String,
}

/// What removing a worktree did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct RemovalView {
    /// NAME.
    pub name: String,
    /// Its branch was deleted (it held no commits beyond its base).
    pub branch_deleted: bool,
    /// Commits that kept the branch.
    pub commits_ahead: u32,
    /// Files neither applied nor committed that were removed (restorable for a while).
    pub unapplied: Vec<String>,
}

/// Checks a NAME typed by the user before anything is created.
pub fn checked_name(name: &str) -> Result<String, String> {
    let name = name.trim();
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with(['-', '.'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    if ok {
        Ok(name.to_string())
    } else {
        Err(
            "A worktree name is 1 to 64 letters, digits, dots, dashes or underscores, not \
             starting with a dash or a dot."
                .to_string(),
        )
    }
}

impl ApplyView {
    /// The view of an apply's report.
    pub fn of(report: ApplyReport, dry_run: bool) -> ApplyView {
        ApplyView {
            dry_run,
            applied: report.applied,
            conflicts: report
                .conflicts
                .into_iter()
                .map(|c| ApplyConflictView {
                    path: c.path,
                    reason: c.reason,
                    resolvable: c.resolvable,
                })
                .collect(),
            session: report.session,
            session_name: report.session_name,
            checkpoint: report.checkpoint,
        }
    }
}

impl From<Handoff> for HandoffView {
    fn from(done: Handoff) -> Self {
        HandoffView {
            session: done.session,
            worktree: done.worktree,
            apply: done.apply.map(|r| ApplyView::of(r, false)),
        }
    }
}

impl From<Committed> for CommitView {
    fn from(done: Committed) -> Self {
        CommitView {
            commit: done.commit,
            branch: done.branch,
        }
    }
}

impl From<Removal> for RemovalView {
    fn from(removed: Removal) -> Self {
        RemovalView {
            name: removed.name,
            branch_deleted: removed.branch_deleted,
            commits_ahead: u32::try_from(removed.commits_ahead).unwrap_or(u32::MAX),
            unapplied: removed.unapplied,
        }
    }
}

/// A long operation's progress is shown once it runs longer than this.
pub const PROGRESS_AFTER: Duration = Duration::from_secs(1);
/// At most one progress message per this long.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// When a face shows a worktree creation's progress: only after [`PROGRESS_AFTER`], at most
/// every [`PROGRESS_EVERY`]; the last count seen is kept for a final message.
pub struct ProgressThrottle {
    started: Instant,
    /// When a message was last shown, and the last count seen.
    last: Mutex<Option<(Instant, u64, Option<u64>)>>,
}

impl ProgressThrottle {
    /// A throttle for an operation starting now.
    pub fn new() -> Self {
        Self::started_at(Instant::now())
    }

    /// A throttle for an operation that started at `started`.
    pub fn started_at(started: Instant) -> Self {
        ProgressThrottle {
            started,
            last: Mutex::new(None),
        }
    }

    /// Whether `done` of `total` should be shown now (it is remembered either way).
    pub fn due(&self, done: u64, total: Option<u64>) -> bool {
        let now = Instant::now();
        if now.duration_since(self.started) < PROGRESS_AFTER {
            return false;
        }
        let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        if last.is_some_and(|(at, _, _)| now.duration_since(at) < PROGRESS_EVERY) {
            *last = last.map(|(at, _, _)| (at, done, total));
            return false;
        }
        *last = Some((now, done, total));
        true
    }

    /// The total of the last count seen, once any was shown (for a final "all done").
    pub fn shown_total(&self) -> Option<Option<u64>> {
        let last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
        last.map(|(_, _, total)| total)
    }
}

impl Default for ProgressThrottle {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn progress_shows_only_after_a_second_and_at_most_every_100_ms() {
        let quick = ProgressThrottle::new();
        assert!(!quick.due(1, Some(10)), "a quick creation shows nothing");
        assert_eq!(quick.shown_total(), None);
        let slow = ProgressThrottle::started_at(Instant::now() - Duration::from_secs(2));
        assert!(slow.due(3, Some(10)));
        assert!(!slow.due(4, Some(10)), "not twice within 100 ms");
        assert_eq!(slow.shown_total(), Some(Some(10)));
    }

    #[test]
    fn worktree_names_are_checked_before_anything_is_created() {
        assert_eq!(checked_name(" feat-1.x_y ").unwrap(), "feat-1.x_y");
        for bad in ["", "-x", ".x", "a/b", "a b", &"x".repeat(65)] {
            assert!(checked_name(bad).is_err(), "{bad}");
        }
    }
}
