//! Typed listings of a session's change-turns: each turn's record with the files it changed
//! and their line counts, the checkpoint a restore went back to, and the files changed since
//! the session started. `cairn turns` and the app's timeline read these; nobody parses diffs.

use serde::Serialize;

use crate::diff::{FileStat, FileStatus};
use crate::error::Result;
use crate::log::{TurnKind, TurnRecord};
use crate::vcs::Vcs;

/// One change-turn as listings show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnEntry {
    /// The stored record (files, summary, attribution, what was not covered).
    pub record: TurnRecord,
    /// For a restore: the checkpoint it went back to.
    pub restored_to: Option<u32>,
    /// The files it changed with their line counts (in the diff's order), then the paths the
    /// record names that the diff does not show (folders, unreadable files) as
    /// [`FileStatus::Unknown`]. Without line stats every path is `Unknown` with no counts.
    pub files: Vec<FileStat>,
}

/// The paths a turn's own diff is limited to: `None` when it has nothing of its own (an
/// attributed agent turn whose changes were all someone else's), empty for "everything".
pub(crate) fn own_paths(t: &TurnRecord) -> Option<Vec<String>> {
    match t.span {
        Some(_) if t.kind == TurnKind::Agent => (!t.files.is_empty()).then(|| {
            t.files
                .iter()
                .map(|f| f.trim_end_matches('/').to_string())
                .collect()
        }),
        _ => Some(Vec::new()),
    }
}

/// The checkpoint a restore went back to: recorded, else (logs from before it was) read
/// from the summary the store wrote (`restore to turn N …`).
fn restored_to(t: &TurnRecord) -> Option<u32> {
    if t.kind != TurnKind::Restore {
        return None;
    }
    t.restored_to.or_else(|| {
        let rest = t.summary.strip_prefix("restore to turn ")?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })
}

/// A path without line counts.
fn unknown(path: &str) -> FileStat {
    FileStat {
        path: path.to_string(),
        status: FileStatus::Unknown,
        added: 0,
        removed: 0,
    }
}

impl Vcs {
    /// The session's change-turns, oldest first; with `line_stats`, each turn's files carry
    /// the counts of its diff (one tree diff per turn), else only the recorded paths.
    pub fn listing(&self, session: &str, line_stats: bool) -> Result<Vec<TurnEntry>> {
        let records = self.turns(session)?;
        let mut out = Vec::with_capacity(records.len());
        for record in records {
            let mut files = match (line_stats, own_paths(&record)) {
                (true, Some(own)) => crate::diff::stats(
                    &self.store.repo,
                    self.tree_of(&record.before)?,
                    self.tree_of(&record.after)?,
                    &own,
                )?,
                _ => Vec::new(),
            };
            for f in &record.files {
                if !files.iter().any(|c| &c.path == f) {
                    files.push(unknown(f));
                }
            }
            out.push(TurnEntry {
                restored_to: restored_to(&record),
                record,
                files,
            });
        }
        Ok(out)
    }

    /// The files that differ between the session's start and its last checkpoint, with line
    /// counts (a file changed and changed back does not count); empty before any change.
    pub fn changes_since_start(&self, session: &str) -> Result<Vec<FileStat>> {
        let log = self.load_log(session)?;
        let count = log.turns.len() as u32;
        if count == 0 {
            return Ok(Vec::new());
        }
        let a = self.checkpoint_tree(&log, 0)?;
        let b = self.checkpoint_tree(&log, count)?;
        crate::diff::stats(&self.store.repo, a, b, &[])
    }
}
