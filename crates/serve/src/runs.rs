//! Running a session's queued messages one at a time: each run's events go to the session's
//! hub (`GET …/events`) and to the attached client's stream, which ends with `run_end`. The
//! engine's stream is always drained, whoever listens.

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use cairn_engine::attachments::MessageAttachment;
use cairn_protocol::{Event, Mode};
use cairn_runtime::commands::{self, CommandOutcome, Dispatch};
use cairn_runtime::host::{
    forward, HostError, RunOutcome, SessionHandle, SlottedStream, TurnInput,
};
use serde_json::json;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::hub::Outlet;
use crate::live::{Attachment, Input, Live, Queued};

/// How a turn was started.
pub enum Started {
    /// A turn runs; put the mode back to `mode_after` when it ended.
    Turn(SlottedStream, Option<Mode>),
    /// A slash command was carried out without a model turn.
    Command(CommandOutcome),
    /// Interrupted while it waited for a turn slot.
    Interrupted,
}

/// Why a turn could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The host refused.
    #[error(transparent)]
    Host(#[from] HostError),
    /// A slash command was refused.
    #[error(transparent)]
    Command(#[from] commands::CommandError),
    /// An attachment could not be used.
    #[error("{0}")]
    Attachment(String),
}

/// The one place the server starts a turn (at the merge of the one-path issue this becomes
/// `SessionHandle::submit`): a leading `/command`, `@path` mentions and attachments are
/// resolved as `cairn run` resolves its prompt.
pub async fn start_turn(handle: &SessionHandle, input: Input) -> Result<Started, StartError> {
    let (turn, mode_after) = match input {
        Input::Retry => (TurnInput::Retry, None),
        Input::Resume => (TurnInput::Resume, None),
        Input::Text(text, attachments) => match commands::dispatch(handle, &text, None).await? {
            Dispatch::Done(outcome) => return Ok(Started::Command(outcome)),
            Dispatch::Compact => (TurnInput::Compact, None),
            Dispatch::Prompt { text, mode_after } => {
                (with_attachments(handle, text, &attachments)?, mode_after)
            }
        },
    };
    Ok(match handle.start_queued(turn, |_| {}).await? {
        Some(stream) => Started::Turn(stream, mode_after),
        None => Started::Interrupted,
    })
}

/// The prompt's mentions and the message's attachments, as `cairn run` sends them.
fn with_attachments(
    handle: &SessionHandle,
    mut text: String,
    attachments: &[Attachment],
) -> Result<TurnInput, StartError> {
    let assembled = handle.assembled();
    let workspace = handle.workspace().to_path_buf();
    let mut media: Vec<MessageAttachment> = Vec::new();
    let mut uploads = Vec::new();
    for a in attachments {
        match a {
            Attachment::Path(p) => {
                let (abs, rel) = cairn_runtime::mentions::resolve_path(&workspace, p)
                    .map_err(StartError::Attachment)?;
                if is_media(&abs) {
                    media.extend(
                        cairn_runtime::attach::read_files(&[abs])
                            .map_err(|e| StartError::Attachment(e.to_string()))?,
                    );
                } else {
                    // A text file is sent as an `@path` mention is, with its limits.
                    text.push_str(&format!("\n@{rel}"));
                }
            }
            Attachment::Inline { media_type, base64 } => {
                base64::engine::general_purpose::STANDARD
                    .decode(base64.as_bytes())
                    .map_err(|e| StartError::Attachment(format!("attachment base64: {e}")))?;
                uploads.push(cairn_runtime::attach::ImageUpload {
                    name: format!("upload.{}", media_type.rsplit('/').next().unwrap_or("bin")),
                    mime_type: media_type.clone(),
                    data_url: format!("data:{media_type};base64,{base64}"),
                });
            }
        }
    }
    if !uploads.is_empty() {
        media.extend(
            cairn_runtime::attach::uploads_to_attachments(uploads)
                .map_err(|e| StartError::Attachment(e.to_string()))?,
        );
    }
    let denials = assembled.session.read_denials("read_file");
    let files = cairn_runtime::mentions::resolve(&workspace, &text, &denials).files;
    if media.is_empty() && files.is_empty() {
        return Ok(TurnInput::Text(text));
    }
    let dir = assembled
        .store
        .session_dir(&handle.id())
        .map_err(|e| StartError::Attachment(e.to_string()))?;
    let model = assembled.session.model();
    let (a, _held) = cairn_runtime::attach::turn_attachments(&dir, &model, media, files)
        .map_err(|e| StartError::Attachment(e.to_string()))?;
    Ok(TurnInput::Attached(text, Box::new(a)))
}

/// Whether a file is one `cairn run --attach` sends (image, audio, video), by the engine's
/// table of attachable kinds.
fn is_media(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .and_then(cairn_engine::attachments::mime_from_name)
        .is_some()
}

/// Sends a frame to the session's hub and the attached client; a client that is gone or
/// too slow interrupts the run (once).
struct Emitter<'a> {
    live: &'a Live,
    outlet: Option<Outlet>,
    run: u64,
}

