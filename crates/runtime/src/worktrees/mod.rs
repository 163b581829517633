//! Worktree sessions, as both faces use them: where worktrees go, preparing one for a run,
//! trusting it again when a session resumes, what its sandbox may write, listing them with
//! their sessions, and applying one back to the folder as a change-turn of a folder session.

mod apply;
pub mod faces;
mod handoff;
mod message;
mod usage;
mod view;

use std::path::{Path, PathBuf};

use cairn_protocol::WorktreeRef;
use cairn_worktree::{CreateOptions, Layout, Record, Repo, WorktreeError};

pub use apply::{apply, apply_resolving, ApplyReport, ApplyTarget};
pub use cairn_worktree::{
    listed, ApplyConflict, Committed, Removal, Resolution, WorktreeError as Error,
};
pub use handoff::{handoff, Handoff, HandoffTo};
pub use message::propose_commit_message;
pub use usage::{budget_bytes, disk_view, set_budget, usage, WorktreeDiskView, WorktreesUsage};
pub use view::{
    list, review, review_message, ReviewComment, ReviewFile, ReviewStatus, ReviewView, WorktreeView,
};

/// Cairn's worktree root: `CAIRN_WORKTREES_DIR`, else `<state dir>-worktrees` next to the
/// state dir (its own folder of the data dir: never inside the protected state dir).
pub fn worktrees_root(state_dir: &Path) -> PathBuf {
    if let Some(d) = crate::user_config::var("CAIRN_WORKTREES_DIR") {
        return PathBuf::from(d);
    }
    let name = state_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cairn".into());
    match state_dir.parent() {
        Some(parent) => parent.join(format!("{name}-worktrees")),
        None => state_dir.join("..").join(format!("{name}-worktrees")),
    }
}

/// Where Cairn puts worktrees and their records for state dir `state_dir`.
pub fn layout(state_dir: &Path) -> Layout {
    Layout {
        state_dir: state_dir.to_path_buf(),
        root: worktrees_root(state_dir),
    }
}

/// A worktree ready for a session.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The session's workspace: the worktree's counterpart of the folder's workspace.
    pub workspace: PathBuf,
    /// What `turn_start` reports.
    pub worktree: WorktreeRef,
    /// Uncommitted changes of the folder left out of a new worktree.
    pub left_out: usize,
    /// Carried changes and `.worktreeinclude` files not copied, each with why (a link on the
    /// way is never followed).
    pub skipped: Vec<String>,
}

/// Opens worktree `name` of the repository of `workspace` (creating it on first use, with
/// the folder's uncommitted changes when `carry`); `progress` gets (files done, total) while
/// a new one is checked out.
pub fn prepare(
    workspace: &Path,
    state_dir: &Path,
    name: &str,
    carry: bool,
    progress: &(dyn Fn(u64, Option<u64>) + Sync),
) -> Result<Prepared, WorktreeError> {
    // A git directory is no workspace, nor the way to a worktree of its repository.
    if let Ok(canon) = workspace.canonicalize() {
        crate::git_dir::refuse_git_dir(&canon).map_err(|e| WorktreeError::Usage(e.to_string()))?;
    }
    let repo = Repo::discover(workspace, &layout(state_dir))?;
    let opened = cairn_worktree::open_or_create(
        &repo,
        name,
        &CreateOptions {
            carry_changes: carry,
            progress: Some(progress),
        },
    )?;
    let workspace = under(&opened.record.path, &repo.sub);
    if !workspace.is_dir() {
        std::fs::create_dir_all(&workspace).map_err(|e| {
            WorktreeError::Usage(format!(
                "the workspace {} does not exist in worktree {name}: {e}",
                workspace.display()
            ))
        })?;
    }
    Ok(Prepared {
        workspace,
        worktree: reference(&opened.record, opened.created),
        left_out: opened.left_out,
        skipped: opened.skipped,
    })
}

/// `root` joined with `sub` (no trailing separator when `sub` is empty).
pub(crate) fn under(root: &Path, sub: &Path) -> PathBuf {
    if sub.as_os_str().is_empty() {
        root.to_path_buf()
    } else {
        root.join(sub)
    }
}

/// The folder workspace a session of worktree `name` working in `workspace` belongs to
/// (the folder's counterpart of `workspace`, as `prepare` made it).
pub fn folder_of(workspace: &Path, state_dir: &Path, name: &str) -> Result<PathBuf, WorktreeError> {
    let record = trusted(workspace, state_dir, name)?;
    let sub = workspace
        .strip_prefix(&record.path)
        .unwrap_or(Path::new(""));
    Ok(under(&record.folder, sub))
}

/// Where the sessions of the folder workspace's worktrees work: worktree NAME's counterpart
/// of the workspace, whether that worktree still exists or was removed (a removed worktree's
/// sessions stay the folder's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterparts {
    dir: PathBuf,
    sub: PathBuf,
}

impl Counterparts {
    /// Worktree `name`'s counterpart of the folder workspace.
    pub fn of(&self, name: &str) -> PathBuf {
        under(&self.dir.join(name), &self.sub)
    }
}

