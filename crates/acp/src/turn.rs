//! One `session/prompt`: the runtime's one path ([`SessionHandle::submit`]) makes the turn
//! (or carries out a slash command), its events stream to the client as updates, requests
//! it waits on become permission requests, and its end becomes the stop reason.

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, ContentBlock, ContentChunk, Cost, CurrentModeUpdate, SessionNotification,
    SessionUpdate, StopReason, UsageUpdate,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Client, Error};
use cairn_protocol::{Event, TurnStatus};
use cairn_runtime::host::{
    forward, CommandEffect, CommandOutcome, Prompt, RunOutcome, SessionHandle, Submission,
    SubmitError, BATCH_WINDOW,
};

use crate::permission::{self, Ask};
use crate::state::{invalid, State};
use crate::updates::Mapper;

/// Sends `update` of session `sid`; a closed connection is only logged (the turn goes on
/// and is saved).
pub(crate) fn send(cx: &ConnectionTo<Client>, sid: &str, update: SessionUpdate) {
    if let Err(e) = cx.send_notification(SessionNotification::new(sid.to_string(), update)) {
        tracing::debug!(error = %e, "update not sent");
    }
}

/// Runs `prompt` in session `handle` and says how it stopped.
pub(crate) async fn run(
    state: Arc<State>,
    handle: Arc<SessionHandle>,
    cx: ConnectionTo<Client>,
    prompt: Prompt,
) -> Result<StopReason, Error> {
    let sid = handle.id();
    let mode_before = handle.mode();
    let turn = match handle.submit(prompt).await {
        Ok(Submission::Turn(turn)) => turn,
        Ok(Submission::Done(outcome)) => {
            say(&cx, &sid, &describe(&outcome));
            mode_changed(&cx, &handle, mode_before);
            return Ok(match outcome.status() {
                TurnStatus::Completed => StopReason::EndTurn,
                _ => StopReason::EndTurn,
            });
        }
        Err(SubmitError::Command(e)) => return Err(invalid(e.to_string())),
        Err(e) => return Err(invalid(e.to_string())),
    };
    for note in turn.notes() {
        say(&cx, &sid, &format!("Note: {note}\n\n"));
    }
    let Some(stream) = handle
        .start_queued(turn, |_| {})
        .await
        .map_err(crate::state::host_error)?
    else {
        return Ok(StopReason::Cancelled);
    };
    let (mut stream, hold) = stream.into_inner();
    let mut mapper = Mapper::live(handle.workspace());
    let h = handle.clone();
    let mut cost = 0.0;
    forward(
        &mut stream,
        BATCH_WINDOW,
        |e: Event| -> Result<(), ()> {
            match &e {
                Event::PermissionRequired(p) => {
                    let call = mapper.permission_call(p);
                    tokio::spawn(permission::approval(
                        cx.clone(),
                        state.clone(),
                        handle.clone(),
                        sid.clone(),
                        call,
                        p.clone(),
                    ));
                }
                Event::PlanProposed(p) => {
                    tokio::spawn(permission::ask(
                        cx.clone(),
                        handle.clone(),
                        sid.clone(),
                        Ask::Plan {
                            request_id: p.request_id.clone(),
                            plan: p.plan.clone(),
                        },
                    ));
                }
                Event::DirectoryRequested(d) => {
                    tokio::spawn(permission::ask(
                        cx.clone(),
                        handle.clone(),
                        sid.clone(),
                        Ask::Directory {
                            request_id: d.request_id.clone(),
                            path: d.path.clone(),
                            writable: d.writable,
                            reason: d.reason.clone(),
                        },
                    ));
                }
                Event::AskUserQuestion(q) => {
                    tokio::spawn(permission::ask(
                        cx.clone(),
                        handle.clone(),
                        sid.clone(),
                        Ask::Question {
                            request_id: q.request_id.clone(),
                            question: q.question.clone(),
                            options: q.options.clone(),
                        },
                    ));
                }
                Event::ElicitationRequested(r) => {
                    // ACP has no form for a server's request yet: declined, and said.
                    say(
                        &cx,
                        &sid,
                        &format!(
                            "Note: MCP server `{}` asked for information; declined, as this \
                             editor cannot show its form (answer it in the Cairn app or the \
                             CLI).\n\n",
                            r.server
                        ),
                    );
                    handle.answer(
                        &r.request_id,
                        cairn_runtime::host::RequestAnswer::Elicitation(
                            cairn_protocol::ElicitationAnswer::Decline {
                                reason: "the editor (ACP) cannot show the form".into(),
                            },
                        ),
                    );
                }
                Event::AssistantMessage(m) => {
                    if let Some(u) = m.usage.as_ref() {
                        cost += m.cost_usd.unwrap_or_default();
                        send(
                            &cx,
                            &sid,
                            usage(&handle, u.input_tokens + u.output_tokens, cost),
                        );
                    }
                }
                _ => {}
            }
            for u in mapper.map(&e) {
                send(&cx, &sid, u);
            }
            Ok(())
        },
        |e| h.observe(e),
    )
    .await;
    let end: RunOutcome = stream.end().await.into();
    drop(hold);
    mode_changed(&cx, &handle, mode_before);
    Ok(match end {
        RunOutcome::Ended { status, .. } => match status {
            TurnStatus::Completed | TurnStatus::Error => StopReason::EndTurn,
            TurnStatus::MaxIterationsExceeded => StopReason::MaxTurnRequests,
            TurnStatus::Interrupted => StopReason::Cancelled,
        },
        RunOutcome::ChannelClosed => StopReason::Cancelled,
        _ => StopReason::EndTurn,
    })
}

