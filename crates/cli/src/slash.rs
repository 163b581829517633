//! Slash commands in `cairn run "/name args"` (carried out by the runtime's one path,
//! [`SessionHandle::submit`]): a command that runs no model turn (`/undo`, `/mode`, `/model`) still emits `turn_start` / `turn_end` and
//! exits with what it did (`/undo` with conflicts exits 1).

use cairn_protocol::{Event, Mode, TurnEnd, TurnSource, TurnStart, TurnStatus};
use cairn_runtime::host::{CommandEffect, CommandOutcome, SessionHandle};

use crate::render::Renderer;

/// Says what a command carried out without a model turn did: its `turn_start` /
/// `turn_end` (so `--json` readers see one turn either way) and its effect on stderr.
pub async fn done(
    handle: &SessionHandle,
    outcome: &CommandOutcome,
    renderer: &mut Renderer,
) -> TurnStatus {
    let status = outcome.status();
    let turn = handle.turns().await;
    announce(renderer, handle, &outcome.input, turn, status);
    say(&outcome.effect);
    status
}

/// What a command did, on stderr.
fn say(effect: &CommandEffect) {
    match effect {
        CommandEffect::Mode { mode } => errln!("mode: {}", mode_name(*mode)),
        CommandEffect::Model { model } => errln!("model: {model}"),
        CommandEffect::NothingToUndo => {
            errln!("/undo: nothing to undo (this session changed no files)")
        }
        CommandEffect::Undone { restore: v } => {
            for p in v.restored.iter().chain(&v.deleted) {
                errln!("undone  {p}");
            }
            for c in &v.conflicts {
                errln!("kept    {}  ({})", c.path, c.reason);
            }
            if !v.conflicts.is_empty() {
                errln!(
                    "/undo: {} file(s) changed since were left alone",
                    v.conflicts.len()
                );
            }
        }
        CommandEffect::UndoFailed { reason } => errln!("/undo: {reason}"),
    }
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Discuss => "discuss",
        Mode::Plan => "plan",
        Mode::Interactive => "interactive",
        Mode::Auto => "auto",
    }
}

/// `turn_start` and `turn_end` of a command that ran no model turn.
fn announce(r: &mut Renderer, handle: &SessionHandle, input: &str, turn: u32, status: TurnStatus) {
    let task_id = uuid::Uuid::new_v4().to_string();
    r.event(&Event::TurnStart(TurnStart {
        task_id: task_id.clone(),
        input: input.to_string(),
        attachment_count: None,
        attachments: None,
        session_id: handle.id(),
        turn,
        source: TurnSource::Input,
        worktree: None,
        sandbox: None,
    }));
    r.event(&Event::TurnEnd(TurnEnd {
        status,
        iterations: 0,
        produced_files: Vec::new(),
        task_id,
        usage: None,
        cost_usd: None,
    }));
}