/// The [`Counterparts`] of folder workspace `workspace` (a usage error outside a repository).
pub fn counterparts(workspace: &Path, state_dir: &Path) -> Result<Counterparts, WorktreeError> {
    let repo = Repo::discover(workspace, &layout(state_dir))?;
    Ok(Counterparts {
        dir: repo.worktrees_dir,
        sub: repo.sub,
    })
}

/// Worktree `name`'s counterpart of the folder workspace `workspace` (where a terminal
/// "in the worktree" opens), checked to be Cairn's.
pub fn workspace_in(
    workspace: &Path,
    state_dir: &Path,
    name: &str,
) -> Result<PathBuf, WorktreeError> {
    let repo = Repo::discover(workspace, &layout(state_dir))?;
    let record = cairn_worktree::owned(&repo, name)?;
    cairn_worktree::check(&repo, &record)?;
    Ok(under(&record.path, &repo.sub))
}

/// Commits every change of worktree `name` of the repository of `workspace` on its branch.
pub fn commit(
    workspace: &Path,
    state_dir: &Path,
    name: &str,
    message: &str,
) -> Result<Committed, WorktreeError> {
    let repo = Repo::discover(workspace, &layout(state_dir))?;
    cairn_worktree::commit(&repo, name, message)
}

/// What bringing the folder's HEAD into a worktree did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct UpdateView {
    /// The folder's HEAD that was brought in.
    pub head: String,
    /// The worktree already had it (nothing ran).
    pub up_to_date: bool,
    /// Files git left in conflict in the worktree.
    pub conflicts: Vec<String>,
}

/// Brings the folder's HEAD into worktree `name` by a merge (or, with `rebase`, a rebase of
/// the worktree's commits); conflicts are left in the worktree and listed.
pub fn update(
    workspace: &Path,
    state_dir: &Path,
    name: &str,
    rebase: bool,
) -> Result<UpdateView, WorktreeError> {
    let repo = Repo::discover(workspace, &layout(state_dir))?;
    let how = if rebase {
        cairn_worktree::UpdateHow::Rebase
    } else {
        cairn_worktree::UpdateHow::Merge
    };
    let u = cairn_worktree::update(&repo, name, how)?;
    Ok(UpdateView {
        head: u.head,
        up_to_date: u.up_to_date,
        conflicts: u.conflicts,
    })
}

/// Removes worktree `name` of the repository of `workspace` (refused while it holds work
/// neither applied nor committed, unless `force`; a usage error while a process holds one
/// of its sessions open, except the ones in `held`: the caller holds those open, idle, and
/// closes them after).
pub fn remove(
    workspace: &Path,
    state_dir: &Path,
    name: &str,
    force: bool,
    held: &[String],
) -> Result<Removal, WorktreeError> {
    let repo = Repo::discover(workspace, &layout(state_dir))?;
    let record = cairn_worktree::owned(&repo, name)?;
    let store = crate::store::SessionStore::new(state_dir);
    let sessions = store
        .search(&crate::index::SessionQuery::default())
        .unwrap_or_default();
    // Held while removing, so no session starts in it meanwhile.
    let mut locks = Vec::new();
    for s in sessions.iter().filter(|s| {
        s.worktree.as_deref() == Some(name)
            && Path::new(&s.workspace).starts_with(&record.path)
            && !held.contains(&s.id)
    }) {
        match store.lock(&s.id) {
            Ok(l) => locks.push(l),
            Err(_) => {
                return Err(WorktreeError::Usage(format!(
                    "session {} is running in worktree {name}: stop it first",
                    s.id
                )))
            }
        }
    }
    cairn_worktree::remove(&repo, name, force)
}

/// The `turn_start` facts of `record`.
pub fn reference(record: &Record, created: bool) -> WorktreeRef {
    WorktreeRef {
        name: record.name.clone(),
        path: record.path.display().to_string(),
        branch: record.branch.clone(),
        created,
    }
}

/// The record of the worktree a session in `workspace` runs in, checked again (its `.git`
/// still points where Cairn made it).
pub fn trusted(workspace: &Path, state_dir: &Path, name: &str) -> Result<Record, WorktreeError> {
    let repo = Repo::discover(workspace, &layout(state_dir))?;
    let record = cairn_worktree::owned(&repo, name)?;
    cairn_worktree::check(&repo, &record)?;
    if !workspace.starts_with(&record.path) {
        return Err(WorktreeError::Usage(format!(
            "{} is not inside worktree {name} ({})",
            workspace.display(),
            record.path.display()
        )));
    }
    Ok(record)
}

/// What a worktree session's sandbox may write besides the worktree: git's own files for
/// it (its git dir, the objects, its branch's ref and log). The repository's `hooks/` and
/// `config` stay read-only, like the rest of the repository and the folder.
pub fn sandbox_writable(record: &Record) -> Vec<PathBuf> {
    let common = &record.common_dir;
    let mut out = vec![record.gitdir.clone(), common.join("objects")];
    for dir in [
        common.join("refs/heads/cairn"),
        common.join("logs/refs/heads/cairn"),
    ] {
        // A bind mount needs the folder to exist.
        if std::fs::create_dir_all(&dir).is_ok() {
            out.push(dir);
        }
    }
    out
}

