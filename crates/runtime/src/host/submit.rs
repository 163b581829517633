//! One path from what a user typed to a turn, for every face: a leading `/command` is
//! carried out or expanded, `@path` mentions are resolved, files and images are checked and
//! stored, and what comes back is either a [`Turn`] ready to run or what a command did
//! ([`SessionHandle::submit`]). A turn is started only from a [`Turn`], and only `submit`
//! makes one: the compiler keeps faces on this path.

use std::path::PathBuf;

use cairn_engine::attachments::{MessageAttachment, TurnAttachments};
use cairn_engine::TurnOptions;
use cairn_protocol::Mode;

use super::dispatch::{dispatch, CommandError, CommandOutcome, Dispatch};
use super::{HostError, SessionHandle, TurnInput};
use crate::attach::{AttachError, ImageUpload};
use crate::mentions::Skipped;
use crate::store::StoreError;

/// What a user hands a session: the text as typed (with its `/command` and `@path`
/// mentions) and the files that go with it, or a retry or resume of what was there.
#[derive(Debug, Clone)]
pub struct Prompt {
    body: Body,
    ceiling: Option<Mode>,
    refuse_mentions: bool,
}

#[derive(Debug, Clone)]
enum Body {
    Text {
        text: String,
        attachments: Vec<MessageAttachment>,
    },
    Retry,
    Resume,
}

impl Prompt {
    /// What the user typed.
    pub fn text(text: impl Into<String>) -> Prompt {
        Prompt {
            body: Body::Text {
                text: text.into(),
                attachments: Vec::new(),
            },
            ceiling: None,
            refuse_mentions: false,
        }
    }

    /// Re-run the last turn after a retriable error (nothing runs when there is none).
    pub fn retry() -> Prompt {
        Prompt {
            body: Body::Retry,
            ceiling: None,
            refuse_mentions: false,
        }
    }

    /// Finish the tool calls left open when the process stopped (approvals asked again).
    pub fn resume() -> Prompt {
        Prompt {
            body: Body::Resume,
            ceiling: None,
            refuse_mentions: false,
        }
    }

    /// Reads and checks files given by path (`cairn run --attach`) to go with the text;
    /// refused before any session is touched when one is not an attachment.
    pub fn with_files(self, files: &[PathBuf]) -> Result<Prompt, AttachError> {
        if files.is_empty() {
            return Ok(self);
        }
        let read = crate::attach::read_files(files)?;
        Ok(self.with_attachments(read))
    }

    /// Checks images pasted or dropped into the prompt to go with the text.
    pub fn with_images(self, images: Vec<ImageUpload>) -> Result<Prompt, AttachError> {
        if images.is_empty() {
            return Ok(self);
        }
        let read = crate::attach::uploads_to_attachments(images)?;
        Ok(self.with_attachments(read))
    }

    /// The words as they will be sent (`None` for a retry or resume).
    pub fn words(&self) -> Option<&str> {
        match &self.body {
            Body::Text { text, .. } => Some(text),
            Body::Retry | Body::Resume => None,
        }
    }

    fn with_attachments(mut self, more: Vec<MessageAttachment>) -> Prompt {
        if let Body::Text { attachments, .. } = &mut self.body {
            attachments.extend(more);
        }
        self
    }

    /// `/mode` may not go above `ceiling` (the session's mode when not set).
    pub fn with_ceiling(mut self, ceiling: Mode) -> Prompt {
        self.ceiling = Some(ceiling);
        self
    }

    /// Refuse the prompt when a mention names a file that cannot be attached (the app);
    /// by default such a mention stays plain text and is named in [`Turn::notes`].
    pub fn refusing_unattachable_mentions(mut self) -> Prompt {
        self.refuse_mentions = true;
        self
    }
}

/// What a submitted prompt came to.
#[derive(Debug)]
pub enum Submission {
    /// A model turn, ready to run ([`SessionHandle::run`], [`SessionHandle::start_queued`]).
    Turn(Turn),
    /// A command carried out without a model turn.
    Done(CommandOutcome),
}

