//! Creating a worktree (or reusing one Cairn made): the branch `cairn/NAME` from HEAD, the
//! worktree registration in `.git/worktrees/cairn-NAME`, a checkout with progress, the
//! folder's uncommitted changes on request and the `.worktreeinclude` files.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use git2::build::CheckoutBuilder;
use git2::{Repository, StatusOptions};

use crate::error::{git, io, Result, WorktreeError};
use crate::record::Record;
use crate::repo::Repo;
use crate::store::StateStore;

/// How to create.
#[derive(Default)]
pub struct CreateOptions<'a> {
    /// Copy the folder's staged, unstaged and untracked changes into the new worktree.
    pub carry_changes: bool,
    /// Called with (files done, total) while the checkout runs.
    pub progress: Option<&'a (dyn Fn(u64, Option<u64>) + Sync)>,
}

/// A worktree ready for a session.
#[derive(Debug, Clone)]
pub struct Opened {
    /// Its record.
    pub record: Record,
    /// Whether this call created it.
    pub created: bool,
    /// The folder's uncommitted changes left out of a new worktree (without carrying).
    pub left_out: usize,
    /// Carried changes and `.worktreeinclude` files not copied, each with why (a link on
    /// the way is never followed).
    pub skipped: Vec<String>,
}

/// Opens worktree `name` of `repo`, creating it on first use. Two processes asking at once
/// create it once (the second waits, then reuses it).
pub fn open_or_create(repo: &Repo, name: &str, opts: &CreateOptions<'_>) -> Result<Opened> {
    crate::name::validate(name)?;
    let _lock = repo.records.lock(name)?;
    if let Some(record) = repo.records.get(name)? {
        if opts.carry_changes {
            return Err(WorktreeError::Usage(format!(
                "worktree {name} already exists: --carry-changes only applies when it is created"
            )));
        }
        check(repo, &record)?;
        return Ok(Opened {
            record,
            created: false,
            left_out: 0,
            skipped: Vec::new(),
        });
    }
    create(repo, name, opts)
}

/// Checks that the worktree of `record` is still the one Cairn made: not removed, its folder
/// there, its `.git` pointing to the recorded git dir and that git dir pointing back.
pub fn check(repo: &Repo, record: &Record) -> Result<()> {
    let name = &record.name;
    if record.removed.is_some() {
        return Err(WorktreeError::Usage(format!(
            "worktree {name} was removed; `cairn worktrees restore {name}` brings it back \
             (`cairn worktrees remove {name} --force` forgets it, freeing the name)"
        )));
    }
    if !record.path.is_dir() {
        return Err(WorktreeError::Usage(format!(
            "the folder of worktree {name} ({}) is gone (deleted or moved outside Cairn): move \
             it back, or `cairn worktrees remove {name} --force` forgets it (a branch holding \
             commits is kept)",
            record.path.display()
        )));
    }
    let dotgit = record.path.join(".git");
    let pointer = std::fs::read_to_string(&dotgit).unwrap_or_default();
    let points_to = pointer
        .trim()
        .strip_prefix("gitdir:")
        .map(|p| PathBuf::from(p.trim()));
    let back = std::fs::read_to_string(record.gitdir.join("gitdir")).unwrap_or_default();
    if points_to.as_deref() != Some(record.gitdir.as_path())
        || dotgit != Path::new(back.trim())
        || record.common_dir != repo.common_dir
    {
        return Err(WorktreeError::Usage(format!(
            "worktree {name} at {} no longer points to the git dir Cairn made for it ({}); not \
             using it",
            record.path.display(),
            record.gitdir.display()
        )));
    }
    Ok(())
}

fn create(repo: &Repo, name: &str, opts: &CreateOptions<'_>) -> Result<Opened> {
    let branch = crate::name::branch(name);
    let path = repo.worktree_path(name);
    let admin = repo.admin_dir(name);
    if repo
        .repo
        .find_branch(&branch, git2::BranchType::Local)
        .is_ok()
    {
        return Err(WorktreeError::Usage(format!(
            "a branch {branch} already exists and Cairn did not create it for a worktree: pick \
             another name"
        )));
    }
    if admin.exists() {
        return Err(WorktreeError::Usage(format!(
            "the repository already has a worktree registered as {}: pick another name",
            admin.display()
        )));
    }
    if path.exists() {
        return Err(WorktreeError::Usage(format!(
            "{} already exists and is not a worktree Cairn created: pick another name",
            path.display()
        )));
    }
    let head = match repo.repo.head() {
        Ok(h) => h,
        Err(e) if e.code() == git2::ErrorCode::UnbornBranch => {
            return Err(WorktreeError::Usage(
                "the repository has no commit yet: commit once before creating a worktree".into(),
            ))
        }
        Err(e) => return Err(git("reading HEAD")(e)),
    };
    let commit = head
        .peel_to_commit()
        .map_err(git("reading HEAD's commit"))?;
    let base = commit.id().to_string();
    repo.repo
        .branch(&branch, &commit, false)
        .map_err(git(format!("creating branch {branch}")))?;
    let made = register(&path, &admin, &branch)
        .and_then(|()| checkout(&path, opts.progress))
        .and_then(|_| finish(repo, name, &path, &admin, &branch, &base, opts));
    match made {
        Ok(o) => Ok(o),
        Err(e) => {
            // Leave nothing half made: the folder, the registration and the branch go.
            let _ = std::fs::remove_dir_all(&path);
            let _ = std::fs::remove_dir_all(&admin);
            if let Ok(mut b) = repo.repo.find_branch(&branch, git2::BranchType::Local) {
                let _ = b.delete();
            }
            Err(e)
        }
    }
}

