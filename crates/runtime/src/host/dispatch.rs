//! Carrying out a slash command for either face: what runs a model turn comes back as a
//! prompt (or a compaction) to run, the rest (`/undo`, `/mode`, `/model`, a bare `/plan`)
//! is done here and comes back as a typed outcome each face words its own way.

use cairn_protocol::{Mode, TurnStatus};
use serde::Serialize;
use ts_rs::TS;

use super::SessionHandle;
use crate::commands::{self, Builtin, Parsed};
use crate::timeline::types::RestoreView;

/// What to do with an input.
#[derive(Debug, Clone, PartialEq)]
pub enum Dispatch {
    /// A model turn on this prompt; put the mode back to `mode_after` once it ended.
    Prompt {
        /// The prompt (the input itself, or what a command expanded to).
        text: String,
        /// The mode to return to afterwards (`/review` runs read-only).
        mode_after: Option<Mode>,
        /// The command file it came from, by name, with what it asks of its turn.
        command: Option<(String, Box<commands::Extras>)>,
    },
    /// Compact the history now (`/compact`).
    Compact,
    /// Done without a model turn.
    Done(CommandOutcome),
}

/// A command carried out without a model turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct CommandOutcome {
    /// The input as typed.
    pub input: String,
    /// What it did.
    pub effect: CommandEffect,
}

/// What a command did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum CommandEffect {
    /// The permission mode is now `mode`.
    Mode {
        /// The new mode.
        mode: Mode,
    },
    /// The model is now `model`.
    Model {
        /// The new model id.
        model: String,
    },
    /// `/undo` found no change-turn: the session changed no files.
    NothingToUndo,
    /// `/undo` restored the files to before the last change-turn (conflicts were kept).
    Undone {
        /// What the restore did.
        restore: RestoreView,
    },
    /// `/undo` failed.
    UndoFailed {
        /// Why.
        reason: String,
    },
}

impl CommandOutcome {
    /// How the command's turn ends: `error` when `/undo` failed or kept changed files.
    pub fn status(&self) -> TurnStatus {
        match &self.effect {
            CommandEffect::Undone { restore } if !restore.conflicts.is_empty() => TurnStatus::Error,
            CommandEffect::UndoFailed { .. } => TurnStatus::Error,
            _ => TurnStatus::Completed,
        }
    }
}

/// A command that cannot be carried out as typed (nothing was changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// `/mode` without a valid mode.
    #[error("/mode needs one of discuss, plan, ask (interactive), auto")]
    ModeNeeded,
    /// `/mode` above what the face allows.
    #[error("/mode {} goes above this run's mode ({})", requested.as_str(), ceiling.as_str())]
    AboveCeiling {
        /// The mode asked for.
        requested: Mode,
        /// The highest mode allowed.
        ceiling: Mode,
    },
    /// `/model` without an id.
    #[error("/model needs a model id")]
    ModelNeeded,
    /// An MCP server's prompt (`/mcp__server__prompt`) that could not be had: a missing
    /// argument, or the server's error, in words.
    #[error("{0}")]
    McpPrompt(String),
}

