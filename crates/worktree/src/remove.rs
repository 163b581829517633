//! Removing a worktree without losing work, and bringing a removed one back.

use std::path::Path;

use git2::{Oid, Repository};
use serde::Serialize;

use crate::error::{git, io, Result, WorktreeError};
use crate::record::{Record, Removed};
use crate::repo::Repo;
use crate::store::StateStore;

/// How long a removed worktree's last state stays restorable.
pub const RETENTION_DAYS: i64 = 30;

/// What a removal did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Removal {
    /// NAME.
    pub name: String,
    /// Whether its branch was deleted (it held no commits beyond the base).
    pub branch_deleted: bool,
    /// Commits that kept the branch.
    pub commits_ahead: usize,
    /// Files neither applied nor committed that were removed (restorable).
    pub unapplied: Vec<String>,
    /// Until when `cairn worktrees restore NAME` can bring it back (when there was work).
    pub restorable_until: Option<String>,
}

/// Removes worktree `name`. Refuses while it has changes neither applied nor committed,
/// unless `force`; then its last state stays in Cairn's store for [`RETENTION_DAYS`].
pub fn remove(repo: &Repo, name: &str, force: bool) -> Result<Removal> {
    crate::name::validate(name)?;
    let _lock = repo.records.lock(name)?;
    let record = owned(repo, name)?;
    if record.removed.is_some() {
        return Err(WorktreeError::Usage(format!(
            "worktree {name} is already removed (`cairn worktrees restore {name}` brings it back)"
        )));
    }
    let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
    if !record.path.is_dir() {
        if !force {
            return Err(WorktreeError::Usage(format!(
                "the folder of worktree {name} ({}) is gone; `cairn worktrees remove {name} \
                 --force` forgets it",
                record.path.display()
            )));
        }
        unregister(&record)?;
        let ahead = crate::status::commits_ahead(&repo.repo, &record)?;
        let deleted = ahead == 0 && delete_branch(&repo.repo, &record.branch);
        repo.records.delete(name)?;
        return Ok(Removal {
            name: name.into(),
            branch_deleted: deleted,
            commits_ahead: ahead,
            unapplied: Vec::new(),
            restorable_until: None,
        });
    }
    crate::create::check(repo, &record)?;
    let now = crate::status::current_state(&store, &record)?;
    let unapplied = crate::status::unapplied(&store, &record, now)?;
    if !unapplied.is_empty() && !force {
        return Err(WorktreeError::Unapplied {
            name: name.to_string(),
            files: unapplied,
            days: RETENTION_DAYS,
        });
    }
    let ahead = crate::status::commits_ahead(&repo.repo, &record)?;
    let mut kept = None;
    if !unapplied.is_empty() {
        let state = store.keep(
            &StateStore::removed_ref(name),
            now,
            "cairn: removed worktree",
        )?;
        kept = Some(state);
    }
    std::fs::remove_dir_all(&record.path)
        .map_err(io(format!("removing {}", record.path.display())))?;
    unregister(&record)?;
    let deleted = ahead == 0 && delete_branch(&repo.repo, &record.branch);
    let restorable_until = match kept {
        Some(state) => {
            let at = chrono::Utc::now();
            let mut r = record.clone();
            r.removed = Some(Removed {
                at: at.to_rfc3339(),
                state: state.to_string(),
                branch_kept: !deleted,
            });
            repo.records.put(&r)?;
            Some((at + chrono::Duration::days(RETENTION_DAYS)).to_rfc3339())
        }
        None => {
            repo.records.delete(name)?;
            None
        }
    };
    Ok(Removal {
        name: name.into(),
        branch_deleted: deleted,
        commits_ahead: ahead,
        unapplied,
        restorable_until,
    })
}

/// The record of `name`, or a usage error when Cairn did not create it.
pub fn owned(repo: &Repo, name: &str) -> Result<Record> {
    match repo.records.get(name)? {
        Some(r) => Ok(r),
        None => Err(WorktreeError::Usage(format!(
            "no worktree {name} created by Cairn for this repository (see `cairn worktrees \
             list`); Cairn never touches worktrees it did not create"
        ))),
    }
}

