//! Worktree sessions: a new session in a git worktree Cairn makes for it (running beside the
//! folder's), the review of a worktree (its diff file by file, inline comments as the next
//! message of its session), applying it to the folder as a change-turn of the folder session
//! the window holds, committing on its branch, and removing it. The logic is the runtime's
//! (`cairn_runtime::worktrees`, as the CLI's `cairn worktrees`); these map it to commands.

use std::path::PathBuf;
use std::sync::Arc;

use cairn_protocol::Progress;
use cairn_runtime::worktrees::{self, ApplyTarget};
use tauri::ipc::Channel;
use tauri::{Runtime, State, Window};

use crate::error::{ErrorCode, IpcError, IpcResult};
use crate::runtime::SessionRuntime;
use crate::state::AppState;
use crate::types::{
    ApplyView, CommitView, HandoffView, RemovalView, ReviewComment, ReviewView, SessionView,
    UpdateView, WorktreeDiskView,
};

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> IpcResult<T> + Send + 'static,
) -> IpcResult<T> {
    tauri::async_runtime::spawn_blocking(f).await?
}

fn folder(state: &AppState, label: &str) -> IpcResult<PathBuf> {
    state
        .slot(label)
        .workspace
        .ok_or_else(IpcError::no_workspace)
}

/// Checks a NAME typed by the user before anything is created.
fn checked_name(name: &str) -> IpcResult<String> {
    worktrees::faces::checked_name(name).map_err(IpcError::invalid)
}

/// Sends creation progress to the page, as often as the runtime's throttle says.
struct ProgressOut {
    channel: Channel<Progress>,
    throttle: worktrees::faces::ProgressThrottle,
}

impl ProgressOut {
    fn report(&self, done: u64, total: Option<u64>) {
        if self.throttle.due(done, total) {
            let _ = self.channel.send(Progress {
                task: "worktree".into(),
                done,
                total,
            });
        }
    }
}

/// Creates worktree `name` of the workspace's repository (or reuses it), with the folder's
/// uncommitted changes when `carry`, and shows a new session in it; the session shown before
/// goes on in the background. Creation taking over a second reports its progress to
/// `on_progress`.
#[tauri::command]
pub async fn new_worktree_session<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
    carry: bool,
    on_progress: Channel<Progress>,
) -> IpcResult<SessionView> {
    let label = window.label();
    let workspace = folder(&state, label)?;
    let name = checked_name(&name)?;
    let state_dir = state.config.state_dir.clone();
    let ws = workspace.clone();
    let prepared = blocking(move || {
        let out = ProgressOut {
            channel: on_progress,
            throttle: worktrees::faces::ProgressThrottle::new(),
        };
        let report = |done: u64, total: Option<u64>| out.report(done, total);
        Ok(worktrees::prepare(&ws, &state_dir, &name, carry, &report)?)
    })
    .await?;
    state.worktrees_changed();
    if prepared.worktree.created {
        // The trusted setup step of a new worktree (install dependencies, …), as `cairn run
        // --worktree` runs it; a failing one never undoes the worktree.
        for problem in
            worktrees::run_worktree_hooks("WorktreeCreate", &workspace, &prepared.worktree).await
        {
            tracing::warn!(window = label, "worktree setup: {problem}");
        }
    }
    tracing::info!(
        window = label,
        worktree = %prepared.worktree.name,
        created = prepared.worktree.created,
        left_out = prepared.left_out,
        "worktree session"
    );
    let choice = state.provider_choice();
    let runtime = tokio::task::block_in_place(|| {
        super::session::open_runtime(
            &state,
            &prepared.workspace,
            None,
            &choice,
            Some(prepared.worktree.clone()),
        )
    })?;
    super::board::show(&state, label, runtime.clone()).await?;
    super::session::remember_session(&state, &workspace, &runtime.id());
    Ok(cairn_runtime::host::view::view(&runtime)?)
}

/// Worktree `name`'s whole diff against its base, file by file.
#[tauri::command]
pub async fn worktree_review<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
) -> IpcResult<ReviewView> {
    let workspace = folder(&state, window.label())?;
    let state_dir = state.config.state_dir.clone();
    blocking(move || Ok(worktrees::review(&workspace, &state_dir, &name)?)).await
}

