//! Removing a worktree without losing work, and bringing a removed one back.

use std::path::Path;

use git2::{Oid, Repository};
use serde::Serialize;

use crate::error::{git, io, Result, WorktreeError};
use crate::keep::{KeepBounds, KeptFiles};
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
    /// Those commits (short id and subject, newest first; at most 20).
    pub unmerged_commits: Vec<String>,
    /// Files neither applied nor committed that were removed (restorable).
    pub unapplied: Vec<String>,
    /// Ignored files, edited `.worktreeinclude` copies and nested repositories (as `dir/`)
    /// kept in Cairn's store (restorable).
    pub kept: Vec<String>,
    /// What could not be kept and was lost (only with `--force`), each with why.
    pub not_kept: Vec<String>,
    /// Dependency and build folders deleted without being kept.
    pub dropped: Vec<String>,
    /// Until when `cairn worktrees restore NAME` can bring it back (when there was work).
    pub restorable_until: Option<String>,
}

/// Removes worktree `name`. Refuses while it has changes neither applied nor committed, or
/// holds files that cannot be kept, unless `force`; its last state, ignored files, edited
/// `.worktreeinclude` copies and nested repositories stay in Cairn's store for
/// [`RETENTION_DAYS`].
pub fn remove(repo: &Repo, name: &str, force: bool) -> Result<Removal> {
    remove_within(repo, name, force, &KeepBounds::default())
}

/// [`remove`] with the bounds of what is kept.
pub fn remove_within(repo: &Repo, name: &str, force: bool, bounds: &KeepBounds) -> Result<Removal> {
    crate::name::validate(name)?;
    let _lock = repo.records.lock(name)?;
    let mut record = owned(repo, name)?;
    if record.removed.as_ref().is_some_and(|r| r.pending) {
        finish_removal(repo, &mut record)?;
    }
    if record.removed.is_some() {
        if !force {
            return Err(WorktreeError::Usage(format!(
                "worktree {name} is already removed (`cairn worktrees restore {name}` brings it \
                 back; `cairn worktrees remove {name} --force` forgets it and what it kept, \
                 freeing the name)"
            )));
        }
        // Forgetting a removed worktree: its kept state goes, a branch with commits stays.
        let ahead = crate::status::commits_ahead(&repo.repo, &record)?;
        let unmerged = unmerged_commits(&repo.repo, &record);
        forget_refs(repo, name);
        repo.records.delete(name)?;
        return Ok(Removal {
            name: name.into(),
            branch_deleted: false,
            commits_ahead: ahead,
            unmerged_commits: unmerged,
            unapplied: Vec::new(),
            kept: Vec::new(),
            not_kept: Vec::new(),
            dropped: Vec::new(),
            restorable_until: None,
        });
    }
    let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
    if !record.path.is_dir() {
        if !force {
            return Err(WorktreeError::Usage(format!(
                "the folder of worktree {name} ({}) is gone (deleted or moved outside Cairn); \
                 if you moved it, move it back; `cairn worktrees remove {name} --force` forgets \
                 it{}",
                record.path.display(),
                branch_note(repo, &record)
            )));
        }
        unregister(&record)?;
        let ahead = crate::status::commits_ahead(&repo.repo, &record)?;
        let unmerged = unmerged_commits(&repo.repo, &record);
        let deleted = ahead == 0 && delete_branch(&repo.repo, &record.branch);
        repo.records.delete(name)?;
        return Ok(Removal {
            name: name.into(),
            branch_deleted: deleted,
            commits_ahead: ahead,
            unmerged_commits: unmerged,
            unapplied: Vec::new(),
            kept: Vec::new(),
            not_kept: Vec::new(),
            dropped: Vec::new(),
            restorable_until: None,
        });
    }
    crate::create::check(repo, &record)?;
    // A half-done merge or rebase is not what the user would want kept.
    crate::update::rollback_locked(repo, &record)?;
    let now = crate::status::current_state(&store, &record)?;
    let unapplied = crate::status::unapplied(&store, &record, now)?;
    if !unapplied.is_empty() && !force {
        return Err(WorktreeError::Unapplied {
            name: name.to_string(),
            files: unapplied,
            days: RETENTION_DAYS,
        });
    }
    let kept = crate::keep::collect(&store, &record, bounds)?;
    if !kept.not_kept.is_empty() && !force {
        return Err(WorktreeError::NotKept {
            name: name.to_string(),
            files: kept.not_kept,
        });
    }
    let ahead = crate::status::commits_ahead(&repo.repo, &record)?;
    let unmerged = unmerged_commits(&repo.repo, &record);
    // Everything is in Cairn's store, and the record says so, before anything is deleted:
    // a removal killed half-way is finished by the next command, and stays restorable.
    let state = store.keep(
        &StateStore::removed_ref(name),
        now,
        "cairn: removed worktree",
    )?;
    let kept_files = match kept.tree {
        Some(tree) => Some(KeptFiles {
            state: store
                .keep(
                    &StateStore::kept_ref(name),
                    tree,
                    "cairn: files kept on removal",
                )?
                .to_string(),
            files: kept.files.clone(),
            dirs: kept.dirs.clone(),
            perms: kept.perms.clone(),
        }),
        None => None,
    };
    let at = chrono::Utc::now();
    record.removed = Some(Removed {
        at: at.to_rfc3339(),
        state: state.to_string(),
        branch_kept: ahead > 0,
        kept: kept_files,
        pending: true,
        restorable: !unapplied.is_empty() || kept.tree.is_some(),
    });
    repo.records.put(&record)?;
    let deleted = finish_removal(repo, &mut record)?;
    let restorable = record.removed.is_some();
    Ok(Removal {
        name: name.into(),
        branch_deleted: deleted,
        commits_ahead: ahead,
        unmerged_commits: unmerged,
        unapplied,
        kept: kept.files,
        not_kept: kept.not_kept,
        dropped: kept.dropped,
        restorable_until: restorable
            .then(|| (at + chrono::Duration::days(RETENTION_DAYS)).to_rfc3339()),
    })
}

