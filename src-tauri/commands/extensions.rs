//! Extension commands: the hooks, Agent Skills and slash commands a session of the window's
//! workspace gets (Settings lists them) and trusting the project's hook file.

use std::path::PathBuf;

use cairn_runtime::extensions::{self, ExtensionsView};
use tauri::{Runtime, State, Window};

use crate::error::{ErrorCode, IpcError, IpcResult};
use crate::state::AppState;

/// The folder the window's extensions come from: its session's (a worktree session has its
/// own checkout), else the workspace's.
pub(crate) fn workspace_of(state: &AppState, label: &str) -> IpcResult<PathBuf> {
    let slot = state.slot(label);
    if let Some(s) = slot.session.as_deref() {
        return Ok(s.workspace().to_path_buf());
    }
    slot.workspace.ok_or_else(IpcError::no_workspace)
}

/// Hooks (and whether each runs), skills and commands of the window's workspace.
#[tauri::command]
pub fn get_extensions<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<ExtensionsView> {
    let ws = workspace_of(&state, window.label())?;
    Ok(tokio::task::block_in_place(|| extensions::view(&ws)))
}

/// Trusts the project's hook file as it is now (for this repository; any change needs a new
/// trust). The hooks run from the next chat on.
#[tauri::command]
pub fn trust_project_hooks<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<ExtensionsView> {
    let ws = workspace_of(&state, window.label())?;
    tokio::task::block_in_place(|| {
        match cairn_runtime::hooks::trust(&ws) {
            Ok(true) => Ok(()),
            Ok(false) => Err(IpcError::invalid("This project has no hook file to trust.")),
            Err(e) => Err(IpcError::new(ErrorCode::Config, e)),
        }?;
        Ok(extensions::view(&ws))
    })
}