/// The exit status a worktree error maps to in the CLI contract: 2 usage, 1 refused.
pub fn exit_code(e: &WorktreeError) -> u8 {
    if e.is_usage() {
        2
    } else {
        1
    }
}

/// Runs the `WorktreeCreate` or `WorktreeRemove` hooks of the folder's repository (the
/// user's, and the project's once trusted): a create hook in the new worktree, a remove hook
/// in the folder (the worktree is gone); returns what went wrong, for the user (a failing
/// setup step never undoes the worktree).
pub async fn run_worktree_hooks(event: &str, folder: &Path, worktree: &WorktreeRef) -> Vec<String> {
    let hooks = crate::hooks::load(folder);
    let cwd = if event == "WorktreeRemove" {
        folder
    } else {
        Path::new(&worktree.path)
    };
    let Some(gate) = hooks.gate("", cwd) else {
        return Vec::new();
    };
    gate.run_event(
        event,
        serde_json::json!({
            "worktree": {"name": worktree.name, "path": worktree.path, "branch": worktree.branch},
            "folder": folder,
        }),
    )
    .await
}

/// Removes worktree `name` as [`remove`] does, then runs the folder's `WorktreeRemove`
/// hooks in the folder; the second value says what went wrong with them. Every face removes
/// worktrees through this.
pub async fn remove_with_hooks(
    workspace: &Path,
    state_dir: &Path,
    name: &str,
    force: bool,
    held: &[String],
) -> Result<(Removal, Vec<String>), WorktreeError> {
    let (ws, dir, n, held) = (
        workspace.to_path_buf(),
        state_dir.to_path_buf(),
        name.to_string(),
        held.to_vec(),
    );
    let done = tokio::task::spawn_blocking(move || {
        let repo = Repo::discover(&ws, &layout(&dir))?;
        let record = cairn_worktree::owned(&repo, &n)?;
        let removal = remove(&ws, &dir, &n, force, &held)?;
        Ok::<_, WorktreeError>((removal, repo.folder.clone(), reference(&record, false)))
    })
    .await
    .map_err(|e| WorktreeError::Usage(format!("the removal stopped: {e}")))?;
    let (removal, folder, gone) = done?;
    let problems = run_worktree_hooks("WorktreeRemove", &folder, &gone).await;
    Ok((removal, problems))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("repo");
        cairn_testkit::git::repo_with(&folder, &[("sub/a.txt", "one\n"), ("b.txt", "b\n")]);
        let folder = folder.canonicalize().unwrap();
        let state = dir.path().join("state");
        (dir, folder, state)
    }

    #[test]
    fn a_worktree_sessions_folder_and_a_folders_worktree_counterpart_map_both_ways() {
        let (_dir, folder, state) = repo();
        let p = prepare(&folder.join("sub"), &state, "w", false, &|_, _| {}).unwrap();
        assert!(p.workspace.ends_with("w/sub"), "{:?}", p.workspace);
        assert_eq!(
            folder_of(&p.workspace, &state, "w").unwrap(),
            folder.join("sub")
        );
        assert_eq!(
            workspace_in(&folder.join("sub"), &state, "w").unwrap(),
            p.workspace
        );
        assert_eq!(
            workspace_in(&folder, &state, "w").unwrap(),
            PathBuf::from(&p.worktree.path)
        );
        assert!(workspace_in(&folder, &state, "nope").is_err());
    }

    #[test]
    fn removal_refuses_unapplied_work_and_a_session_held_elsewhere_but_not_the_callers() {
        let (_dir, folder, state) = repo();
        let p = prepare(&folder, &state, "w", false, &|_, _| {}).unwrap();
        std::fs::write(p.workspace.join("b.txt"), "changed\n").unwrap();
        let refused = remove(&folder, &state, "w", false, &[]).unwrap_err();
        assert!(
            matches!(refused, WorktreeError::Unapplied { .. }),
            "{refused}"
        );
        assert!(refused.to_string().contains("b.txt"), "{refused}");

        // A session of the worktree that some process holds open.
        let store = crate::store::SessionStore::new(&state);
        let now = chrono::Utc::now().to_rfc3339();
        let saved = crate::store::SavedSession {
            name_source: "auto".into(),
            turns: 1,
            worktree: Some("w".into()),
            ..crate::store::SavedSession::new(
                "s1",
                &p.workspace.display().to_string(),
                "",
                "",
                &now,
            )
        };

        store.save(&saved).unwrap();
        let lock = store.lock("s1").unwrap();
        let busy = remove(&folder, &state, "w", true, &[]).unwrap_err();
        assert!(busy.is_usage(), "{busy}");
        assert!(p.workspace.is_dir());
        // The caller holds it (and closes it after): removed, the work kept restorable.
        let gone = remove(&folder, &state, "w", true, &["s1".into()]).unwrap();
        assert_eq!(gone.unapplied, ["b.txt"]);
        assert!(!p.workspace.exists());
        drop(lock);
    }
}
