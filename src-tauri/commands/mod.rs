//! Typed IPC commands of the desktop app. Each one acts on the calling window's own
//! workspace and session; argument and result types are in [`crate::types`] (and the
//! protocol crate) and have generated TypeScript bindings.

pub mod app;
pub mod board;
pub mod clipboard;
pub mod endpoint;
pub mod extensions;
pub mod files;
pub mod session;
pub mod settings;
pub mod terminal;
pub mod timeline;
pub mod turn;
pub mod workspace;
pub mod worktrees;

use std::sync::Arc;

use crate::error::{IpcError, IpcResult};
use crate::runtime::SessionRuntime;
use crate::state::AppState;

pub use crate::command_names::COMMANDS;

/// The window's open session, or a message saying there is none.
pub(crate) fn current(state: &AppState, label: &str) -> IpcResult<Arc<SessionRuntime>> {
    state.slot(label).session.ok_or_else(IpcError::no_session)
}
