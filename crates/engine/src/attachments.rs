//! User attachments (seed §13): validated, stored under the session's `attachments/`, sent
//! inline (base64) only in the turn that carries them; history keeps a text reference.

use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use cairn_protocol::{ContentPart, Message};
use serde::{Deserialize, Serialize};

/// Most attachments on one message.
pub const MAX_ATTACHMENTS: usize = 4;
/// Byte cap for one attachment and for all attachments of a message together.
pub const MAX_ATTACHMENT_BYTES: u64 = 10 * 1024 * 1024;
/// Sub-directory of the session directory holding attachment files.
pub const ATTACHMENT_DIR: &str = "attachments";

/// An attachment as received: a name, a mime type and a `data:` URL with base64 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageAttachment {
    /// File name shown to the user.
    pub name: String,
    /// `image/*`, `audio/*` or `video/*`.
    pub mime_type: String,
    /// `data:<mime>;base64,<payload>`.
    pub data_url: String,
}

/// A saved attachment: what travels in events and history instead of the bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredAttachment {
    /// File name shown to the user.
    pub name: String,
    /// Mime type.
    pub mime_type: String,
    /// Size in bytes.
    pub size: u64,
    /// Path relative to the session directory, `attachments/<file>`.
    pub path: String,
}

/// A stored attachment read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedAttachment {
    /// File name shown to the user.
    pub name: String,
    /// Mime type.
    pub mime_type: String,
    /// Size in bytes.
    pub size: u64,
    /// The bytes, base64.
    pub base64: String,
}

/// Why attachments were refused.
#[derive(Debug, thiserror::Error)]
pub enum AttachmentError {
    /// More than [`MAX_ATTACHMENTS`].
    #[error("at most {MAX_ATTACHMENTS} attachments per message ({0} given)")]
    TooMany(usize),
    /// A mime type outside image/audio/video.
    #[error("attachment `{name}`: type `{mime}` is not allowed (images, audio and video only)")]
    Type { name: String, mime: String },
    /// Not a base64 `data:` URL, or its type disagrees with the declared one.
    #[error("attachment `{name}`: {reason}")]
    Data { name: String, reason: String },
    /// Over the size caps.
    #[error("attachment `{name}` is {size} bytes: the limit is 10 MB per file and in total")]
    TooLarge { name: String, size: u64 },
    /// A stored path that is not `attachments/<file>`.
    #[error("`{0}` is not an attachment path (expected attachments/<file>)")]
    BadPath(String),
    /// Reading or writing the files failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

/// Whether a mime type may be attached (`image/*`, `audio/*`, `video/*`; no SVG, which can
/// carry scripts).
pub fn allowed_mime(mime: &str) -> bool {
    let m = mime.trim().to_ascii_lowercase();
    let ok_family = ["image/", "audio/", "video/"]
        .iter()
        .any(|f| m.starts_with(f) && m.len() > f.len());
    ok_family && !m.starts_with("image/svg")
}

/// For the image types sent to models: what is wrong when `bytes` do not start like `mime`
/// (other types are not checked).
fn image_kind_mismatch(mime: &str, bytes: &[u8]) -> Option<&'static str> {
    let ok = match mime {
        "image/png" => bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" | "image/jpg" => bytes.starts_with(&[0xFF, 0xD8, 0xFF]),
        "image/gif" => bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a"),
        "image/webp" => bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP",
        "image/bmp" => bytes.starts_with(b"BM"),
        _ => return None,
    };
    (!ok).then_some("is not one (its first bytes do not match)")
}

