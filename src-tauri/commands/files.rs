//! Files panel commands: list a workspace folder, the file list for `@path` completion, the
//! live-refresh watcher (events over a channel of the calling window only), and stored image
//! attachments of the window's session read back for the transcript.

use std::path::PathBuf;

use tauri::ipc::Channel;
use tauri::{Runtime, State, Window};

use crate::error::{IpcError, IpcResult};
use crate::state::AppState;
use crate::types::{DirListing, FileIndex, FilesEvent, WatchStatus};
use crate::watch::WorkspaceWatch;

/// The folder the files panel shows: the shown session's (a worktree session's checkout),
/// else the window's workspace.
fn workspace(state: &AppState, label: &str) -> IpcResult<PathBuf> {
    super::shown_folder(state, label)
}

/// The entries of workspace folder `path` ("" = the root), ignored files left out; the
/// folder is watched from now on when the window's watcher runs.
#[tauri::command]
pub async fn list_dir<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    path: String,
) -> IpcResult<DirListing> {
    let ws = workspace(&state, window.label())?;
    let slot = state.slot(window.label());
    let root = ws.clone();
    let listing =
        tauri::async_runtime::spawn_blocking(move || crate::files::list_dir(&root, &path))
            .await?
            .map_err(IpcError::invalid)?;
    if let Some(watch) = slot.files.filter(|w| w.root() == ws) {
        let dir = ws.join(&listing.path);
        if let Err(e) = watch.watch_dir(&dir) {
            tracing::debug!(error = %e, "files panel: folder not watched");
        }
    }
    Ok(listing)
}

/// Every file of the workspace (ignored ones left out), for `@path` completion.
#[tauri::command]
pub async fn workspace_files<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<FileIndex> {
    let ws = workspace(&state, window.label())?;
    tauri::async_runtime::spawn_blocking(move || crate::files::index(&ws))
        .await?
        .map_err(IpcError::invalid)
}

/// Starts (or restarts) the window's file watcher, sending changed folders to `on_event`.
/// A watcher the platform refuses is reported, never fatal.
#[tauri::command]
pub fn watch_files<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    on_event: Channel<FilesEvent>,
) -> IpcResult<WatchStatus> {
    let ws = workspace(&state, window.label())?;
    // The previous watch of this window (if any) stops when it is replaced.
    let (watch, pump) = WorkspaceWatch::start(ws, move |e| on_event.send(e));
    tauri::async_runtime::spawn(pump);
    let status = WatchStatus {
        watching: watch.is_watching(),
        error: watch.error(),
    };
    state.with_slot(window.label(), |slot| slot.files = Some(watch));
    Ok(status)
}

/// A stored image attachment of the window's session (`attachments/<file>`) as a `data:`
/// URL, for thumbnails in the transcript.
#[tauri::command]
pub async fn read_attachment<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    path: String,
) -> IpcResult<String> {
    let runtime = super::current(&state, window.label())?;
    let dir = runtime.store().session_dir(&runtime.id())?;
    tauri::async_runtime::spawn_blocking(move || cairn_runtime::attach::read_back(&dir, &path))
        .await?
        .map_err(IpcError::from)
}