/// The one message inline review comments become ("address these"), sent by the page as the
/// next turn of the worktree's session; `null` when no comment says anything.
#[tauri::command]
pub fn review_message(comments: Vec<ReviewComment>) -> Option<String> {
    worktrees::review_message(&comments)
}

/// The folder session an apply is recorded in when the user is in one: the folder chat the
/// window shows (it must be idle); `None` when it shows another (a worktree's chat, or
/// none): the apply then goes to the worktree's own folder chat ([`ApplyTarget::Own`]),
/// never to whichever folder chat happens to run in the background.
fn held_folder_session(
    state: &AppState,
    label: &str,
    folder: &std::path::Path,
) -> IpcResult<Option<Arc<SessionRuntime>>> {
    let slot = state.slot(label);
    let held = slot
        .session
        .iter()
        .find(|r| r.workspace() == folder && r.saved().worktree.is_none())
        .cloned();
    if let Some(r) = &held {
        if r.is_active() || r.is_running() {
            return Err(IpcError::new(
                ErrorCode::Busy,
                "The folder's session is running: wait for its turn to end (or stop it), \
                 then apply.",
            ));
        }
    }
    Ok(held)
}

/// Applies worktree `name` to the folder (with `dry_run`, only says what it would do): a
/// change-turn of the folder chat the window shows (its timeline's Undo reverses it), or of
/// the worktree's own folder chat when it shows another. Conflicting files are left alone,
/// except those of `keep` (the folder's version stays) and `take` (the worktree's replaces
/// it, undoable with the change-turn).
#[tauri::command]
pub async fn apply_worktree<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
    dry_run: bool,
    keep: Option<Vec<String>>,
    take: Option<Vec<String>>,
) -> IpcResult<ApplyView> {
    let label = window.label();
    let workspace = folder(&state, label)?;
    let held = held_folder_session(&state, label, &workspace)?;
    let target = match &held {
        Some(r) => ApplyTarget::Held {
            id: r.id(),
            turns: r.saved().turns,
        },
        None => ApplyTarget::Own,
    };
    let resolutions: Vec<(String, worktrees::Resolution)> = keep
        .unwrap_or_default()
        .into_iter()
        .map(|p| (p, worktrees::Resolution::KeepFolder))
        .chain(
            take.unwrap_or_default()
                .into_iter()
                .map(|p| (p, worktrees::Resolution::TakeWorktree)),
        )
        .collect();
    let state_dir = state.config.state_dir.clone();
    let report = blocking(move || {
        Ok(if dry_run {
            worktrees::apply(&workspace, &state_dir, &name, true, &target)?
        } else {
            worktrees::apply_resolving(&workspace, &state_dir, &name, &target, &resolutions)?
        })
    })
    .await?;
    if !dry_run {
        state.worktrees_changed();
    }
    Ok(ApplyView::of(report, dry_run))
}

/// Brings the folder's HEAD into worktree `name` (a merge, or with `rebase` a rebase of its
/// commits); files left in conflict are listed, for the user to resolve in the worktree.
#[tauri::command]
pub async fn update_worktree<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
    rebase: bool,
) -> IpcResult<UpdateView> {
    let workspace = folder(&state, window.label())?;
    let state_dir = state.config.state_dir.clone();
    let done =
        blocking(move || Ok(worktrees::update(&workspace, &state_dir, &name, rebase)?)).await?;
    state.worktrees_changed();
    Ok(done)
}

/// Hands session `id` over, with its history, into worktree `to` (a new one takes the
/// folder's uncommitted changes along) or, without `to`, back to the folder (the worktree's
/// changes applied to it; conflicting files are left alone and listed; a chat whose
/// worktree was removed goes on in the window's folder, nothing applied). The session is
/// closed first (refused while it runs) and stays as it was; the copy's id is returned for
/// `open_session`.
#[tauri::command]
pub async fn handoff_session<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    id: String,
    to: Option<String>,
) -> IpcResult<HandoffView> {
    let label = window.label();
    let target = match to {
        Some(name) => worktrees::HandoffTo::Worktree(checked_name(&name)?),
        None => {
            let saved = cairn_runtime::SessionStore::new(&state.config.state_dir).load(&id)?;
            let gone = saved.worktree.is_some() && !std::path::Path::new(&saved.workspace).exists();
            if gone {
                worktrees::HandoffTo::RemovedTo(folder(&state, label)?)
            } else {
                worktrees::HandoffTo::Folder
            }
        }
    };
    super::board::close_one(&state, label, &id).await?;
    let state_dir = state.config.state_dir.clone();
    let done = blocking(move || Ok(worktrees::handoff(&state_dir, &id, &target)?)).await?;
    state.worktrees_changed();
    Ok(done.into())
}