/// Checks and normalises attachments: count, type, `data:` URL, size per file and in total;
/// names are reduced to a plain file name. Empty input gives an empty list.
pub fn normalize_attachments(
    raw: Vec<MessageAttachment>,
) -> Result<Vec<MessageAttachment>, AttachmentError> {
    if raw.len() > MAX_ATTACHMENTS {
        return Err(AttachmentError::TooMany(raw.len()));
    }
    let mut total = 0u64;
    let mut out = Vec::with_capacity(raw.len());
    for a in raw {
        let name = clean_name(&a.name);
        let declared = a.mime_type.trim().to_ascii_lowercase();
        let (url_mime, payload) =
            split_data_url(&a.data_url).ok_or_else(|| AttachmentError::Data {
                name: name.clone(),
                reason: "expected a data:<mime>;base64,<payload> URL".into(),
            })?;
        let mime = if declared.is_empty() {
            url_mime.clone()
        } else {
            declared
        };
        if !url_mime.is_empty() && url_mime != mime {
            return Err(AttachmentError::Data {
                name,
                reason: format!("declared type `{mime}` but the data is `{url_mime}`"),
            });
        }
        if !allowed_mime(&mime) {
            return Err(AttachmentError::Type { name, mime });
        }
        // Cheap size check before decoding: 4 base64 chars carry 3 bytes.
        let approx = (payload.len() as u64 / 4) * 3;
        if approx > MAX_ATTACHMENT_BYTES + 3 {
            return Err(AttachmentError::TooLarge { name, size: approx });
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(payload.trim())
            .map_err(|e| AttachmentError::Data {
                name: name.clone(),
                reason: format!("invalid base64: {e}"),
            })?;
        let size = bytes.len() as u64;
        total += size;
        if size > MAX_ATTACHMENT_BYTES || total > MAX_ATTACHMENT_BYTES {
            return Err(AttachmentError::TooLarge { name, size });
        }
        // Images go to the model as images: their bytes must be what the type says, or the
        // provider rejects the whole request mid-turn.
        if let Some(actual) = image_kind_mismatch(&mime, &bytes) {
            return Err(AttachmentError::Data {
                name,
                reason: format!("declared `{mime}`, but the file {actual}"),
            });
        }
        let payload = base64::engine::general_purpose::STANDARD.encode(&bytes);
        out.push(MessageAttachment {
            data_url: format!("data:{mime};base64,{payload}"),
            name,
            mime_type: mime,
        });
    }
    Ok(out)
}

/// Writes attachments under `<session_dir>/attachments/` and returns their references.
pub fn save_attachments(
    session_dir: &Path,
    attachments: &[MessageAttachment],
) -> Result<Vec<StoredAttachment>, AttachmentError> {
    let dir = session_dir.join(ATTACHMENT_DIR);
    std::fs::create_dir_all(&dir).map_err(|source| AttachmentError::Io {
        context: format!("creating {}", dir.display()),
        source,
    })?;
    let batch = uuid::Uuid::new_v4().simple().to_string();
    let mut refs = Vec::with_capacity(attachments.len());
    for (i, a) in attachments.iter().enumerate() {
        let (_, payload) = split_data_url(&a.data_url).ok_or_else(|| AttachmentError::Data {
            name: a.name.clone(),
            reason: "expected a data:<mime>;base64,<payload> URL".into(),
        })?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(payload.trim())
            .map_err(|e| AttachmentError::Data {
                name: a.name.clone(),
                reason: format!("invalid base64: {e}"),
            })?;
        let file = format!("{}-{i}-{}", &batch[..12], clean_name(&a.name));
        let path = dir.join(&file);
        std::fs::write(&path, &bytes).map_err(|source| AttachmentError::Io {
            context: format!("writing {}", path.display()),
            source,
        })?;
        refs.push(StoredAttachment {
            name: a.name.clone(),
            mime_type: a.mime_type.clone(),
            size: bytes.len() as u64,
            path: format!("{ATTACHMENT_DIR}/{file}"),
        });
    }
    Ok(refs)
}

/// Reads a stored attachment back; only `attachments/<file>` is accepted (no `..`, no
/// sub-directories, no absolute paths).
pub fn read_stored_attachment(
    session_dir: &Path,
    path: &str,
) -> Result<LoadedAttachment, AttachmentError> {
    let file = attachment_file(path)?;
    let full = session_dir.join(ATTACHMENT_DIR).join(&file);
    let bytes = std::fs::read(&full).map_err(|source| AttachmentError::Io {
        context: format!("reading {}", full.display()),
        source,
    })?;
    let name = file
        .to_string_lossy()
        .splitn(3, '-')
        .nth(2)
        .unwrap_or_default()
        .to_string();
    Ok(LoadedAttachment {
        mime_type: mime_from_name(&name)
            .unwrap_or("application/octet-stream")
            .to_string(),
        name,
        size: bytes.len() as u64,
        base64: base64::engine::general_purpose::STANDARD.encode(&bytes),
    })
}

fn attachment_file(path: &str) -> Result<PathBuf, AttachmentError> {
    let bad = || AttachmentError::BadPath(path.to_string());
    if path.contains('\\') {
        return Err(bad());
    }
    let mut parts = Path::new(path).components();
    match (parts.next(), parts.next(), parts.next()) {
        (Some(Component::Normal(d)), Some(Component::Normal(f)), None)
            if d == ATTACHMENT_DIR && !f.to_string_lossy().starts_with('.') =>
        {
            Ok(PathBuf::from(f))
        }
        _ => Err(bad()),
    }
}

/// The base64 image parts of a turn, sent with that turn's requests only.
#[derive(Debug, Clone, PartialEq)]
pub struct InlineAttachments {
    /// Text of the user message they belong to (as stored in history).
    pub message_text: String,
    /// Image parts to append to that message in outbound requests.
    pub parts: Vec<ContentPart>,
}

/// A workspace text file the user mentioned (`@path`): its content goes into the user
/// message, delimited as `<file path="…">…</file>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextFile {
    /// Path relative to the workspace, `/`-separated.
    pub path: String,
    /// The file's text.
    pub text: String,
}

