//! What `cairn run` sends besides the prompt's text: the `--attach` files (read and checked
//! by [`cairn_runtime::attach::read_files`] before anything runs) and the files its `@path`
//! mentions name, by the app's rules ([`cairn_runtime::mentions`]). A mention that cannot be
//! attached stays plain text, with a note on stderr saying why.

use std::path::Path;

use cairn_engine::attachments::{ContextFile, MessageAttachment, TurnAttachments};
use cairn_runtime::Assembled;

/// The files the prompt's mentions name, read from the session's workspace; every mention
/// that cannot be attached gets a `note:` on stderr (words that name no file get none).
pub fn mentioned_files(assembled: &Assembled, prompt: &str) -> Vec<ContextFile> {
    let workspace = assembled.persister.saved().workspace;
    let denials = assembled.session.read_denials("read_file");
    let mentions = cairn_runtime::mentions::resolve(Path::new(&workspace), prompt, &denials);
    for skipped in &mentions.skipped {
        errln!(
            "note: {skipped}; @{} is sent as plain text",
            skipped.mention
        );
    }
    mentions.files
}

/// Stores the attachments under the session's folder and holds back images the model
/// cannot see (saying so on stderr).
pub fn turn_attachments(
    assembled: &Assembled,
    attachments: Vec<MessageAttachment>,
    files: Vec<ContextFile>,
) -> Result<TurnAttachments, String> {
    let session = &assembled.session;
    let dir = assembled
        .store
        .session_dir(&session.id())
        .map_err(|e| e.to_string())?;
    let model = session.model();
    let (a, held) = cairn_runtime::attach::turn_attachments(&dir, &model, attachments, files)
        .map_err(|e| e.to_string())?;
    if held > 0 {
        errln!(
            "note: {model} does not accept images: {held} image(s) saved and referenced in the \
             prompt, not sent (the agent can describe them with its media tool)"
        );
    }
    Ok(a)
}
