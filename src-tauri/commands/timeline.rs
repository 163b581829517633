//! Timeline commands: the session's checkpoints, their diffs, and restores (dry run, chosen
//! files, undoable), and conversation rewinds. Both are refused while a turn runs.

use tauri::{Runtime, State, Window};

use super::current;
use crate::error::{IpcError, IpcResult};
use crate::state::AppState;
use crate::timeline;
use crate::types::{RestoreRequest, RestoreView, RewindView, TimelineView};

async fn blocking<T: Send + 'static, E: Into<IpcError> + Send + 'static>(
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> IpcResult<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await?
        .map_err(Into::into)
}

/// The window's session timeline: every change-turn with its files, and the changes since
/// the session started.
#[tauri::command]
pub async fn session_timeline<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<TimelineView> {
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
) -> IpcResult<String> {
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
) -> IpcResult<RestoreView> {
    let runtime = current(&state, window.label())?;
    if runtime.is_running() {
        return Err(IpcError::invalid(
            "A turn is running: stop it or wait for it to end before restoring.",
        ));
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

/// Rewinds the conversation to right after session turn `turn`: later turns leave the
/// history the model sees and the transcript; they are kept in a `rewind-*.json` file in the
/// session dir. Refused while a turn runs. The workspace is not touched (the page restores
/// code separately with `restore_checkpoint`).
#[tauri::command]
pub async fn rewind_conversation<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    turn: u32,
) -> IpcResult<RewindView> {
    let runtime = current(&state, window.label())?;
    let rewound = runtime.rewind_to_turn(turn).map_err(|e| {
        IpcError::new(
            crate::error::ErrorCode::Checkpoints,
            capitalised(&e.to_string()),
        )
    })?;
    let archive = match rewound.removed.is_empty() {
        true => None,
        false => runtime
            .store()
            .session_dir(&runtime.id())
            .ok()
            .and_then(|dir| cairn_runtime::rewind::archives(&dir).pop())
            .map(|p| p.display().to_string()),
    };
    tracing::info!(
        window = window.label(),
        turn,
        removed = ?rewound.removed_turns,
        "conversation rewound"
    );
    Ok(RewindView {
        turn,
        removed_turns: rewound.removed_turns,
        removed_messages: u32::try_from(rewound.removed.len()).unwrap_or(u32::MAX),
        archive,
        session: cairn_runtime::host::view::view_with_pending(&runtime).await?,
    })
}

/// An engine message as a sentence for the page.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
