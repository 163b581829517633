//! Running a session's queued messages one at a time: each run's events go to the session's
//! hub (`GET …/events`) and to the attached client's stream, which ends with `run_end`. The
//! engine's stream is always drained, whoever listens.

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use cairn_protocol::Event;
use cairn_runtime::host::{
    forward, CommandOutcome, HostError, Prompt, RunOutcome, SessionHandle, SlottedStream,
    Submission, SubmitError,
};
use serde_json::json;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::hub::Outlet;
use crate::live::{Attachment, Input, Live, Queued};

/// How a turn was started.
pub enum Started {
    /// A turn runs (a `/review`'s mode comes back when its hold is dropped).
    Turn(SlottedStream),
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
    /// The prompt did not become a turn (a refused `/command`, attachments).
    #[error(transparent)]
    Submit(#[from] SubmitError),
    /// An attachment could not be used.
    #[error("{0}")]
    Attachment(String),
}

/// The one place the server starts a turn: the runtime's one path ([`SessionHandle::submit`])
/// resolves a leading `/command`, `@path` mentions and attachments as `cairn run` resolves
/// its prompt.
pub async fn start_turn(handle: &SessionHandle, input: Input) -> Result<Started, StartError> {
    let prompt = match input {
        Input::Retry => Prompt::retry(),
        Input::Resume => Prompt::resume(),
        Input::Text(text, attachments) => prompt_of(handle, text, &attachments)?,
    };
    let turn = match handle.submit(prompt).await? {
        Submission::Done(outcome) => return Ok(Started::Command(outcome)),
        Submission::Turn(turn) => turn,
    };
    Ok(match handle.start_queued(turn, |_| {}).await? {
        Some(stream) => Started::Turn(stream),
        None => Started::Interrupted,
    })
}

/// The prompt with the message's attachments: media files and inline images go with it as
/// `cairn run --attach` sends them, a text file by path as an `@path` mention.
pub(crate) fn prompt_of(
    handle: &SessionHandle,
    mut text: String,
    attachments: &[Attachment],
) -> Result<Prompt, StartError> {
    let workspace = handle.workspace().to_path_buf();
    let mut media = Vec::new();
    let mut uploads = Vec::new();
    for a in attachments {
        match a {
            Attachment::Path(p) => {
                let (abs, rel) = cairn_runtime::mentions::resolve_path(&workspace, p)
                    .map_err(StartError::Attachment)?;
                if is_media(&abs) {
                    media.push(abs);
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
    Prompt::text(text)
        .with_files(&media)
        .and_then(|p| p.with_images(uploads))
        .map_err(|e| StartError::Attachment(e.to_string()))
}

/// Whether a file is one `cairn run --attach` sends (image, audio, video), by the runtime's
/// table of attachable kinds.
fn is_media(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .and_then(cairn_runtime::attach::mime_from_name)
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
        Ok(Started::Turn(stream)) => {
            let (mut stream, hold) = stream.into_inner();
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
            drop(hold);
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
    // After its first turn (not one interrupted, e.g. by closing) a session is named unless
    // the user named it (serve.md: the session's stream carries `session_named`).
    let ran = matches!(outcome, RunOutcome::Ended { turns, status, .. }
        if turns > 0 && status != cairn_protocol::TurnStatus::Interrupted);
    if ran && !live.closed.is_cancelled() {
        if let Some(name) = live.handle.name_automatically().await {
            let named = json!({"type": "session_named", "data": {"name": name, "source": "auto"}});
            live.hub.publish("session_named", &named.to_string());
        }
    }
}

fn run_end(out: &mut Emitter<'_>, outcome: &RunOutcome) {
    let data = json!({"type": "run_end", "data": outcome}).to_string();
    out.emit_json("run_end", &data);
}