/// Tells the client when the session's mode changed (a `/mode`, `/plan`, a review's end).
pub(crate) fn mode_changed(
    cx: &ConnectionTo<Client>,
    handle: &SessionHandle,
    before: cairn_protocol::Mode,
) {
    if handle.mode() == before {
        return;
    }
    let sid = handle.id();
    send(
        cx,
        &sid,
        SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(handle.mode().as_str())),
    );
    send(
        cx,
        &sid,
        SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(crate::modes::config_options(
            handle,
        ))),
    );
}

/// A usage update: the context used after the last model reply, the window, the turn's cost
/// so far, and the sandbox state (in `_meta.cairn`).
fn usage(handle: &SessionHandle, used: u64, cost: f64) -> SessionUpdate {
    let size = cairn_runtime::compaction_config(&handle.model(), None).context_window;
    let mut meta = serde_json::Map::new();
    meta.insert(
        "cairn".into(),
        serde_json::json!({ "sandbox": handle.sandbox().describe() }),
    );
    let mut u = UsageUpdate::new(used, size).meta(meta);
    if cost > 0.0 {
        u = u.cost(Cost::new(cost, "USD"));
    }
    SessionUpdate::UsageUpdate(u)
}

fn say(cx: &ConnectionTo<Client>, sid: &str, text: &str) {
    send(
        cx,
        sid,
        SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text.to_string()))),
    );
}

/// What a slash command did, in a sentence.
fn describe(outcome: &CommandOutcome) -> String {
    match &outcome.effect {
        CommandEffect::Mode { mode } => format!("Mode: {}", mode.as_str()),
        CommandEffect::Model { model } => format!("Model: {model}"),
        CommandEffect::NothingToUndo => "Nothing to undo: this session changed no files.".into(),
        CommandEffect::Undone { .. } if outcome.status() != TurnStatus::Completed => {
            "Restored the files to before the last change; some files changed since were kept (conflicts).".into()
        }
        CommandEffect::Undone { .. } => "Restored the files to before the last change.".into(),
        CommandEffect::UndoFailed { reason } => format!("Undo failed: {reason}"),
    }
}
