//! The sessions board: which session a window shows (switching never stops the others),
//! and the live list of the workspace's sessions pushed to the page over a channel whenever
//! one's state changes (running, queued, waiting for an approval or an answer, idle, error),
//! with each session's changed-file count, and when another process using the same state
//! folder (the CLI, another app) created or saved a session.

use std::sync::Arc;

use cairn_runtime::host::board::board;
use tauri::ipc::Channel;
use tauri::{Runtime, State, Window};

use crate::error::IpcResult;
use crate::runtime::SessionRuntime;
use crate::state::AppState;
use crate::types::{BoardView, OpenRequestView};

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
    let open: Vec<_> = slot
        .session
        .iter()
        .chain(&slot.background)
        .cloned()
        .collect();
    let mut view = board(
        &state.host,
        &state.config.state_dir,
        &state.board_cache,
        &workspace,
        &open,
        slot.session.as_ref().map(|s| s.id()),
    )?;
    view.open_request = crate::state::lock_pub(&state.open_requests)
        .get(label)
        .map(|(seq, id)| OpenRequestView {
            seq: *seq,
            id: id.clone(),
        });
    Ok(view)
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
    let store = cairn_runtime::store::SessionStore::new(&state.config.state_dir);
    let mut seen = tokio::task::block_in_place(|| {
        cairn_runtime::index::store_fingerprint(&store, |id| state.host.get(id).is_some())
    });
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
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
            }
            () = store_changed(&state.host, &store, &mut seen) => {}
        }
    }
}

/// How often the board looks for sessions saved by other processes on the same state folder.
const STORE_POLL: std::time::Duration = std::time::Duration::from_secs(1);

/// Returns once a session of the state folder was created, saved or deleted since `seen`
/// by another process using it (another app, the CLI); a `stat` per session each
/// [`STORE_POLL`]. Sessions open in this app are left out (their changes reach the board
/// through the host's own notices, not a relisting at every save of a streaming turn).
/// Sessions kept in another state folder are not seen.
async fn store_changed(
    host: &cairn_runtime::host::Host,
    store: &cairn_runtime::store::SessionStore,
    seen: &mut u64,
) {
    let mut tick = tokio::time::interval(STORE_POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let now = tokio::task::block_in_place(|| {
            cairn_runtime::index::store_fingerprint(store, |id| host.get(id).is_some())
        });
        if now != *seen {
            *seen = now;
            return;
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