/// A turn ready to run: made only by [`SessionHandle::submit`].
#[derive(Debug)]
pub struct Turn {
    pub(super) input: TurnInput,
    /// What a command file asked of this turn (its `!` lines, grants, model).
    pub(super) options: TurnOptions,
    /// Puts the mode back once the turn ended (or never started).
    pub(super) mode_back: Option<ModeBack>,
    notes: Vec<SubmitNote>,
}

/// Puts a session's mode back when dropped: `/review` runs read-only, then the mode it
/// interrupted returns whatever happened (the turn ended, failed, or never started).
pub(super) struct ModeBack {
    session: cairn_engine::Session,
    mode: Mode,
}

impl std::fmt::Debug for ModeBack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModeBack({})", self.mode.as_str())
    }
}

impl Drop for ModeBack {
    fn drop(&mut self) {
        self.session.set_mode(self.mode);
    }
}

impl SessionHandle {
    /// What a message carries: its `@path` and `@server:uri` mentions resolved (workspace
    /// files after deny rules; MCP resources through their server) and its images stored
    /// under the session (held back for a model without vision). `None`: plain text. The
    /// notes say what stays text and why.
    pub(crate) async fn attach(
        &self,
        text: &str,
        attachments: Vec<MessageAttachment>,
        refuse_mentions: bool,
    ) -> Result<(Option<TurnAttachments>, Vec<SubmitNote>), SubmitError> {
        let session = self.session();
        let denials = session.read_denials("read_file");
        let mut mentions = crate::mentions::resolve(self.workspace(), text, &denials);
        // `@server:uri` of a configured MCP server: read through that server, not a path.
        let mut resource_notes = Vec::new();
        if let Some(manager) = self.assembled().mcp.manager() {
            let found = crate::mcp_mentions::find(text, &manager.server_names());
            if !found.is_empty() {
                let prefixes: Vec<String> =
                    found.iter().map(|m| format!("{}:", m.server)).collect();
                mentions
                    .skipped
                    .retain(|s| !prefixes.iter().any(|p| s.mention.starts_with(p.as_str())));
                manager.wait_settled(crate::mcp::startup_grace()).await;
                let (files, failed) = crate::mcp_mentions::read(manager, &found).await;
                mentions.files.extend(files);
                resource_notes.extend(failed.into_iter().map(|(mention, why)| {
                    SubmitNote::MentionAsText {
                        skipped: Skipped {
                            mention,
                            reason: crate::mentions::Refusal::Unreadable(why),
                        },
                    }
                }));
            }
        }
        if refuse_mentions {
            if let Some(refused) = mentions.first_refusal() {
                return Err(SubmitError::Mention(refused.clone()));
            }
        }
        let mut notes: Vec<SubmitNote> = if refuse_mentions {
            Vec::new()
        } else {
            mentions
                .skipped
                .into_iter()
                .map(|skipped| SubmitNote::MentionAsText { skipped })
                .collect()
        };
        notes.extend(resource_notes);
        if attachments.is_empty() && mentions.files.is_empty() {
            return Ok((None, notes));
        }
        let dir = self.store().session_dir(&self.id())?;
        let model = session.model();
        let (attached, held) =
            crate::attach::turn_attachments(&dir, &model, attachments, mentions.files)?;
        if held > 0 {
            notes.push(SubmitNote::ImagesHeld { model, count: held });
        }
        Ok((Some(attached), notes))
    }

    /// Queues a message for the running turn (steering): its images, files and `@path`
    /// mentions reach the model with it as a turn's own do (a `/command` is not carried out:
    /// steering is words for the model). Returns the instructions still waiting and what
    /// stays text (see [`SessionHandle::attach`]).
    pub async fn steer(
        &self,
        prompt: Prompt,
    ) -> Result<(Vec<String>, Vec<SubmitNote>), SubmitError> {
        if self.is_closed() {
            return Err(HostError::Closed(self.id()).into());
        }
        let (text, attachments) = match prompt.body {
            Body::Text { text, attachments } if !text.trim().is_empty() => (text, attachments),
            _ => return Err(SubmitError::NotAMessage),
        };
        let (attached, notes) = self
            .attach(&text, attachments, prompt.refuse_mentions)
            .await?;
        let session = self.session();
        match attached {
            Some(a) => session.queue_steering_with(text, a),
            None => session.queue_steering(text),
        }
        Ok((session.pending_steering(), notes))
    }
}