impl Emitter<'_> {
    fn emit_json(&mut self, kind: &str, data: &str) {
        let frame = self.live.hub.publish(kind, data);
        if let Some(o) = &self.outlet {
            if !o.send(frame.text.clone()) {
                self.outlet = None;
                self.live.client_gone(self.run);
            }
        }
    }

    fn event(&mut self, e: &Event) {
        match serde_json::to_string(e) {
            Ok(line) => self.emit_json(e.type_name(), &line),
            Err(err) => tracing::warn!(error = %err, "event not serialisable"),
        }
    }
}

/// Runs the session's messages in post order until it closes.
pub async fn worker(live: Arc<Live>, turns: Option<Arc<Semaphore>>) {
    while let Some((queued, cancel)) = live.next().await {
        run_one(&live, queued, cancel, turns.as_ref()).await;
        live.finished();
    }
}

async fn run_one(
    live: &Live,
    queued: Queued,
    cancel: CancellationToken,
    turns: Option<&Arc<Semaphore>>,
) {
    let Queued { id, input, outlet } = queued;
    let mut out = Emitter {
        live,
        outlet,
        run: id,
    };
    // The server-wide turn cap, on top of the machine's turn slots.
    let _permit = match turns {
        Some(s) => tokio::select! {
            p = s.clone().acquire_owned() => p.ok(),
            _ = cancel.cancelled() => {
                run_end(&mut out, &RunOutcome::Ended {
                    status: cairn_protocol::TurnStatus::Interrupted,
                    turns: 0,
                    steering_turns: 0,
                });
                return;
            }
        },
        None => None,
    };
    let outcome = match start_turn(&live.handle, input).await {
        Ok(Started::Turn(stream, mode_after)) => {
            let (mut stream, slot) = stream.into_inner();
            let handle = &live.handle;
            forward(
                &mut stream,
                cairn_runtime::host::BATCH_WINDOW,
                |e: Event| -> Result<(), ()> {
                    out.event(&e);
                    Ok(())
                },
                |e| {
                    handle.observe(e);
                    live.observe(e);
                },
            )
            .await;
            let end: RunOutcome = stream.end().await.into();
            drop(slot);
            if let Some(mode) = mode_after {
                handle.session().set_mode(mode);
            }
            end
        }
        Ok(Started::Command(outcome)) => RunOutcome::Command { outcome },
        Ok(Started::Interrupted) => RunOutcome::Ended {
            status: cairn_protocol::TurnStatus::Interrupted,
            turns: 0,
            steering_turns: 0,
        },
        Err(e) => {
            let data = json!({"type": "error", "data": {
                "error": e.to_string(), "error_type": "invalid_request", "retriable": false,
                "iteration": 0, "reqId": "", "logTime": chrono::Utc::now().to_rfc3339(),
                "taskId": ""}});
            out.emit_json("error", &data.to_string());
            RunOutcome::NotStarted
        }
    };
    run_end(&mut out, &outcome);
}

fn run_end(out: &mut Emitter<'_>, outcome: &RunOutcome) {
    let data = json!({"type": "run_end", "data": outcome}).to_string();
    out.emit_json("run_end", &data);
}
