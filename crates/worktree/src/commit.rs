//! "Commit on branch": everything changed in a worktree committed on its branch `cairn/NAME`
//! (the one kind of object Cairn writes into the user's repository, on request).

use serde::Serialize;

use crate::error::{Result, WorktreeError};
use crate::repo::Repo;

/// What a commit made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Committed {
    /// The new commit.
    pub commit: String,
    /// The worktree's branch.
    pub branch: String,
}

/// Commits every change of worktree `name` (tracked, untracked, not ignored) with `message`.
pub fn commit(repo: &Repo, name: &str, message: &str) -> Result<Committed> {
    let message = message.trim();
    if message.is_empty() {
        return Err(WorktreeError::Usage(
            "the commit message is empty: say what the change does".into(),
        ));
    }
    let _lock = repo.records.lock(name)?;
    let record = crate::remove::owned(repo, name)?;
    crate::create::check(repo, &record)?;
    let add = crate::gitcli::run(&record.path, &["add", "-A"])?;
    if !add.status.success() {
        return Err(WorktreeError::Refused(format!(
            "git add in worktree {name} failed: {}",
            String::from_utf8_lossy(&add.stderr).trim()
        )));
    }
    let out = crate::gitcli::run(&record.path, &["commit", "-q", "-m", message])?;
    if !out.status.success() {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let why = if text.contains("nothing to commit") {
            format!("worktree {name} has nothing to commit")
        } else {
            format!("git commit in worktree {name} failed: {}", text.trim())
        };
        return Err(WorktreeError::Refused(why));
    }
    let wt =
        git2::Repository::open(&record.path).map_err(crate::error::git("opening the worktree"))?;
    let head = wt
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(crate::error::git("reading the new commit"))?;
    Ok(Committed {
        commit: head.id().to_string(),
        branch: record.branch,
    })
}
