//! Slash commands in `cairn run "/name args"` ([`cairn_runtime::commands`]): a command that
//! runs no model turn (`/undo`, `/mode`, `/model`) still emits `turn_start` / `turn_end` and
//! exits with what it did (`/undo` with conflicts exits 1).

use cairn_protocol::{Event, Mode, TurnEnd, TurnSource, TurnStart, TurnStatus};
use cairn_runtime::commands::{self, CommandEffect, CommandError, Dispatch};
use cairn_runtime::host::{SessionHandle, TurnInput};

use crate::render::Renderer;

/// What `cairn run` does with its prompt.
pub enum Plan {
    /// A model turn on this prompt; `mode_after` puts the mode back once it ended.
    Prompt {
        /// The prompt.
        text: String,
        /// The mode to return to afterwards (`/review` runs read-only).
        mode_after: Option<Mode>,
    },
    /// A turn of another kind (`/compact`).
    Input(TurnInput),
    /// Done without a model turn, with this status.
    Done(TurnStatus),
    /// A usage error (said on stderr).
    Usage,
}

/// Decides what `prompt` is and carries out the commands that need no model turn.
pub async fn plan(
    handle: &SessionHandle,
    prompt: &str,
    ceiling: Option<Mode>,
    renderer: &mut Renderer,
) -> Plan {
    let outcome = match commands::dispatch(handle, prompt, ceiling).await {
        Ok(Dispatch::Prompt { text, mode_after }) => return Plan::Prompt { text, mode_after },
        Ok(Dispatch::Compact) => return Plan::Input(TurnInput::Compact),
        Ok(Dispatch::Done(outcome)) => outcome,
        Err(e @ CommandError::AboveCeiling { .. }) => {
            errln!("error: {e}; pass --mode to allow it");
            return Plan::Usage;
        }
        Err(e) => {
            errln!("error: {e}");
            return Plan::Usage;
        }
    };
    let status = outcome.status();
    let turn = handle.session().turns().await;
    announce(renderer, handle, prompt, turn, status);
    say(&outcome.effect);
    Plan::Done(status)
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
