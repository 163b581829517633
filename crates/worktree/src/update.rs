//! Keeping a worktree current: the folder's newer HEAD merged (or rebased) into the
//! worktree's branch, conflicts left in the worktree for the agent or the user to resolve.
//! Runs the git CLI in the worktree (as the user would) with the repository's hooks off.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{git, io, Result, WorktreeError};
use crate::record::Record;
use crate::repo::Repo;
use crate::store::StateStore;

/// How to bring the folder's HEAD in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateHow {
    /// `git merge` (a merge commit when both moved).
    Merge,
    /// `git rebase` (the worktree's commits replayed on the folder's HEAD).
    Rebase,
}

/// What an update did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Updated {
    /// The folder's HEAD that was brought in.
    pub head: String,
    /// Whether the worktree already had it (nothing ran).
    pub up_to_date: bool,
    /// Files git left in conflict (resolve, commit or continue, then update again).
    pub conflicts: Vec<String>,
}

/// Brings the folder's HEAD into worktree `name` (an update killed half-way before is
/// rolled back first).
pub fn update(repo: &Repo, name: &str, how: UpdateHow) -> Result<Updated> {
    let _lock = repo.records.lock(name)?;
    let mut record = crate::remove::owned(repo, name)?;
    crate::create::check(repo, &record)?;
    rollback_locked(repo, &record)?;
    let head = repo
        .repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(git("reading the folder's HEAD"))?
        .id();
    let wt = git2::Repository::open(&record.path).map_err(git("opening the worktree"))?;
    let wt_head = wt
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(git("reading the worktree's HEAD"))?
        .id();
    let contains = wt_head == head
        || wt
            .graph_descendant_of(wt_head, head)
            .map_err(git("comparing the worktree with the folder"))?;
    if contains {
        record.base = head.to_string();
        repo.records.put(&record)?;
        return Ok(Updated {
            head: head.to_string(),
            up_to_date: true,
            conflicts: Vec::new(),
        });
    }
    let sha = head.to_string();
    // What to roll back to if this process dies half-way through git: HEAD, the branch and
    // every changed file (kept in Cairn's store), written before git runs.
    let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
    let state = crate::status::current_state(&store, &record)?;
    let kept = store.keep(&StateStore::update_ref(name), state, "cairn: before update")?;
    let journal = UpdateJournal {
        head: wt_head.to_string(),
        state: kept.to_string(),
    };
    write_journal(repo, name, &journal)?;
    let args: Vec<&str> = match how {
        UpdateHow::Merge => vec!["merge", "--no-edit", &sha],
        UpdateHow::Rebase => vec!["rebase", &sha],
    };
    let out = crate::gitcli::run(&record.path, &args)?;
    let conflicts = conflicted(&record.path)?;
    // Git finished (conflicts left for the user are its normal outcome): nothing to recover.
    remove_journal(repo, name)?;
    if !out.status.success() && conflicts.is_empty() {
        return Err(WorktreeError::Refused(format!(
            "git {} in worktree {name} failed: {}",
            args[0],
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    if conflicts.is_empty() {
        record.base = sha.clone();
        repo.records.put(&record)?;
    }
    Ok(Updated {
        head: sha,
        up_to_date: false,
        conflicts,
    })
}

/// Files in conflict in the worktree.
fn conflicted(dir: &Path) -> Result<Vec<String>> {
    let out = crate::gitcli::run(dir, &["diff", "--name-only", "--diff-filter=U"])?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// What an update in progress rolls back to: the worktree's HEAD commit (its branch) and its
/// state (a commit in Cairn's store), written before git runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct UpdateJournal {
    head: String,
    state: String,
}

fn journal_path(repo: &Repo, name: &str) -> std::path::PathBuf {
    repo.records.dir().join(format!("{name}.update.json"))
}

fn write_journal(repo: &Repo, name: &str, j: &UpdateJournal) -> Result<()> {
    use std::io::Write;
    let path = journal_path(repo, name);
    let tmp = path.with_extension("json.tmp");
    let bytes = serde_json::to_vec(j).map_err(|source| WorktreeError::Record {
        context: format!("writing {}", path.display()),
        source,
    })?;
    let mut f = std::fs::File::create(&tmp).map_err(io(format!("writing {}", tmp.display())))?;
    f.write_all(&bytes)
        .and_then(|()| f.sync_all())
        .map_err(io(format!("writing {}", tmp.display())))?;
    std::fs::rename(&tmp, &path).map_err(io(format!("writing {}", path.display())))
}

fn remove_journal(repo: &Repo, name: &str) -> Result<()> {
    let path = journal_path(repo, name);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(io(format!("removing {}", path.display()))(e))
        }
        _ => Ok(()),
    }
}

/// Rolls back an update of worktree `name` that was killed half-way (a merge or rebase git
/// did not finish): the rebase or merge state goes, the branch and HEAD point where they
/// did, the index is HEAD's and every file is as it was. Returns whether there was one.
pub fn rollback_update(repo: &Repo, name: &str) -> Result<bool> {
    let _lock = repo.records.lock(name)?;
    let record = crate::remove::owned(repo, name)?;
    if record.removed.is_some() || !record.path.is_dir() {
        return Ok(false);
    }
    crate::create::check(repo, &record)?;
    rollback_locked(repo, &record)
}

/// [`rollback_update`] with the worktree's lock already held.
pub(crate) fn rollback_locked(repo: &Repo, record: &Record) -> Result<bool> {
    let path = journal_path(repo, &record.name);
    let j: UpdateJournal = match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|source| WorktreeError::Record {
            context: format!("reading {}", path.display()),
            source,
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
    };
    tracing::info!(worktree = %record.name, "rolling back an update that was interrupted");
    clear_stale_locks(repo, record);
    // Git's own state of the merge or rebase in progress.
    for f in [
        "rebase-merge",
        "rebase-apply",
        "MERGE_HEAD",
        "MERGE_MSG",
        "MERGE_MODE",
        "AUTO_MERGE",
        "REBASE_HEAD",
        "CHERRY_PICK_HEAD",
    ] {
        let p = record.gitdir.join(f);
        let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
    }
    let head = git2::Oid::from_str(&j.head).map_err(git("reading the update journal"))?;
    repo.repo
        .reference(
            &format!("refs/heads/{}", record.branch),
            head,
            true,
            "cairn: roll back an interrupted update",
        )
        .map_err(git(format!("resetting branch {}", record.branch)))?;
    std::fs::write(
        record.gitdir.join("HEAD"),
        format!("ref: refs/heads/{}\n", record.branch),
    )
    .map_err(io("resetting the worktree's HEAD"))?;
    let wt = git2::Repository::open(&record.path).map_err(git("opening the worktree"))?;
    let commit = wt
        .find_commit(head)
        .map_err(git("reading the worktree's HEAD"))?;
    wt.reset(commit.as_object(), git2::ResetType::Mixed, None)
        .map_err(git("resetting the worktree's index"))?;
    let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
    let state = store.tree_of(&j.state)?;
    crate::remove::write_state(&store, &record.path, state)?;
    remove_journal(repo, &record.name)?;
    Ok(true)
}

/// The lock files git holds while it updates the worktree (its git dir's `*.lock`, its
/// branch's ref lock). A git that outlived the killed Cairn process releases them within a
/// moment; what is still there after two seconds was left by a killed git and is removed.
fn clear_stale_locks(repo: &Repo, record: &Record) {
    let locks = || -> Vec<std::path::PathBuf> {
        let mut out: Vec<std::path::PathBuf> = std::fs::read_dir(&record.gitdir)
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "lock"))
                    .collect()
            })
            .unwrap_or_default();
        let branch = repo
            .common_dir
            .join(format!("refs/heads/{}.lock", record.branch));
        if branch.exists() {
            out.push(branch);
        }
        out
    };
    let started = std::time::Instant::now();
    while !locks().is_empty() && started.elapsed() < std::time::Duration::from_secs(2) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for lock in locks() {
        tracing::info!(lock = %lock.display(), "removing a lock left by a killed git");
        let _ = std::fs::remove_file(&lock);
    }
}