impl Turn {
    /// What the face should tell the user before the turn runs (mentions sent as text,
    /// images the model cannot see).
    pub fn notes(&self) -> &[SubmitNote] {
        &self.notes
    }
}

/// Something about a prompt that the user should hear, though the turn runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitNote {
    /// A mention that is not attached; it stays in the text.
    #[error("{skipped}; @{} is sent as plain text", .skipped.mention)]
    MentionAsText {
        /// The mention and why.
        skipped: Skipped,
    },
    /// Something a command file asked that is not honoured as written (its `!` lines before
    /// the trust, `allowed-tools` of a shadowing command, a model alias).
    #[error("/{command}: {note}")]
    Command {
        /// The command's name.
        command: String,
        /// What and why.
        note: String,
    },
    /// Images the model cannot see: saved and referenced in the prompt, not sent.
    #[error("{model} does not accept images: {count} image(s) saved and referenced in the prompt, not sent (the agent can describe them with its media tool)")]
    ImagesHeld {
        /// The model.
        model: String,
        /// How many.
        count: usize,
    },
}

/// Why a prompt did not become a turn (nothing ran, nothing changed).
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// A `/command` that cannot be carried out as typed.
    #[error(transparent)]
    Command(#[from] CommandError),
    /// A mention the face refuses to send ([`Prompt::refusing_unattachable_mentions`]).
    #[error(transparent)]
    Mention(Skipped),
    /// Attachments that cannot be sent or stored.
    #[error(transparent)]
    Attach(#[from] AttachError),
    /// The session's folder cannot be used.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The session cannot run a turn.
    #[error(transparent)]
    Host(#[from] HostError),
    /// Steering that is not words (empty, a retry or a resume).
    #[error("steering is a message: words, with images or files if you like")]
    NotAMessage,
}

impl SessionHandle {
    /// The one path from a prompt to a turn: a leading `/command` is carried out (or
    /// expanded into the turn's text), `@path` mentions are resolved, attachments stored
    /// under the session. A [`Submission::Turn`] is then run with [`SessionHandle::run`].
    pub async fn submit(&self, prompt: Prompt) -> Result<Submission, SubmitError> {
        if self.is_closed() {
            return Err(HostError::Closed(self.id()).into());
        }
        // Hooks trusted or changed since the last prompt apply to this turn.
        self.assembled().refresh_hooks(&self.id(), self.workspace());
        let (text, attachments) = match prompt.body {
            Body::Retry => return Ok(Submission::Turn(Turn::of(TurnInput::Retry))),
            Body::Resume => return Ok(Submission::Turn(Turn::of(TurnInput::Resume))),
            Body::Text { text, attachments } => (text, attachments),
        };
        let (text, mode_after, command) = match dispatch(self, &text, prompt.ceiling).await? {
            Dispatch::Done(outcome) => return Ok(Submission::Done(outcome)),
            Dispatch::Compact => return Ok(Submission::Turn(Turn::of(TurnInput::Compact))),
            Dispatch::Prompt {
                text,
                mode_after,
                command,
            } => (text, mode_after, command),
        };
        // A command file's `!` lines, `allowed-tools` and `model`, as far as they are honoured.
        let (text, options, command_notes) = match command {
            Some((name, extras)) => super::command_turn::command_turn(self, &name, text, &extras),
            None => (text, TurnOptions::default(), Vec::new()),
        };
        let session = self.session();
        // From here on a failure puts the mode back too.
        let mode_back = mode_after.map(|mode| ModeBack {
            session: session.clone(),
            mode,
        });
        let (attached, mut notes) = self
            .attach(&text, attachments, prompt.refuse_mentions)
            .await?;
        notes.extend(command_notes);
        let input = match attached {
            None => TurnInput::Text(text),
            Some(attached) => TurnInput::Attached(text, Box::new(attached)),
        };
        Ok(Submission::Turn(Turn {
            input,
            options,
            mode_back,
            notes,
        }))
    }
}

impl Turn {
    fn of(input: TurnInput) -> Turn {
        Turn {
            input,
            options: TurnOptions::default(),
            mode_back: None,
            notes: Vec::new(),
        }
    }
}