/// Drops the registration in `.git/worktrees/` (only the one recorded as Cairn's).
fn unregister(record: &Record) -> Result<()> {
    let admin = &record.gitdir;
    let expected_parent = record.common_dir.join("worktrees");
    if admin.parent() != Some(expected_parent.as_path()) {
        return Err(WorktreeError::Usage(format!(
            "the recorded git dir {} is not a worktree registration of {}; not removing it",
            admin.display(),
            record.common_dir.display()
        )));
    }
    match std::fs::remove_dir_all(admin) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(io(format!("removing {}", admin.display()))(e))
        }
        _ => Ok(()),
    }
}

fn delete_branch(repo: &Repository, branch: &str) -> bool {
    match repo.find_branch(branch, git2::BranchType::Local) {
        Ok(mut b) => b.delete().is_ok(),
        Err(_) => false,
    }
}

/// Brings removed worktree `name` back at its folder, in its last state.
pub fn restore(repo: &Repo, name: &str) -> Result<Record> {
    crate::name::validate(name)?;
    let _lock = repo.records.lock(name)?;
    let mut record = owned(repo, name)?;
    let Some(removed) = record.removed.clone() else {
        return Err(WorktreeError::Usage(format!(
            "worktree {name} is not removed: nothing to restore"
        )));
    };
    let at = chrono::DateTime::parse_from_rfc3339(&removed.at)
        .map(|t| t.with_timezone(&chrono::Utc))
        .unwrap_or_else(|_| chrono::Utc::now());
    if chrono::Utc::now() - at > chrono::Duration::days(RETENTION_DAYS) {
        return Err(WorktreeError::Usage(format!(
            "worktree {name} was removed over {RETENTION_DAYS} days ago; its state is no longer kept"
        )));
    }
    if record.path.exists() {
        return Err(WorktreeError::Usage(format!(
            "{} exists: move it away to restore worktree {name} there",
            record.path.display()
        )));
    }
    let base = repo
        .repo
        .find_commit(Oid::from_str(&record.base).map_err(git("reading the base"))?)
        .map_err(git("reading the base commit"))?;
    if repo
        .repo
        .find_branch(&record.branch, git2::BranchType::Local)
        .is_err()
    {
        repo.repo
            .branch(&record.branch, &base, false)
            .map_err(git(format!("creating branch {}", record.branch)))?;
    }
    crate::create::reattach(&record)?;
    let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
    let state = store.tree_of(&removed.state)?;
    write_state(&store, &record.path, state)?;
    record.removed = None;
    repo.records.put(&record)?;
    Ok(record)
}

/// Makes the worktree's files what `state` holds (against what its checkout wrote).
fn write_state(store: &StateStore, worktree: &Path, state: Oid) -> Result<()> {
    let now = store.capture(worktree, &std::collections::HashSet::new())?;
    for path in crate::status::changed_paths(store, now, state)? {
        let target = worktree.join(&path);
        match store.entry(state, &path)? {
            Some((_, git2::FileMode::Tree)) => {}
            Some((oid, mode)) => {
                let bytes = store.blob(oid)?;
                crate::apply::write_file(&target, &bytes, mode)?;
            }
            None => {
                let _ = std::fs::remove_file(&target);
            }
        }
    }
    Ok(())
}

/// Forgets removed worktrees whose retention ended (their record and kept state); returns
/// their names.
pub fn prune_expired(repo: &Repo) -> Result<Vec<String>> {
    let mut gone = Vec::new();
    let now = chrono::Utc::now();
    for record in repo.records.all()? {
        let Some(removed) = &record.removed else {
            continue;
        };
        let Ok(at) = chrono::DateTime::parse_from_rfc3339(&removed.at) else {
            continue;
        };
        if now - at.with_timezone(&chrono::Utc) <= chrono::Duration::days(RETENTION_DAYS) {
            continue;
        }
        if let Ok(store) = StateStore::open(&repo.store_dir, &repo.common_dir) {
            if let Ok(mut r) = store
                .repo
                .find_reference(&StateStore::removed_ref(&record.name))
            {
                let _ = r.delete();
            }
        }
        repo.records.delete(&record.name)?;
        gone.push(record.name);
    }
    Ok(gone)
}
