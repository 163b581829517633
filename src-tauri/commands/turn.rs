//! Turn commands: run a turn with its events streamed over one channel, retry, interrupt,
//! and steering messages typed while a turn runs.

use cairn_protocol::{Event, Mode};
use cairn_runtime::commands::{self, CommandView};
use tauri::ipc::Channel;
use tauri::{Runtime, State, Window};

use super::current;
use crate::error::{IpcError, IpcResult};
use crate::state::AppState;
use crate::types::{ImageUpload, RunOutcome};
use cairn_runtime::host::budget::{BudgetLimit, BudgetView};
use cairn_runtime::host::{CommandError, Prompt, Submission, SubmitError, BATCH_WINDOW};

async fn run(
    state: &AppState,
    label: &str,
    prompt: Prompt,
    on_event: Channel<Event>,
) -> IpcResult<RunOutcome> {
    let runtime = current(state, label)?;
    let turn = match runtime.submit(prompt).await {
        Ok(Submission::Turn(turn)) => turn,
        Ok(Submission::Done(outcome)) => return Ok(RunOutcome::Command { outcome }),
        Err(SubmitError::Command(e @ CommandError::AboveCeiling { .. })) => {
            return Err(IpcError::invalid(format!(
                "{e}: turn on Auto with the mode switcher (it asks you to confirm)."
            )))
        }
        Err(e) => return Err(e.into()),
    };
    for note in turn.notes() {
        tracing::info!(%note, "sent with the prompt");
    }
    let end = runtime
        .run(turn, BATCH_WINDOW, |event| on_event.send(event))
        .await?;
    crate::memory::release_freed_soon();
    if end == RunOutcome::ChannelClosed {
        tracing::info!(
            window = label,
            "the page stopped listening; the turn was cancelled"
        );
    }
    Ok(end)
}

/// Runs one turn with `text`, streaming its events (deltas batched) to `on_event`; returns
/// when the run ended: the turn and the turns the engine started from steering left over.
/// Behind a running turn it waits its turn: turns of one session never overlap. A known
/// `/command` at the start is carried out first; files the text mentions (`@path`) and
/// pasted `images` go with it, and a bad one refuses the turn before it starts (all through
/// the runtime's one path, `submit`).
#[tauri::command]
pub async fn run_turn<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    text: String,
    images: Option<Vec<ImageUpload>>,
    on_event: Channel<Event>,
) -> IpcResult<RunOutcome> {
    let text = text.trim().to_string();
    let images = images.unwrap_or_default();
    if text.is_empty() && images.is_empty() {
        return Err(IpcError::invalid("The message is empty."));
    }
    let runtime = current(&state, window.label())?;
    if let Some(reason) = runtime.blocked() {
        return Err(IpcError::new(crate::error::ErrorCode::Blocked, reason));
    }
    // The app's ceiling for `/mode` is interactive: Auto is turned on with the mode
    // switcher, which asks to confirm.
    let ceiling = match runtime.mode() {
        Mode::Auto => Mode::Auto,
        _ => Mode::Interactive,
    };
    let prompt = Prompt::text(text)
        .with_ceiling(ceiling)
        .refusing_unattachable_mentions()
        .with_images(images)?;
    run(&state, window.label(), prompt, on_event).await
}

/// The slash commands the composer completes: built-ins, the user's and the project's
/// commands, skills only the user invokes, and the open chat's MCP servers' prompts.
#[tauri::command]
pub fn list_commands<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<Vec<CommandView>> {
    // An open chat's list has its MCP servers' prompts too.
    if let Ok(runtime) = current(&state, window.label()) {
        return Ok(tokio::task::block_in_place(|| runtime.command_views()));
    }
    let ws = super::shown_folder(&state, window.label())?;
    Ok(tokio::task::block_in_place(|| commands::views(&ws)))
}

/// Re-runs the last turn after a retriable error (`not_started` when there is none).
#[tauri::command]
pub async fn retry_turn<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    on_event: Channel<Event>,
) -> IpcResult<RunOutcome> {
    run(&state, window.label(), Prompt::retry(), on_event).await
}

/// Finishes the tool calls left open when the process stopped while they waited (approvals
/// are asked again, then the turn continues), streaming its events like `run_turn`;
/// `not_started` when none is open.
#[tauri::command]
pub async fn resume_turn<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    on_event: Channel<Event>,
) -> IpcResult<RunOutcome> {
    run(&state, window.label(), Prompt::resume(), on_event).await
}

/// Interrupts the running turn: the LLM stream stops, running tools and their processes are
/// killed, pending approvals of the turn are dropped (denied).
#[tauri::command]
pub fn interrupt<R: Runtime>(window: Window<R>, state: State<'_, AppState>) -> IpcResult<()> {
    current(&state, window.label())?.interrupt();
    Ok(())
}

/// Queues an instruction for the running turn (injected between iterations; the
/// `queue_steering` event says when), with pasted `images` and the files its text mentions
/// (`@path`), which reach the model with it as a turn's own do. Returns the instructions
/// still waiting.
#[tauri::command]
pub async fn queue_steering<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    text: String,
    images: Option<Vec<ImageUpload>>,
) -> IpcResult<Vec<String>> {
    let text = text.trim().to_string();
    let images = images.unwrap_or_default();
    if text.is_empty() {
        return Err(IpcError::invalid("The message is empty."));
    }
    let runtime = current(&state, window.label())?;
    let prompt = Prompt::text(text).with_images(images)?;
    let (pending, notes) = runtime.steer(prompt).await?;
    for note in notes {
        tracing::info!(%note, "sent with the steering");
    }
    Ok(pending)
}

/// Withdraws a queued instruction; false when it was already injected.
#[tauri::command]
pub fn remove_steering<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    text: String,
) -> IpcResult<bool> {
    Ok(current(&state, window.label())?.remove_steering(&text))
}

/// The shown session's spending cap and what it spent (the error card's "raise the cap").
#[tauri::command]
pub fn session_budget<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
) -> IpcResult<BudgetView> {
    Ok(current(&state, window.label())?.budget())
}

/// Counts the shown session against batch `batch`'s shared spending cap (`limit` makes it
/// with its first member): sessions started together from the board stop together at it.
#[tauri::command]
pub fn join_spend_batch<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    batch: String,
    limit: BudgetLimit,
) -> IpcResult<BudgetView> {
    let runtime = current(&state, window.label())?;
    state
        .host
        .join_batch(&runtime, &batch, limit)
        .map_err(|e| IpcError::invalid(e.to_string()))
}

/// Sets the shown session's spending cap from its next request on (after
/// `budget_exceeded`, the user raises it and goes on).
#[tauri::command]
pub fn set_budget<R: Runtime>(
    window: Window<R>,
    state: State<'_, AppState>,
    limit: BudgetLimit,
) -> IpcResult<BudgetView> {
    current(&state, window.label())?
        .set_budget(limit)
        .map_err(|e| IpcError::invalid(e.to_string()))
}
