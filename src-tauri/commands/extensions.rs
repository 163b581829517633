//! Extension commands: the hooks, Agent Skills and slash commands a session of the window's
//! workspace gets (Settings lists them), trusting the project's hook file, and opting in to
//! the user's own `~/.claude`.

use cairn_runtime::extensions::{self, ExtensionsView};
use tauri::{Runtime, State, Window};

use crate::error::{ErrorCode, IpcError, IpcResult};
use crate::state::AppState;

/// Hooks (and whether each runs), skills and commands of the window's workspace.
#[tauri::command]
pub fn get_extensions<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<ExtensionsView> {
    let ws = super::shown_folder(&state, window.label())?;
    Ok(tokio::task::block_in_place(|| extensions::view(&ws)))
}

/// Trusts the project's hook file as it is now (for this repository; any change needs a new
/// trust). The hooks run from the next chat on.
#[tauri::command]
pub fn trust_project_hooks<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<ExtensionsView> {
    let ws = super::shown_folder(&state, window.label())?;
    tokio::task::block_in_place(|| {
        match cairn_runtime::hooks::trust(&ws) {
            Ok(true) => Ok(()),
            Ok(false) => Err(IpcError::invalid("This project has no hook file to trust.")),
            Err(e) => Err(IpcError::new(ErrorCode::Config, e)),
        }?;
        Ok(extensions::view(&ws))
    })
}

/// Opts in to the user's own Claude Code files (`~/.claude`: settings hooks, commands,
/// skills, agents), read as theirs from the next chat on.
#[tauri::command]
pub fn enable_claude_user_files<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<ExtensionsView> {
    let ws = super::shown_folder(&state, window.label())?;
    tokio::task::block_in_place(|| {
        cairn_runtime::claude_home::opt_in().map_err(|e| IpcError::new(ErrorCode::Config, e))?;
        Ok(extensions::view(&ws))
    })
}