impl ContextFile {
    /// The block appended to the user message.
    pub fn block(&self) -> String {
        let path = self.path.replace('&', "&amp;").replace('"', "&quot;");
        let nl = if self.text.ends_with('\n') { "" } else { "\n" };
        format!("<file path=\"{path}\">\n{}{nl}</file>", self.text)
    }
}

/// The attachments of one turn: the validated data and their stored references.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnAttachments {
    /// Validated attachments (see [`normalize_attachments`]).
    pub attachments: Vec<MessageAttachment>,
    /// Their saved copies (see [`save_attachments`]).
    pub refs: Vec<StoredAttachment>,
    /// Mentioned workspace files whose text goes into the message (kept in history).
    pub files: Vec<ContextFile>,
}

impl TurnAttachments {
    /// The user message as kept in history (input plus one reference line per attachment,
    /// with the saved copy's absolute path under `state_dir`, which tools may read) and the
    /// inline parts sent during this turn only.
    pub fn split(&self, input: &str, state_dir: &std::path::Path) -> (Message, InlineAttachments) {
        let mut text = input.to_string();
        for r in &self.refs {
            text.push_str(&format!(
                "\n[attachment: {} ({}, {} bytes) saved at {}]",
                r.name,
                r.mime_type,
                r.size,
                state_dir.join(&r.path).display()
            ));
        }
        for f in &self.files {
            text.push_str("\n\n");
            text.push_str(&f.block());
        }
        let parts = self
            .attachments
            .iter()
            .filter(|a| a.mime_type.starts_with("image/"))
            .filter_map(|a| {
                let (mime, payload) = split_data_url(&a.data_url)?;
                Some(ContentPart::Image {
                    mime_type: mime,
                    data: payload.to_string(),
                })
            })
            .collect();
        (
            Message::user(text.clone()),
            InlineAttachments {
                message_text: text,
                parts,
            },
        )
    }

    /// `turn_start.data.attachments`: the saved attachments, then one entry per mentioned file.
    pub fn carried(&self) -> Vec<cairn_protocol::CarriedRef> {
        let files = self.files.iter().map(|f| {
            cairn_protocol::CarriedRef::File(cairn_protocol::MentionedFile {
                kind: cairn_protocol::FileTag::File,
                path: f.path.clone(),
                size: f.text.len() as u64,
            })
        });
        self.refs
            .iter()
            .map(|r| {
                cairn_protocol::CarriedRef::Stored(cairn_protocol::StoredRef {
                    name: r.name.clone(),
                    mime_type: r.mime_type.clone(),
                    size: r.size,
                    path: r.path.clone(),
                })
            })
            .chain(files)
            .collect()
    }
}

/// The history as sent: the turn's inline parts (its input's and its steering's) appended
/// to their user messages.
pub fn outbound(messages: &[Message], inline: &[InlineAttachments]) -> Vec<Message> {
    let mut out = messages.to_vec();
    for inline in inline.iter().filter(|i| !i.parts.is_empty()) {
        let target = out
            .iter()
            .rposition(|m| matches!(m, Message::User { .. }) && m.text() == inline.message_text);
        if let Some(Message::User { content }) = target.map(|i| &mut out[i]) {
            content.extend(inline.parts.iter().cloned());
        }
    }
    out
}

/// Replaces inline image data in user messages by a short note (for histories that carry
/// base64 from elsewhere).
pub fn strip_attachments(messages: &mut [Message]) -> usize {
    let mut n = 0;
    for m in messages.iter_mut() {
        if let Message::User { content } = m {
            for p in content.iter_mut() {
                if let ContentPart::Image { mime_type, .. } = p {
                    *p = ContentPart::Text {
                        text: format!("[{mime_type} attachment omitted from history]"),
                    };
                    n += 1;
                }
            }
        }
    }
    n
}

/// The mime type of a file name's extension, for the attachable kinds.
pub fn mime_from_name(name: &str) -> Option<&'static str> {
    let ext = name.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match ext.as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "bmp" => "image/bmp",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        "m4a" => "audio/mp4",
        "flac" => "audio/flac",
        "mp4" => "video/mp4",
        "webm" => "video/webm",
        "mov" => "video/quicktime",
        _ => return None,
    })
}

/// A `data:` URL for bytes of a mime type.
pub fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

fn split_data_url(url: &str) -> Option<(String, &str)> {
    let rest = url.trim().strip_prefix("data:")?;
    let (meta, payload) = rest.split_once(',')?;
    let mime = meta.strip_suffix(";base64")?;
    Some((mime.trim().to_ascii_lowercase(), payload))
}

fn clean_name(name: &str) -> String {
    let base = name.rsplit(['/', '\\']).next().unwrap_or("");
    let cleaned: String = base
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    let cleaned = cleaned.trim_start_matches('.').to_string();
    if cleaned.is_empty() {
        "attachment".into()
    } else {
        cleaned
    }
}