/// Decides what `input` is for the session and carries out the commands that need no model
/// turn; `/mode` never goes above `ceiling` (the session's mode when `None`).
pub async fn dispatch(
    handle: &SessionHandle,
    input: &str,
    ceiling: Option<Mode>,
) -> Result<Dispatch, CommandError> {
    let session = handle.session();
    // Most input is a prompt: the command files are read only for a leading slash.
    if !input.starts_with('/') {
        return Ok(Dispatch::Prompt {
            text: input.to_string(),
            mode_after: None,
            command: None,
        });
    }
    let cmds = commands::load_in(handle.workspace(), &handle.config());
    let done = |effect| {
        Ok(Dispatch::Done(CommandOutcome {
            input: input.to_string(),
            effect,
        }))
    };
    let parsed = commands::parse(input, &cmds);
    // Not a built-in, user or project command: an MCP server's prompt, when one is named.
    if matches!(parsed, Parsed::Prompt(_)) {
        if let Some(expanded) = mcp_prompt(handle, input).await {
            return expanded
                .map(|text| Dispatch::Prompt {
                    text,
                    mode_after: None,
                    command: None,
                })
                .map_err(CommandError::McpPrompt);
        }
    }
    match parsed {
        Parsed::Prompt(text) => Ok(Dispatch::Prompt {
            text,
            mode_after: None,
            command: None,
        }),
        Parsed::Expanded {
            name,
            prompt,
            extras,
        } => Ok(Dispatch::Prompt {
            text: prompt,
            mode_after: None,
            command: Some((name, extras)),
        }),
        Parsed::Builtin(Builtin::Compact, _) => Ok(Dispatch::Compact),
        Parsed::Builtin(Builtin::Review, _) => {
            let before = session.mode();
            session.set_mode(Mode::Discuss);
            Ok(Dispatch::Prompt {
                text: commands::REVIEW_PROMPT.to_string(),
                mode_after: Some(before),
                command: None,
            })
        }
        Parsed::Builtin(Builtin::Plan, rest) => {
            session.set_mode(Mode::Plan);
            if rest.is_empty() {
                done(CommandEffect::Mode { mode: Mode::Plan })
            } else {
                Ok(Dispatch::Prompt {
                    text: rest,
                    mode_after: None,
                    command: None,
                })
            }
        }
        Parsed::Builtin(Builtin::Mode, rest) => {
            let mode = rest.parse::<Mode>().map_err(|_| CommandError::ModeNeeded)?;
            let ceiling = ceiling.unwrap_or_else(|| session.mode());
            if !commands::mode_within(mode, ceiling) {
                return Err(CommandError::AboveCeiling {
                    requested: mode,
                    ceiling,
                });
            }
            session.set_mode(mode);
            done(CommandEffect::Mode { mode })
        }
        Parsed::Builtin(Builtin::Model, rest) => {
            if rest.is_empty() {
                return Err(CommandError::ModelNeeded);
            }
            handle.set_model(&rest);
            done(CommandEffect::Model { model: rest })
        }
        Parsed::Builtin(Builtin::Undo, _) => done(undo(handle).await),
    }
}

/// `/undo`: the workspace back to before the session's last change-turn.
async fn undo(handle: &SessionHandle) -> CommandEffect {
    let src = handle.timeline_source();
    let turns = handle.session().turns().await;
    let outcome = tokio::task::spawn_blocking(move || {
        let view = crate::timeline::timeline(&src)?;
        let Some(last) = view.checkpoints.last() else {
            return Ok(None);
        };
        let req = crate::timeline::RestoreRequest {
            to_turn: last.turn.saturating_sub(1),
            paths: Vec::new(),
            dry_run: false,
            force: false,
        };
        crate::timeline::restore(&src, turns, &req).map(Some)
    })
    .await;
    match outcome {
        Ok(Ok(None)) => CommandEffect::NothingToUndo,
        Ok(Ok(Some(restore))) => CommandEffect::Undone { restore },
        Ok(Err(e)) => CommandEffect::UndoFailed {
            reason: e.to_string(),
        },
        Err(e) => CommandEffect::UndoFailed {
            reason: e.to_string(),
        },
    }
}

/// `input` (`/mcp__server__prompt args`) expanded by the server whose prompt it names; `None`
/// when it names none (it is then a prompt as typed).
async fn mcp_prompt(handle: &SessionHandle, input: &str) -> Option<Result<String, String>> {
    let rest = input.strip_prefix('/')?;
    let (name, args) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(n, a)| (n, a.trim()));
    if !name.starts_with("mcp__") {
        return None;
    }
    let manager = handle.assembled().mcp.manager()?;
    // Servers start with the session: a prompt typed at once waits for them (bounded).
    manager.wait_settled(crate::mcp::startup_grace()).await;
    manager.expand_prompt(name, args).await
}
