//! The sessions board: which session a window shows (switching never stops the others),
//! and the live list of the workspace's sessions pushed to the page over a channel whenever
//! one's state changes (running, queued, waiting for an approval or an answer, idle, error),
//! with each session's changed-file count.

use std::path::Path;
use std::sync::Arc;

use cairn_runtime::host::view::{activity_in, changed_files};
use tauri::ipc::Channel;
use tauri::{Runtime, State, Window};

use crate::error::IpcResult;
use crate::runtime::SessionRuntime;
use crate::state::AppState;
use crate::types::{BoardRow, BoardView, OpenRequestView};

/// Makes `next` the session window `label` shows. The one it showed stays open in the
/// background while it runs or waits for the user, else it is closed (and saved); so are
/// background sessions that finished meanwhile.
pub(crate) async fn show(
    state: &AppState,
    label: &str,
    next: Arc<SessionRuntime>,
) -> IpcResult<()> {
    let id = next.id();
    let done = state.with_slot(label, |slot| {
        slot.background.retain(|r| r.id() != id);
        if let Some(prev) = slot.session.replace(next.clone()) {
            if prev.id() != id {
                slot.background.push(prev);
            }
        }
        let (live, done): (Vec<_>, Vec<_>) = slot.background.drain(..).partition(|r| r.is_active());
        slot.background = live;
        done
    });
    state.attention.set_viewed(label, Some(id));
    for r in done {
        state.host.close(&r.id()).await?;
    }
    state.host.touch();
    Ok(())
}

/// Closes every session of window `label` (refused while one of them runs).
pub(crate) async fn close_all(state: &AppState, label: &str) -> IpcResult<()> {
    let slot = state.slot(label);
    let all: Vec<_> = slot
        .session
        .iter()
        .chain(&slot.background)
        .cloned()
        .collect();
    if all.iter().any(|r| r.is_active()) {
        return Err(crate::error::IpcError::busy());
    }
    for r in &all {
        state.host.close(&r.id()).await?;
    }
    state.with_slot(label, |slot| {
        slot.session = None;
        slot.background.clear();
    });
    state.attention.set_viewed(label, None);
    state.host.touch();
    Ok(())
}

/// Closes session `id` of window `label` (refused while it runs).
pub(crate) async fn close_one(state: &AppState, label: &str, id: &str) -> IpcResult<()> {
    let slot = state.slot(label);
    let Some(r) = slot
        .session
        .iter()
        .chain(&slot.background)
        .find(|r| r.id() == id)
        .cloned()
    else {
        return Ok(());
    };
    if r.is_active() {
        return Err(crate::error::IpcError::busy());
    }
    state.host.close(id).await?;
    let viewed = state.with_slot(label, |slot| {
        slot.background.retain(|r| r.id() != id);
        if slot.session.as_ref().is_some_and(|s| s.id() == id) {
            slot.session = None;
            true
        } else {
            false
        }
    });
    if viewed {
        state.attention.set_viewed(label, None);
    }
    state.host.touch();
    Ok(())
}

/// The board of window `label` now (blocking: it lists the store and may count files).
pub(crate) fn board_of(state: &AppState, label: &str) -> IpcResult<BoardView> {
    let slot = state.slot(label);
    let Some(workspace) = slot.workspace.clone() else {
        return Ok(BoardView::default());
    };
    let viewed = slot.session.as_ref().map(|s| s.id());
    let path = workspace.display().to_string();
    let store = cairn_runtime::SessionStore::new(&state.config.state_dir);
    let saved = store.list()?;
    let (worktrees, worktrees_unavailable) = match worktrees_of(state, &workspace, &saved) {
        Ok(w) => (w, None),
        Err(why) => (Vec::new(), Some(why)),
    };
    // A worktree session belongs to the board of the folder its worktree was made from.
    let in_worktree = |s: &cairn_runtime::SessionSummary| {
        s.worktree.as_ref().is_some_and(|name| {
            worktrees
                .iter()
                .any(|w| &w.name == name && Path::new(&s.workspace).starts_with(&w.path))
        })
    };
    let mut places: Vec<(String, std::path::PathBuf)> = saved
        .iter()
        .map(|s| (s.id.clone(), std::path::PathBuf::from(&s.workspace)))
        .collect();
    let mut rows: Vec<BoardRow> = saved
        .into_iter()
        .filter(|s| (s.workspace == path && s.worktree.is_none()) || in_worktree(s))
        .map(|s| BoardRow {
            activity: activity_in(&state.host, &s.id),
            open: false,
            changed_files: None,
            worktree: s.worktree,
            id: s.id,
            name: s.name,
            updated_at: s.updated_at,
            turns: s.turns,
            model: s.model,
        })
        .collect();
    // Open sessions not saved yet whose first turn is under way come first (a new session
    // with nothing run yet is not listed, as before the board).
    let open: Vec<_> = slot
        .session
        .iter()
        .chain(&slot.background)
        .cloned()
        .collect();
    for r in open.iter().rev() {
        let id = r.id();
        if !r.is_active() || rows.iter().any(|row| row.id == id) {
            continue;
        }
        let saved = r.saved();
        places.push((id.clone(), r.workspace().to_path_buf()));
        rows.insert(
            0,
            BoardRow {
                activity: cairn_runtime::host::view::activity(r),
                open: true,
                changed_files: None,
                worktree: saved.worktree,
                id,
                name: saved.name,
                updated_at: saved.updated_at,
                turns: saved.turns,
                model: saved.model,
            },
        );
    }
    for row in &mut rows {
        row.open = open.iter().any(|r| r.id() == row.id);
    }
    fill_changed_files(state, &mut rows, &places);
    let open_request = crate::state::lock_pub(&state.open_requests)
        .get(label)
        .map(|(seq, id)| OpenRequestView {
            seq: *seq,
            id: id.clone(),
        });
    Ok(BoardView {
        rows,
        viewed,
        open_request,
        worktrees,
        worktrees_unavailable,
    })
}

