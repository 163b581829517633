//! Timeline commands: the session's checkpoints, their diffs, and restores (dry run, chosen
//! files, undoable). Restores are refused while a turn runs.

use tauri::{Runtime, State, Window};

use super::current;
use crate::state::AppState;
use crate::timeline;
use crate::types::{RestoreRequest, RestoreView, TimelineView};

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| format!("the checkpoint store task failed: {e}"))?
}

/// The window's session timeline: every change-turn with its files, and the changes since
/// the session started.
#[tauri::command]
pub async fn session_timeline<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> Result<TimelineView, String> {
    let src = current(&state, window.label())?.timeline_source();
    blocking(move || timeline::timeline(&src)).await
}

/// The unified diff of change-turn `turn` (0 = everything since the session started),
/// limited to `paths` when given.
#[tauri::command]
pub async fn checkpoint_diff<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    turn: u32,
    paths: Vec<String>,
) -> Result<String, String> {
    let src = current(&state, window.label())?.timeline_source();
    blocking(move || timeline::diff(&src, turn, &paths)).await
}

/// Restores the workspace (or chosen paths) to a checkpoint; with `dryRun` only reports what
/// would be written, deleted and kept as conflicts.
#[tauri::command]
pub async fn restore_checkpoint<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    request: RestoreRequest,
) -> Result<RestoreView, String> {
    let runtime = current(&state, window.label())?;
    if runtime.session().is_busy() {
        return Err("A turn is running: stop it or wait for it to end before restoring.".into());
    }
    let src = runtime.timeline_source();
    let session_turn = runtime.saved().turns;
    let view = blocking(move || timeline::restore(&src, session_turn, &request)).await?;
    if let Some(turn) = view.turn {
        tracing::info!(
            window = window.label(),
            to = view.to_turn,
            turn,
            "workspace restored"
        );
    }
    Ok(view)
}