/// Registers and checks out the worktree of `record` again (its branch must exist).
pub(crate) fn reattach(record: &Record) -> Result<()> {
    let made = register(&record.path, &record.gitdir, &record.branch)
        .and_then(|()| checkout(&record.path, None).map(|_| ()));
    if made.is_err() {
        let _ = std::fs::remove_dir_all(&record.path);
        let _ = std::fs::remove_dir_all(&record.gitdir);
    }
    made
}

/// Writes the worktree registration (what `git worktree add` writes): the admin dir with
/// `HEAD`, `commondir` and `gitdir`, and the worktree's `.git` file.
fn register(path: &Path, admin: &Path, branch: &str) -> Result<()> {
    std::fs::create_dir_all(path).map_err(io(format!("creating {}", path.display())))?;
    std::fs::create_dir_all(admin).map_err(io(format!("creating {}", admin.display())))?;
    let write = |p: PathBuf, text: String| {
        std::fs::write(&p, text).map_err(io(format!("writing {}", p.display())))
    };
    write(admin.join("HEAD"), format!("ref: refs/heads/{branch}\n"))?;
    write(admin.join("commondir"), "../..\n".into())?;
    write(
        admin.join("gitdir"),
        format!("{}\n", path.join(".git").display()),
    )?;
    write(path.join(".git"), format!("gitdir: {}\n", admin.display()))?;
    Ok(())
}

fn checkout(
    path: &Path,
    progress: Option<&(dyn Fn(u64, Option<u64>) + Sync)>,
) -> Result<Repository> {
    let wt = Repository::open(path).map_err(git(format!("opening {}", path.display())))?;
    {
        let mut co = CheckoutBuilder::new();
        co.force();
        if let Some(p) = progress {
            co.progress(move |_, done, total| p(done as u64, Some(total as u64)));
        }
        wt.checkout_head(Some(&mut co))
            .map_err(git(format!("checking out {}", path.display())))?;
    }
    Ok(wt)
}

#[allow(clippy::too_many_arguments)]
fn finish(
    repo: &Repo,
    name: &str,
    path: &Path,
    admin: &Path,
    branch: &str,
    base: &str,
    opts: &CreateOptions<'_>,
) -> Result<Opened> {
    let changes = folder_changes(&repo.repo)?;
    let mut carried = Vec::new();
    let mut skipped = Vec::new();
    if opts.carry_changes {
        for rel in &changes {
            match copy_or_remove(&repo.folder, path, rel)? {
                None => carried.push(rel.clone()),
                Some(why) => skipped.push(why),
            }
        }
    }
    let copied = crate::include::copy_included(&repo.repo, &repo.folder, path)?;
    skipped.extend(copied.skipped);
    let included = copied.copied;
    let skip: HashSet<String> = included.iter().cloned().collect();
    let store = StateStore::open(&repo.store_dir, &repo.common_dir)?;
    let tree = store.capture(path, &skip)?;
    let applied = store.keep(
        &StateStore::applied_ref(name),
        tree,
        "cairn: worktree created",
    )?;
    let record = Record {
        name: name.to_string(),
        path: path.to_path_buf(),
        branch: branch.to_string(),
        base: base.to_string(),
        common_dir: repo.common_dir.clone(),
        folder: repo.folder.clone(),
        gitdir: admin.to_path_buf(),
        created_at: chrono::Utc::now().to_rfc3339(),
        included,
        carried,
        applied: applied.to_string(),
        apply_session: None,
        removed: None,
    };
    repo.records.put(&record)?;
    Ok(Opened {
        left_out: if opts.carry_changes { 0 } else { changes.len() },
        record,
        created: true,
        skipped,
    })
}

/// The folder's uncommitted changes: staged, unstaged and untracked (not ignored) paths.
pub(crate) fn folder_changes(repo: &Repository) -> Result<Vec<String>> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .renames_head_to_index(false)
        .renames_index_to_workdir(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .map_err(git("reading the folder's changes"))?;
    Ok(statuses
        .iter()
        .filter(|e| e.status() != git2::Status::CURRENT)
        .filter_map(|e| e.path().ok().map(str::to_string))
        .collect())
}

/// Makes `rel` in `to_root` what it is in `from_root`: a copy of the file or link, or gone
/// when it is gone there. Links on the way (in either folder) are never followed: such a
/// path is not copied, and `Some` says which and why.
pub(crate) fn copy_or_remove(
    from_root: &Path,
    to_root: &Path,
    rel: &str,
) -> Result<Option<String>> {
    use crate::nofollow::{self, NoFollowError};
    let rel_path = Path::new(rel);
    let skipped = |e: NoFollowError, side: &str| -> Result<Option<String>> {
        match e {
            NoFollowError::Io(source) => Err(crate::error::WorktreeError::Io {
                context: format!("copying {rel} {side}"),
                source,
            }),
            other => Ok(Some(format!("{rel} (not copied: {other} {side})"))),
        }
    };
    let content = match nofollow::read(from_root, rel_path) {
        Ok(c) => c,
        Err(e) => return skipped(e, "in the folder"),
    };
    let done = match &content {
        Some(c) => nofollow::write(to_root, rel_path, c),
        None => nofollow::remove(to_root, rel_path),
    };
    match done {
        Ok(()) => Ok(None),
        Err(e) => skipped(e, "in the worktree"),
    }
}
