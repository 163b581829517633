//! Workspace commands: the native folder picker, opening a folder (refusing `/` and the
//! home folder), recent workspaces and the workspace's sessions.

use std::path::{Path, PathBuf};

use tauri::{Runtime, State, Window};

use crate::error::{IpcError, IpcResult};
use crate::settings::folder_name;
use crate::state::AppState;
use crate::types::{RecentWorkspace, SessionEntry, WorkspaceView};

/// The sessions of `workspace`, newest first.
pub(crate) fn workspace_view(state: &AppState, workspace: &Path) -> IpcResult<WorkspaceView> {
    let store = cairn_runtime::SessionStore::new(&state.config.state_dir);
    let path = workspace.display().to_string();
    let sessions = store
        .list()?
        .into_iter()
        .filter(|s| s.workspace == path)
        .map(|s| SessionEntry {
            id: s.id,
            name: s.name,
            created_at: s.created_at,
            updated_at: s.updated_at,
            turns: s.turns,
            model: s.model,
        })
        .collect::<Vec<_>>();
    let last_session = state
        .settings()
        .last_sessions
        .get(&path)
        .filter(|id| sessions.iter().any(|s| &s.id == *id))
        .cloned();
    Ok(WorkspaceView {
        name: folder_name(workspace),
        path,
        sessions,
        last_session,
    })
}

/// Shows the native folder picker; `None` when cancelled.
#[tauri::command]
pub async fn pick_folder(state: State<'_, AppState>) -> IpcResult<Option<String>> {
    let start = state
        .settings()
        .recent
        .first()
        .and_then(|r| Path::new(&r.path).parent().map(Path::to_path_buf))
        .or_else(dirs::home_dir);
    let (tx, rx) = tokio::sync::oneshot::channel::<Option<PathBuf>>();
    state.dialogs.pick_folder(
        start,
        Box::new(move |picked| {
            let _ = tx.send(picked);
        }),
    );
    let picked = rx
        .await
        .map_err(|_| IpcError::internal("the folder picker closed without an answer"))?;
    Ok(picked.map(|p| p.display().to_string()))
}

/// Makes `path` this window's workspace (closing its previous session) and returns its
/// sessions. Refuses `/`, the home folder and anything that is not a folder, saying why.
#[tauri::command]
pub async fn open_workspace<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    path: String,
) -> IpcResult<WorkspaceView> {
    let canon = cairn_runtime::resolve_workspace(Path::new(path.trim()))?;
    close_session_of(&state, window.label()).await?;
    state.with_slot(window.label(), |slot| {
        slot.workspace = Some(canon.clone());
        slot.session = None;
        slot.background.clear();
        slot.files = None;
    });
    let now = cairn_runtime::store::now();
    let main = window.label() == crate::windows::MAIN;
    state.update_settings(|s| {
        s.remember_workspace(&canon, &now);
        if main {
            s.main_workspace = Some(canon.display().to_string());
        }
    })?;
    crate::windows::remember(&state);
    crate::windows::set_title(&window, Some(&canon));
    tracing::info!(workspace = %canon.display(), window = window.label(), "workspace opened");
    workspace_view(&state, &canon)
}

/// Closes the window's sessions (refusing while a turn of one runs).
pub(crate) async fn close_session_of(state: &AppState, label: &str) -> IpcResult<()> {
    super::board::close_all(state, label).await?;
    crate::memory::release_freed_soon();
    Ok(())
}

/// Closes the workspace and returns to the welcome screen.
#[tauri::command]
pub async fn close_workspace<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<Vec<RecentWorkspace>> {
    close_session_of(&state, window.label()).await?;
    state.with_slot(window.label(), |slot| {
        slot.workspace = None;
        slot.files = None;
    });
    if window.label() == crate::windows::MAIN {
        state.update_settings(|s| s.main_workspace = None)?;
    }
    crate::windows::remember(&state);
    crate::windows::set_title(&window, None);
    Ok(state.settings().recent_view())
}

/// Removes a folder from the recent list.
#[tauri::command]
pub fn forget_workspace(
    state: State<'_, AppState>,
    path: String,
) -> IpcResult<Vec<RecentWorkspace>> {
    let s = state.update_settings(|s| {
        s.forget_workspace(&path);
    })?;
    Ok(s.recent_view())
}

/// The window's workspace and its sessions, fresh from disk.
#[tauri::command]
pub fn list_sessions<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<WorkspaceView> {
    let workspace = state
        .slot(window.label())
        .workspace
        .ok_or_else(IpcError::no_workspace)?;
    workspace_view(&state, &workspace)
}
