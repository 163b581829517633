//! What a face shows of worktrees: the board's rows, the review of one (its diff file by
//! file) and the message inline review comments become.

use std::path::Path;

use cairn_worktree::{FileStatus, Repo, StateStore, WorktreeError};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::index::SessionQuery;
use crate::store::SessionStore;

/// A worktree Cairn created, with what it holds (a board row; `cairn worktrees list --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct WorktreeView {
    /// NAME.
    pub name: String,
    /// Folder.
    pub path: String,
    /// Branch (`cairn/NAME`).
    pub branch: String,
    /// Base commit.
    pub base: String,
    /// Its sessions' ids, newest first.
    pub sessions: Vec<String>,
    /// Files changed against the base.
    pub changed_files: u32,
    /// Changed files neither applied to the folder nor committed.
    pub unapplied_files: u32,
    /// Commits beyond the base.
    pub commits_ahead: u32,
    /// RFC 3339 creation time.
    pub created_at: String,
    /// Bytes on disk (build output included).
    #[ts(type = "number")]
    pub bytes: u64,
    /// Why this worktree cannot be read (its folder gone or moved, its `.git` changed, its
    /// repository state unreadable), in words the user can act on; `null` when it works. The
    /// others list, apply and remove normally.
    pub broken: Option<String>,
}

/// The worktrees of the repository of `workspace` (usage error outside a repository); removed
/// ones are left out, and a removal interrupted half-way is finished first. A worktree that
/// cannot be read is listed as `broken` (with why), never failing the others.
pub fn list(workspace: &Path, state_dir: &Path) -> Result<Vec<WorktreeView>, WorktreeError> {
    let repo = Repo::discover(workspace, &super::layout(state_dir))?;
    let _ = cairn_worktree::prune_expired(&repo);
    match cairn_worktree::recover_removals(&repo) {
        Ok(done) if !done.is_empty() => {
            tracing::info!(?done, "finished worktree removals that were interrupted")
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(error = %e, "cannot finish an interrupted worktree removal"),
    }
    let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
    let sessions = SessionStore::new(state_dir)
        .search(&SessionQuery::default())
        .unwrap_or_default();
    let mut out = Vec::new();
    for record in repo.records.all()? {
        if record.removed.is_some() {
            continue;
        }
        let ids = sessions
            .iter()
            .filter(|x| {
                x.worktree.as_deref() == Some(record.name.as_str())
                    && Path::new(&x.workspace).starts_with(&record.path)
            })
            .map(|x| x.id.clone())
            .collect();
        let status = cairn_worktree::check(&repo, &record)
            .and_then(|()| {
                // An update killed half-way is rolled back on the next start.
                cairn_worktree::rollback_update(&repo, &record.name).map(|_| ())
            })
            .and_then(|()| cairn_worktree::status(&repo, &store, &record));
        out.push(match status {
            Ok(s) => WorktreeView {
                name: s.name,
                path: s.path,
                branch: s.branch,
                base: s.base,
                sessions: ids,
                changed_files: s.changed_files as u32,
                unapplied_files: s.unapplied_files as u32,
                commits_ahead: s.commits_ahead as u32,
                created_at: s.created_at,
                bytes: s.bytes,
                broken: None,
            },
            Err(e) => WorktreeView {
                commits_ahead: cairn_worktree::commits_ahead(&repo.repo, &record).unwrap_or(0)
                    as u32,
                bytes: cairn_worktree::disk_use(&record.path),
                name: record.name,
                path: record.path.display().to_string(),
                branch: record.branch,
                base: record.base,
                sessions: ids,
                changed_files: 0,
                unapplied_files: 0,
                created_at: record.created_at,
                broken: Some(e.to_string()),
            },
        });
    }
    Ok(out)
}

/// How a reviewed file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum ReviewStatus {
    /// New.
    Added,
    /// Changed.
    Modified,
    /// Deleted.
    Deleted,
}

/// One file of a worktree's review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ReviewFile {
    /// Path relative to the worktree.
    pub path: String,
    /// How it changed.
    pub status: ReviewStatus,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    /// Binary (no lines shown).
    pub binary: bool,
    /// Its unified diff.
    pub diff: String,
}

/// A worktree's whole diff against its base, file by file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ReviewView {
    /// NAME.
    pub name: String,
    /// Branch.
    pub branch: String,
    /// Base commit.
    pub base: String,
    /// Changed files, by path.
    pub files: Vec<ReviewFile>,
}

/// The review of worktree `name` of the repository of `workspace`.
pub fn review(workspace: &Path, state_dir: &Path, name: &str) -> Result<ReviewView, WorktreeError> {
    let repo = Repo::discover(workspace, &super::layout(state_dir))?;
    let record = cairn_worktree::owned(&repo, name)?;
    cairn_worktree::check(&repo, &record)?;
    let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
    let files = cairn_worktree::file_diffs(&store, &record)?
        .into_iter()
        .map(|f| ReviewFile {
            path: f.path,
            status: match f.status {
                FileStatus::Added => ReviewStatus::Added,
                FileStatus::Modified => ReviewStatus::Modified,
                FileStatus::Deleted => ReviewStatus::Deleted,
            },
            added: f.added,
            removed: f.removed,
            binary: f.binary,
            diff: f.patch,
        })
        .collect();
    Ok(ReviewView {
        name: record.name,
        branch: record.branch,
        base: record.base,
        files,
    })
}

/// An inline comment the user wrote on a line of a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ReviewComment {
    /// File (relative to the worktree).
    pub path: String,
    /// Line number in the worktree's version (the old version's for a removed line).
    pub line: u32,
    /// The line commented on, as shown.
    pub quote: String,
    /// What the user wrote.
    pub text: String,
}

/// The one message "address these" sends to the worktree's agent; `None` without comments
/// that say something.
pub fn review_message(comments: &[ReviewComment]) -> Option<String> {
    let said: Vec<&ReviewComment> = comments
        .iter()
        .filter(|c| !c.text.trim().is_empty())
        .collect();
    if said.is_empty() {
        return None;
    }
    let mut out = String::from(
        "Please address these review comments on your changes (file:line, the line, the comment):\n",
    );
    for (i, c) in said.iter().enumerate() {
        out.push_str(&format!("\n{}. {}:{}\n", i + 1, c.path, c.line));
        let quote = c.quote.trim_end();
        if !quote.is_empty() {
            out.push_str(&format!("   > {quote}\n"));
        }
        for line in c.text.trim().lines() {
            out.push_str(&format!("   {line}\n"));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_become_one_numbered_message() {
        let c = |path: &str, line, quote: &str, text: &str| ReviewComment {
            path: path.into(),
            line,
            quote: quote.into(),
            text: text.into(),
        };
        let msg = review_message(&[
            c("src/a.rs", 12, "let x = 1;", "use a constant"),
            c("b.md", 3, "", "  "),
            c("b.md", 4, "Title", "typo\nand tone"),
        ])
        .unwrap_or_default();
        assert!(
            msg.contains("1. src/a.rs:12\n   > let x = 1;\n   use a constant\n"),
            "{msg}"
        );
        assert!(
            msg.contains("2. b.md:4\n   > Title\n   typo\n   and tone\n"),
            "{msg}"
        );
        assert!(!msg.contains("b.md:3"));
        assert_eq!(review_message(&[c("a", 1, "x", " ")]), None);
    }
}