/// Finishes the removal `record` is marked with (its state already kept): deletes what is
/// left of the folder, the registration and a branch without commits; forgets the record
/// when nothing was kept. Returns whether the branch was deleted.
fn finish_removal(repo: &Repo, record: &mut Record) -> Result<bool> {
    match std::fs::remove_dir_all(&record.path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(io(format!(
                "removing {} (its state is kept: the next `cairn worktrees remove {}` or `list` \
                 finishes the removal, `cairn worktrees restore {}` brings it back)",
                record.path.display(),
                record.name,
                record.name
            ))(e))
        }
        _ => {}
    }
    unregister(record)?;
    let ahead = crate::status::commits_ahead(&repo.repo, record)?;
    let deleted = ahead == 0 && delete_branch(&repo.repo, &record.branch);
    let Some(removed) = record.removed.as_mut() else {
        return Ok(deleted);
    };
    if !removed.restorable {
        forget_refs(repo, &record.name);
        repo.records.delete(&record.name)?;
        record.removed = None;
        return Ok(deleted);
    }
    removed.pending = false;
    removed.branch_kept = !deleted;
    repo.records.put(record)?;
    Ok(deleted)
}

/// Finishes every removal of the repository that was interrupted half-way (its state was
/// kept before anything was deleted); returns their names.
pub fn recover_removals(repo: &Repo) -> Result<Vec<String>> {
    let mut done = Vec::new();
    for record in repo.records.all()? {
        if !record.removed.as_ref().is_some_and(|r| r.pending) {
            continue;
        }
        let _lock = repo.records.lock(&record.name)?;
        let Some(mut again) = repo.records.get(&record.name)? else {
            continue;
        };
        if again.removed.as_ref().is_some_and(|r| r.pending) {
            finish_removal(repo, &mut again)?;
            done.push(record.name);
        }
    }
    Ok(done)
}

/// ` (its branch … keeps N commit(s))` when the branch holds commits, for messages.
fn branch_note(repo: &Repo, record: &Record) -> String {
    match crate::status::commits_ahead(&repo.repo, record) {
        Ok(n) if n > 0 => format!(
            " (its branch {} and its {n} commit(s) are kept)",
            record.branch
        ),
        _ => String::new(),
    }
}

/// The commits of the worktree's branch beyond its base: short id and subject, newest first
/// (at most 20).
pub fn unmerged_commits(repo: &Repository, record: &Record) -> Vec<String> {
    let list = || -> std::result::Result<Vec<String>, git2::Error> {
        let tip = repo
            .find_branch(&record.branch, git2::BranchType::Local)?
            .get()
            .peel_to_commit()?;
        let mut walk = repo.revwalk()?;
        walk.push(tip.id())?;
        walk.hide(Oid::from_str(&record.base)?)?;
        let mut out = Vec::new();
        for id in walk.take(20) {
            let c = repo.find_commit(id?)?;
            let short = c.id().to_string();
            out.push(format!(
                "{} {}",
                &short[..12.min(short.len())],
                c.summary().ok().flatten().unwrap_or("")
            ));
        }
        Ok(out)
    };
    list().unwrap_or_default()
}

fn forget_refs(repo: &Repo, name: &str) {
    if let Ok(store) = StateStore::open(&repo.store_dir, &repo.common_dir) {
        for r in [StateStore::removed_ref(name), StateStore::kept_ref(name)] {
            if let Ok(mut r) = store.repo.find_reference(&r) {
                let _ = r.delete();
            }
        }
    }
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
    if record.removed.as_ref().is_some_and(|r| r.pending) {
        finish_removal(repo, &mut record)?;
    }
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
    // The `.worktreeinclude` files as the folder has them now (edited ones come back from
    // what the removal kept, just below).
    for rel in &record.included {
        if let Some(why) = crate::create::copy_or_remove(&record.folder, &record.path, rel)? {
            tracing::warn!(%why, "an included file was not copied into the restored worktree");
        }
    }
    if let Some(kept) = &removed.kept {
        crate::keep::write_back(&store, kept, &record.path)?;
    }
    record.removed = None;
    repo.records.put(&record)?;
    Ok(record)
}

/// Makes the worktree's files what `state` holds (against what its checkout wrote).
pub(crate) fn write_state(store: &StateStore, worktree: &Path, state: Oid) -> Result<()> {
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
        forget_refs(repo, &record.name);
        repo.records.delete(&record.name)?;
        gone.push(record.name);
    }
    Ok(gone)
}
