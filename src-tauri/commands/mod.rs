//! Typed IPC commands of the desktop app. Each one acts on the calling window's own
//! workspace and session; argument and result types are in [`crate::types`] (and the
//! protocol crate) and have generated TypeScript bindings.

pub mod app;
pub mod board;
pub mod clipboard;
pub mod diagnostics;
pub mod endpoint;
pub mod extensions;
pub mod files;
pub mod session;
pub mod settings;
pub mod terminal;
pub mod timeline;
pub mod turn;
pub mod vault;
pub mod workspace;
pub mod worktrees;

use std::sync::Arc;

use crate::error::{IpcError, IpcResult};
use crate::runtime::SessionRuntime;
use crate::state::AppState;

pub use crate::command_names::COMMANDS;

/// The folder the window works in: its shown session's (a worktree session has its own
/// checkout), else the workspace's.
pub(crate) fn shown_folder(state: &AppState, label: &str) -> IpcResult<std::path::PathBuf> {
    let slot = state.slot(label);
    if let Some(s) = slot.session.as_deref() {
        return Ok(s.workspace().to_path_buf());
    }
    slot.workspace.ok_or_else(IpcError::no_workspace)
}

/// The window's open session, or a message saying there is none.
pub(crate) fn current(state: &AppState, label: &str) -> IpcResult<Arc<SessionRuntime>> {
    state.slot(label).session.ok_or_else(IpcError::no_session)
}
