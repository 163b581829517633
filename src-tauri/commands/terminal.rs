//! Terminal panel commands: open, list, attach (output over a channel), type, resize and close
//! the workspace's terminals, and take over the agent's command sessions (`cmd-N`).

use std::path::PathBuf;

use tauri::ipc::Channel;
use tauri::{Runtime, State, Window};

use crate::error::{IpcError, IpcResult};
use crate::state::AppState;
use crate::terminals::{self, is_command_session, project_id};
use crate::types::{TerminalKind, TerminalTab};

/// Smallest and largest terminal sizes accepted from the page.
const MIN_SIZE: u16 = 2;
const MAX_SIZE: u16 = 1000;

fn workspace(state: &AppState, label: &str) -> IpcResult<PathBuf> {
    state
        .slot(label)
        .workspace
        .ok_or_else(IpcError::no_workspace)
}

fn clamp(n: u16) -> u16 {
    n.clamp(MIN_SIZE, MAX_SIZE)
}

/// The panel's tabs: this workspace's terminals and the agent's command sessions.
#[tauri::command]
pub fn terminal_list<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<Vec<TerminalTab>> {
    let ws = workspace(&state, window.label())?;
    let session = state.slot(window.label()).session;
    Ok(terminals::tabs(
        &state.terminals,
        &ws,
        session
            .as_ref()
            .and_then(|s| s.commands())
            .map(|c| c.as_ref()),
    ))
}

/// Opens the user's shell in the workspace at `cols`×`rows`; with `worktree`, in that
/// worktree's counterpart of the workspace (the tab is still one of the workspace's).
#[tauri::command]
pub fn terminal_open<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    cols: u16,
    rows: u16,
    worktree: Option<String>,
) -> IpcResult<TerminalTab> {
    let ws = workspace(&state, window.label())?;
    let cwd = match &worktree {
        Some(name) => cairn_runtime::worktrees::workspace_in(&ws, &state.config.state_dir, name)?,
        None => ws.clone(),
    };
    let mut opts = cairn_tools::TerminalOptions::shell(&cwd);
    opts.cols = clamp(cols);
    opts.rows = clamp(rows);
    if let Ok(shell) = std::env::var("SHELL") {
        if !shell.trim().is_empty() {
            opts.argv = vec![shell];
        }
    }
    let info = state.terminals.open(&project_id(&ws), opts)?;
    tracing::info!(window = window.label(), id = %info.id, "terminal opened");
    Ok(TerminalTab {
        id: info.id,
        title: info.title,
        kind: TerminalKind::User,
        running: info.running,
    })
}

/// Streams terminal `id`'s output to `on_output`: everything printed so far, then live
/// chunks, until its program ends or the page stops listening.
#[tauri::command]
pub fn terminal_attach<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    id: String,
    on_output: Channel<Vec<u8>>,
) -> IpcResult<()> {
    let (replay, live) = if is_command_session(&id) {
        let session = super::current(&state, window.label())?;
        session
            .commands()
            .and_then(|c| c.attach(&id))
            .ok_or_else(|| IpcError::not_found(format!("no command session `{id}`")))?
    } else {
        let project = project_id(&workspace(&state, window.label())?);
        let live = state.terminals.subscribe(&project, &id)?;
        let replay = state.terminals.raw_output(&project, &id)?;
        (replay, live)
    };
    tauri::async_runtime::spawn(terminals::pump(replay, live, move |chunk| {
        on_output.send(chunk)
    }));
    Ok(())
}

/// Types `data` into terminal or command session `id`.
#[tauri::command]
pub async fn terminal_write<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    id: String,
    data: String,
) -> IpcResult<()> {
    if is_command_session(&id) {
        let session = super::current(&state, window.label())?;
        return match session.commands() {
            Some(c) => c
                .write_input(&id, data.into_bytes())
                .await
                .map_err(IpcError::invalid),
            None => Err(IpcError::not_found(format!("no command session `{id}`"))),
        };
    }
    let project = project_id(&workspace(&state, window.label())?);
    state
        .terminals
        .write(&project, &id, data.as_bytes())
        .await
        .map_err(IpcError::from)
}

/// Resizes terminal `id` (command sessions keep their size).
#[tauri::command]
pub fn terminal_resize<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    id: String,
    cols: u16,
    rows: u16,
) -> IpcResult<()> {
    if is_command_session(&id) {
        return Ok(());
    }
    let project = project_id(&workspace(&state, window.label())?);
    state
        .terminals
        .resize(&project, &id, clamp(cols), clamp(rows))
        .map_err(IpcError::from)
}

/// Closes the user's terminal `id` (its program is stopped).
#[tauri::command]
pub async fn terminal_close<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    id: String,
) -> IpcResult<()> {
    if is_command_session(&id) {
        return Err(IpcError::invalid(
            "The agent's command sessions end with their program.",
        ));
    }
    let project = project_id(&workspace(&state, window.label())?);
    state
        .terminals
        .close(&project, &id)
        .await
        .map_err(IpcError::from)
}
