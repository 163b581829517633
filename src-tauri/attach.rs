//! The turn input of a prompt: its `@path` mentions resolved and its pasted images checked
//! and saved ([`cairn_runtime::mentions`], [`cairn_runtime::attach`]). A mention that cannot
//! be attached refuses the prompt (words that name no file stay plain text).

use cairn_runtime::attach::{turn_attachments, uploads_to_attachments, ImageUpload};
use cairn_runtime::host::TurnInput;

use crate::error::{IpcError, IpcResult};
use crate::runtime::SessionRuntime;

/// The turn input for a prompt: its mentioned files read, its images validated and saved
/// under the session. Plain text when it carries neither.
pub fn turn_input(
    runtime: &SessionRuntime,
    text: String,
    images: Vec<ImageUpload>,
) -> IpcResult<TurnInput> {
    let denials = runtime.session().read_denials("read_file");
    let mentions = cairn_runtime::mentions::resolve(runtime.workspace(), &text, &denials);
    if let Some(refused) = mentions.first_refusal() {
        return Err(IpcError::invalid(refused.to_string()));
    }
    let images = uploads_to_attachments(images)?;
    if mentions.files.is_empty() && images.is_empty() {
        return Ok(TurnInput::Text(text));
    }
    let dir = runtime.store().session_dir(&runtime.id())?;
    let model = runtime.session().model();
    let (attached, held) = turn_attachments(&dir, &model, images, mentions.files)?;
    if held > 0 {
        tracing::info!(
            held,
            "the model does not accept images: they are referenced, not sent"
        );
    }
    Ok(TurnInput::Attached(text, Box::new(attached)))
}