/// The worktrees of the repository of `workspace`, listed again when one of their sessions
/// was saved or a worktree changed since they were listed (a listing reads their trees).
fn worktrees_of(
    state: &AppState,
    workspace: &Path,
    saved: &[cairn_runtime::SessionSummary],
) -> Result<Vec<cairn_runtime::worktrees::WorktreeView>, String> {
    let generation = state
        .worktree_generation
        .load(std::sync::atomic::Ordering::SeqCst);
    let mut key = generation.to_string();
    for s in saved.iter().filter(|s| s.worktree.is_some()) {
        key.push_str(&format!("|{}@{}", s.id, s.updated_at));
    }
    if let Some((at, list)) = crate::state::lock_pub(&state.worktree_lists).get(workspace) {
        if *at == key {
            return list.clone();
        }
    }
    let list = cairn_runtime::worktrees::list(workspace, &state.config.state_dir)
        .map_err(|e| unavailable(workspace, &e));
    crate::state::lock_pub(&state.worktree_lists)
        .insert(workspace.to_path_buf(), (key, list.clone()));
    list
}

/// Why a workspace has no worktrees, in plain words.
fn unavailable(workspace: &Path, e: &cairn_runtime::worktrees::Error) -> String {
    let in_git = workspace.ancestors().any(|d| d.join(".git").exists());
    if in_git {
        format!("Worktree sessions are not available here: {e}")
    } else {
        "This folder is not in a git repository, so its sessions cannot run in worktrees of          their own: run `git init` and make a first commit to use them."
            .to_string()
    }
}

/// Changed-file counts from the checkpoints, recounted for sessions saved since they were
/// counted (a turn's last checkpoint is stored before its final save).
fn fill_changed_files(
    state: &AppState,
    rows: &mut [BoardRow],
    workspaces: &[(String, std::path::PathBuf)],
) {
    let stale: Vec<String> = {
        let cache = crate::state::lock_pub(&state.changed_files);
        rows.iter()
            .filter(|r| r.turns > 0)
            .filter(|r| cache.get(&r.id).is_none_or(|(at, _)| *at != r.updated_at))
            .map(|r| r.id.clone())
            .collect()
    };
    if !stale.is_empty() {
        // Counted per workspace (a worktree session's checkpoints are of its worktree).
        let mut counts = std::collections::HashMap::new();
        let mut places: Vec<&std::path::PathBuf> = workspaces
            .iter()
            .filter(|(id, _)| stale.contains(id))
            .map(|(_, w)| w)
            .collect();
        places.sort();
        places.dedup();
        for place in places {
            let ids: Vec<String> = stale
                .iter()
                .filter(|id| workspaces.iter().any(|(i, w)| i == *id && w == place))
                .cloned()
                .collect();
            if !ids.is_empty() {
                counts.extend(changed_files(&state.config.state_dir, place, &ids));
            }
        }
        let mut cache = crate::state::lock_pub(&state.changed_files);
        for r in rows.iter().filter(|r| stale.contains(&r.id)) {
            cache.insert(
                r.id.clone(),
                (
                    r.updated_at.clone(),
                    counts.get(&r.id).copied().unwrap_or(0),
                ),
            );
        }
    }
    let cache = crate::state::lock_pub(&state.changed_files);
    for r in rows.iter_mut() {
        r.changed_files = cache.get(&r.id).map(|(_, n)| *n);
    }
}

/// Streams the window's sessions board to `on_board`: now, then whenever a session's state
/// changes. Returns when the page stops listening, the window closes or a newer call for
/// the same window replaces it.
#[tauri::command]
pub async fn watch_board<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    on_board: Channel<BoardView>,
) -> IpcResult<()> {
    let label = window.label().to_string();
    let generation = state.next_board_watch(&label);
    let mut changes = state.host.changes();
    let mut last: Option<BoardView> = None;
    loop {
        changes.borrow_and_update();
        if state.board_watch(&label) != Some(generation) {
            return Ok(());
        }
        let board = tokio::task::block_in_place(|| board_of(&state, &label));
        match board {
            Ok(board) if last.as_ref() != Some(&board) => {
                if on_board.send(board.clone()).is_err() {
                    return Ok(());
                }
                last = Some(board);
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e.message, "cannot list the sessions board"),
        }
        if changes.changed().await.is_err() {
            return Ok(());
        }
    }
}

/// Shows session `id` in its window on the user's behalf (a click on its notification):
/// the window comes to the front and its board asks the page to open the session.
pub fn request_open<R: Runtime>(app: &tauri::AppHandle<R>, id: &str) {
    use tauri::Manager;
    let state = app.state::<AppState>();
    let Some(label) = state.window_of(id) else {
        return;
    };
    {
        let mut requests = crate::state::lock_pub(&state.open_requests);
        let seq = requests.get(&label).map_or(1, |(n, _)| n + 1);
        requests.insert(label.clone(), (seq, id.to_string()));
    }
    if let Some(w) = app.get_webview_window(&label) {
        let _ = w.unminimize();
        let _ = w.set_focus();
    }
    state.host.touch();
}