/// A commit message for worktree `name`'s changes proposed by the model (one cheap request
/// over its diff); `null` when it proposes nothing. The user edits it before committing.
#[tauri::command]
pub async fn propose_commit<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
) -> IpcResult<Option<String>> {
    let workspace = folder(&state, window.label())?;
    let state_dir = state.config.state_dir.clone();
    let review = blocking(move || Ok(worktrees::review(&workspace, &state_dir, &name)?)).await?;
    let diff: String = review.files.iter().map(|f| f.diff.as_str()).collect();
    let choice = state.provider_choice();
    let llm = tokio::task::block_in_place(|| state.llm_for(&choice));
    if llm.blocked.is_some() {
        return Ok(None);
    }
    Ok(worktrees::propose_commit_message(llm.client, &llm.model, &diff).await)
}

/// Commits every change of worktree `name` on its branch with `message`.
#[tauri::command]
pub async fn commit_worktree<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
    message: String,
) -> IpcResult<CommitView> {
    let workspace = folder(&state, window.label())?;
    let state_dir = state.config.state_dir.clone();
    let done =
        blocking(move || Ok(worktrees::commit(&workspace, &state_dir, &name, &message)?)).await?;
    state.worktrees_changed();
    Ok(done.into())
}

/// Removes worktree `name`: refused (code `refused`, naming the files) while it holds
/// changes neither applied nor committed, unless `force`. Its sessions this window holds
/// are closed with it (refused while one of them runs).
#[tauri::command]
pub async fn remove_worktree<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    name: String,
    force: bool,
) -> IpcResult<RemovalView> {
    let label = window.label();
    let workspace = folder(&state, label)?;
    let slot = state.slot(label);
    let mine: Vec<Arc<SessionRuntime>> = slot
        .session
        .iter()
        .chain(&slot.background)
        .filter(|r| r.saved().worktree.as_deref() == Some(name.as_str()))
        .cloned()
        .collect();
    if mine.iter().any(|r| r.is_active()) {
        return Err(IpcError::new(
            ErrorCode::Busy,
            format!("A session in worktree {name} is running: stop it first."),
        ));
    }
    let state_dir = state.config.state_dir.clone();
    let held: Vec<String> = mine.iter().map(|r| r.id()).collect();
    let (removed, problems) =
        worktrees::remove_with_hooks(&workspace, &state_dir, &name, force, &held).await?;
    for problem in problems {
        tracing::warn!(window = label, "worktree removal: {problem}");
    }
    // Gone with their worktree: closed (and saved) now.
    for id in &held {
        super::board::close_one(&state, label, id).await?;
    }
    state.worktrees_changed();
    Ok(removed.into())
}

/// What the workspace repository's worktrees take on disk, and the disk budget.
#[tauri::command]
pub async fn worktree_disk<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<WorktreeDiskView> {
    let workspace = folder(&state, window.label())?;
    let state_dir = state.config.state_dir.clone();
    blocking(move || disk(&workspace, &state_dir)).await
}

/// Sets the worktrees' disk budget to `gb` gigabytes (at least 1) for every face using this
/// state dir (`cairn` reads it too).
#[tauri::command]
pub async fn set_worktree_budget<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    gb: u32,
) -> IpcResult<WorktreeDiskView> {
    let workspace = folder(&state, window.label())?;
    let state_dir = state.config.state_dir.clone();
    blocking(move || {
        worktrees::set_budget(&state_dir, u64::from(gb.max(1)) * 1024 * 1024 * 1024)
            .map_err(|e| IpcError::new(ErrorCode::Storage, e.to_string()))?;
        disk(&workspace, &state_dir)
    })
    .await
}

fn disk(workspace: &std::path::Path, state_dir: &std::path::Path) -> IpcResult<WorktreeDiskView> {
    worktrees::disk_view(workspace, state_dir)
        .map_err(|e| IpcError::new(ErrorCode::Storage, e.to_string()))
}
