//! Slash commands in `cairn run "/name args"` ([`cairn_runtime::commands`]): a command that
//! runs no model turn (`/undo`, `/mode`, `/model`) still emits `turn_start` / `turn_end` and
//! exits with what it did (`/undo` with conflicts exits 1).

use cairn_protocol::{Event, Mode, TurnEnd, TurnSource, TurnStart, TurnStatus};
use cairn_runtime::commands::{self, Builtin, Parsed};
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
    let session = &handle.assembled().session;
    let cmds = commands::load(handle.workspace());
    match commands::parse(prompt, &cmds) {
        Parsed::Prompt(text) => Plan::Prompt {
            text,
            mode_after: None,
        },
        Parsed::Expanded { prompt, .. } => Plan::Prompt {
            text: prompt,
            mode_after: None,
        },
        Parsed::Builtin(Builtin::Compact, _) => Plan::Input(TurnInput::Compact),
        Parsed::Builtin(Builtin::Review, _) => {
            let before = session.mode();
            session.set_mode(Mode::Discuss);
            Plan::Prompt {
                text: commands::REVIEW_PROMPT.to_string(),
                mode_after: Some(before),
            }
        }
        Parsed::Builtin(Builtin::Plan, rest) => {
            session.set_mode(Mode::Plan);
            if rest.is_empty() {
                let turn = session.turns().await;
                announce(renderer, handle, prompt, turn, TurnStatus::Completed);
                errln!("mode: plan");
                Plan::Done(TurnStatus::Completed)
            } else {
                Plan::Prompt {
                    text: rest,
                    mode_after: None,
                }
            }
        }
        Parsed::Builtin(Builtin::Mode, rest) => {
            let Ok(mode) = rest.parse::<Mode>() else {
                errln!("error: /mode needs one of discuss, plan, interactive, auto");
                return Plan::Usage;
            };
            let ceiling = ceiling.unwrap_or_else(|| session.mode());
            if !commands::mode_within(mode, ceiling) {
                errln!(
                    "error: /mode {rest} goes above this run's mode ({}); pass --mode to allow it",
                    mode_name(ceiling)
                );
                return Plan::Usage;
            }
            session.set_mode(mode);
            let turn = session.turns().await;
            announce(renderer, handle, prompt, turn, TurnStatus::Completed);
            errln!("mode: {}", mode_name(mode));
            Plan::Done(TurnStatus::Completed)
        }
        Parsed::Builtin(Builtin::Model, rest) => {
            if rest.is_empty() {
                errln!("error: /model needs a model id");
                return Plan::Usage;
            }
            session.set_model(rest.clone());
            let turn = session.turns().await;
            announce(renderer, handle, prompt, turn, TurnStatus::Completed);
            errln!("model: {rest}");
            Plan::Done(TurnStatus::Completed)
        }
        Parsed::Builtin(Builtin::Undo, _) => {
            let status = undo(handle).await;
            let turn = session.turns().await;
            announce(renderer, handle, prompt, turn, status);
            Plan::Done(status)
        }
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

/// `/undo`: the workspace back to before the session's last change-turn.
async fn undo(handle: &SessionHandle) -> TurnStatus {
    let src = handle.timeline_source();
    let turns = handle.assembled().session.turns().await;
    let outcome = tokio::task::spawn_blocking(
        move || -> Result<Option<cairn_runtime::timeline::RestoreView>, String> {
            let view = cairn_runtime::timeline::timeline(&src).map_err(|e| e.to_string())?;
            let Some(last) = view.checkpoints.last() else {
                return Ok(None);
            };
            let req = cairn_runtime::timeline::RestoreRequest {
                to_turn: last.turn - 1,
                paths: Vec::new(),
                dry_run: false,
                force: false,
            };
            cairn_runtime::timeline::restore(&src, turns, &req)
                .map(Some)
                .map_err(|e| e.to_string())
        },
    )
    .await;
    match outcome {
        Ok(Ok(None)) => {
            errln!("/undo: nothing to undo (this session changed no files)");
            TurnStatus::Completed
        }
        Ok(Ok(Some(v))) => {
            for p in v.restored.iter().chain(&v.deleted) {
                errln!("undone  {p}");
            }
            for c in &v.conflicts {
                errln!("kept    {}  ({})", c.path, c.reason);
            }
            if v.conflicts.is_empty() {
                TurnStatus::Completed
            } else {
                errln!(
                    "/undo: {} file(s) changed since were left alone",
                    v.conflicts.len()
                );
                TurnStatus::Error
            }
        }
        Ok(Err(e)) => {
            errln!("/undo: {e}");
            TurnStatus::Error
        }
        Err(e) => {
            errln!("/undo: {e}");
            TurnStatus::Error
        }
    }
}
