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
    let mut rows: Vec<BoardRow> = store
        .list()?
        .into_iter()
        .filter(|s| s.workspace == path)
        .map(|s| BoardRow {
            activity: activity_in(&state.host, &s.id),
            open: false,
            changed_files: None,
            worktree: None,
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
        rows.insert(
            0,
            BoardRow {
                activity: cairn_runtime::host::view::activity(r),
                open: true,
                changed_files: None,
                worktree: None,
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
    fill_changed_files(state, &workspace, &mut rows);
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
    })
}

/// Changed-file counts from the checkpoints, recounted for sessions saved since they were
/// counted (a turn's last checkpoint is stored before its final save).
fn fill_changed_files(state: &AppState, workspace: &Path, rows: &mut [BoardRow]) {
    let stale: Vec<String> = {
        let cache = crate::state::lock_pub(&state.changed_files);
        rows.iter()
            .filter(|r| r.turns > 0)
            .filter(|r| cache.get(&r.id).is_none_or(|(at, _)| *at != r.updated_at))
            .map(|r| r.id.clone())
            .collect()
    };
    if !stale.is_empty() {
        let counts = changed_files(&state.config.state_dir, workspace, &stale);
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
