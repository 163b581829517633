//! What a prompt carries besides its text, for the app and `cairn run` alike: images pasted
//! or dropped into it (the app) and files given with `--attach` (the CLI), checked against
//! seed §13's limits and stored under the session's `attachments/`; the files its `@path`
//! mentions name ([`crate::mentions`]). Stored images are read back, for the transcript's
//! thumbnails, only from the session's own folder.

use std::path::{Path, PathBuf};

use cairn_engine::attachments::{
    self, data_url, normalize_attachments, save_attachments, AttachmentError, ContextFile,
    MessageAttachment, TurnAttachments, MAX_ATTACHMENTS, MAX_ATTACHMENT_BYTES,
};
use serde::Deserialize;

/// A `data:` URL of `bytes` of type `mime` (how images travel to and from the page).
pub use cairn_engine::attachments::data_url as to_data_url;
/// The media type an attachable file's name says (`None`: not an attachment).
pub use cairn_engine::attachments::mime_from_name;
use ts_rs::TS;

/// An image pasted or dropped into the prompt.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export_to = "app/")]
pub struct ImageUpload {
    /// File name (a name is made up for pasted images).
    pub name: String,
    /// `image/png`, `image/jpeg`, `image/gif`, `image/webp` or `image/bmp`.
    pub mime_type: String,
    /// `data:<mime>;base64,<payload>`.
    pub data_url: String,
}

/// Why attachments were refused or could not be stored or read back.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    /// More pasted images than [`MAX_ATTACHMENTS`].
    #[error("at most {MAX_ATTACHMENTS} images per message ({0} given)")]
    TooManyImages(usize),
    /// More `--attach` files than [`MAX_ATTACHMENTS`].
    #[error("at most {MAX_ATTACHMENTS} attachments per message ({0} given)")]
    TooManyFiles(usize),
    /// A pasted image of a type the models do not see.
    #[error("`{name}` is {}: only PNG, JPEG, GIF, WebP and BMP images can be attached", if .mime.is_empty() { "of no known type" } else { .mime.as_str() })]
    NotAnImage {
        /// Its name.
        name: String,
        /// Its declared type ("" = none).
        mime: String,
    },
    /// An `--attach` file whose extension names no allowed type.
    #[error("attachment {}: unsupported type (images, audio and video only: png, jpg, gif, webp, bmp, mp3, wav, ogg, m4a, flac, mp4, webm, mov)", .0.display())]
    UnsupportedFile(PathBuf),
    /// An `--attach` path that is not a regular file.
    #[error("attachment {}: not a file", .0.display())]
    NotAFile(PathBuf),
    /// An `--attach` file over the size cap.
    #[error("attachment {} is {size} bytes: the limit is 10 MB per file and in total", .path.display())]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// An `--attach` file could not be read.
    #[error("attachment {}: {source}", .path.display())]
    FileIo {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A stored path that is a symbolic link.
    #[error("`{0}` is a symbolic link, not a stored attachment")]
    Symlink(String),
    /// No such stored attachment.
    #[error("this session has no attachment `{0}`")]
    NoSuchAttachment(String),
    /// A stored attachment that is not an image.
    #[error("`{0}` is not an image")]
    NotAnImageAttachment(String),
    /// The engine's checks or storage failed.
    #[error(transparent)]
    Attachment(#[from] AttachmentError),
}

/// The file extension stored images get for their type.
fn extension_for(mime: &str) -> Option<&'static str> {
    Some(match mime {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/bmp" => "bmp",
        _ => return None,
    })
}

/// Checks the pasted images (images only, in a type the model can see) and gives each a
/// name whose extension matches its type (read-back tells the type from it).
pub fn uploads_to_attachments(
    images: Vec<ImageUpload>,
) -> Result<Vec<MessageAttachment>, AttachError> {
    if images.len() > MAX_ATTACHMENTS {
        return Err(AttachError::TooManyImages(images.len()));
    }
    let mut out = Vec::with_capacity(images.len());
    for (i, img) in images.into_iter().enumerate() {
        let mime = img.mime_type.trim().to_ascii_lowercase();
        let Some(ext) = extension_for(&mime) else {
            return Err(AttachError::NotAnImage {
                name: img.name,
                mime,
            });
        };
        let stem = img.name.trim();
        let name = if mime_from_name(stem) == Some(mime.as_str()) {
            stem.to_string()
        } else if stem.is_empty() {
            format!("image-{}.{ext}", i + 1)
        } else {
            format!("{stem}.{ext}")
        };
        out.push(MessageAttachment {
            name,
            mime_type: mime,
            data_url: img.data_url,
        });
    }
    Ok(normalize_attachments(out)?)
}

/// Reads and validates `cairn run --attach` files (count, type by extension, size) before
/// anything runs.
pub fn read_files(files: &[PathBuf]) -> Result<Vec<MessageAttachment>, AttachError> {
    if files.len() > MAX_ATTACHMENTS {
        return Err(AttachError::TooManyFiles(files.len()));
    }
    let mut raw = Vec::with_capacity(files.len());
    for f in files {
        let io = |source| AttachError::FileIo {
            path: f.clone(),
            source,
        };
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let mime = mime_from_name(&name).ok_or_else(|| AttachError::UnsupportedFile(f.clone()))?;
        // The path the user gave is resolved once (links in it are theirs); the file is then
        // opened refusing any link along the resolved path (issue 35: one swapped in since
        // is never followed).
        let real = std::fs::canonicalize(f).map_err(io)?;
        let meta = std::fs::metadata(&real).map_err(io)?;
        if !meta.is_file() {
            return Err(AttachError::NotAFile(f.clone()));
        }
        if meta.len() > MAX_ATTACHMENT_BYTES {
            return Err(AttachError::FileTooLarge {
                path: f.clone(),
                size: meta.len(),
            });
        }
        let bytes = cairn_tools::read_bytes_no_links(&real, MAX_ATTACHMENT_BYTES + 1)
            .map_err(|e| io(std::io::Error::other(e.to_string())))?;
        if bytes.len() as u64 > MAX_ATTACHMENT_BYTES {
            return Err(AttachError::FileTooLarge {
                path: f.clone(),
                size: bytes.len() as u64,
            });
        }
        raw.push(MessageAttachment {
            name,
            mime_type: mime.to_string(),
            data_url: data_url(mime, &bytes),
        });
    }
    Ok(normalize_attachments(raw)?)
}

/// What a turn carries: `images` (validated) saved under `session_dir`, and the mentioned
/// `files`. Images a `model` without vision cannot see are held back (saved and referenced
/// in the prompt, not sent); the second value says how many.
pub fn turn_attachments(
    session_dir: &Path,
    model: &str,
    images: Vec<MessageAttachment>,
    files: Vec<ContextFile>,
) -> Result<(TurnAttachments, usize), AttachError> {
    let refs = if images.is_empty() {
        Vec::new()
    } else {
        save_attachments(session_dir, &images)?
    };
    let mut attached = TurnAttachments {
        attachments: images,
        refs,
        files,
    };
    let held = crate::tooling::hold_back_images(model, &mut attached);
    Ok((attached, held))
}

/// A stored image of the session in `session_dir` as a `data:` URL; only
/// `attachments/<file>` is accepted, never a symbolic link, only images.
pub fn read_back(session_dir: &Path, path: &str) -> Result<String, AttachError> {
    let full = session_dir.join(path);
    if let Ok(meta) = std::fs::symlink_metadata(&full) {
        if meta.file_type().is_symlink() {
            return Err(AttachError::Symlink(path.to_string()));
        }
    }
    let loaded = attachments::read_stored_attachment(session_dir, path).map_err(|e| match e {
        AttachmentError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            AttachError::NoSuchAttachment(path.to_string())
        }
        other => AttachError::Attachment(other),
    })?;
    if !loaded.mime_type.starts_with("image/") {
        return Err(AttachError::NotAnImageAttachment(path.to_string()));
    }
    Ok(format!(
        "data:{};base64,{}",
        loaded.mime_type, loaded.base64
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_engine::attachments::{data_url, save_attachments};

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\nfake";

    fn upload(name: &str, mime: &str, bytes: &[u8]) -> ImageUpload {
        ImageUpload {
            name: name.into(),
            mime_type: mime.into(),
            data_url: data_url(mime, bytes),
        }
    }

    #[test]
    fn pasted_images_get_names_that_match_their_type() {
        let got = uploads_to_attachments(vec![
            upload("", "image/png", PNG),
            upload("shot", "image/jpeg", b"\xFF\xD8\xFF\xE0jpg"),
            upload("cat.png", "image/png", PNG),
        ])
        .unwrap();
        let names: Vec<&str> = got.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["image-1.png", "shot.jpg", "cat.png"]);
    }

    #[test]
    fn wrong_types_too_many_and_too_big_are_refused() {
        let err = uploads_to_attachments(vec![upload("x.svg", "image/svg+xml", b"<svg/>")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("only PNG, JPEG"), "{err}");
        let err = uploads_to_attachments(vec![upload("a.wav", "audio/wav", b"RIFF")])
            .unwrap_err()
            .to_string();
        assert!(err.contains("audio/wav"), "{err}");
        let five = (0..5).map(|_| upload("a.png", "image/png", PNG)).collect();
        let err = uploads_to_attachments(five).unwrap_err().to_string();
        assert!(err.contains("at most 4 images"), "{err}");
        let big = vec![0u8; 10 * 1024 * 1024 + 1];
        let err = uploads_to_attachments(vec![upload("big.png", "image/png", &big)])
            .unwrap_err()
            .to_string();
        assert!(err.contains("10 MB"), "{err}");
        let mut lying = upload("a.png", "image/png", PNG);
        lying.data_url = data_url("image/gif", PNG);
        assert!(uploads_to_attachments(vec![lying]).is_err());
    }

    #[test]
    fn read_back_serves_only_the_sessions_stored_images() {
        let dir = tempfile::tempdir().unwrap();
        let list = uploads_to_attachments(vec![upload("cat.png", "image/png", PNG)]).unwrap();
        let refs = save_attachments(dir.path(), &list).unwrap();
        assert_eq!(
            read_back(dir.path(), &refs[0].path).unwrap(),
            data_url("image/png", PNG)
        );
        std::fs::write(dir.path().join("state.json"), "{}").unwrap();
        for bad in [
            "state.json",
            "attachments/../state.json",
            "../x.png",
            "/etc/passwd",
        ] {
            let err = read_back(dir.path(), bad).unwrap_err().to_string();
            assert!(err.contains("not an attachment path"), "{bad}: {err}");
        }
        let err = read_back(dir.path(), "attachments/abc-0-none.png")
            .unwrap_err()
            .to_string();
        assert!(err.contains("no attachment"), "{err}");
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.png"), PNG).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("x.png"),
            dir.path().join("attachments/abc-0-link.png"),
        )
        .unwrap();
        let err = read_back(dir.path(), "attachments/abc-0-link.png")
            .unwrap_err()
            .to_string();
        assert!(err.contains("symbolic link"), "{err}");
        std::fs::write(dir.path().join("attachments/abc-0-notes.txt"), "x").unwrap();
        let err = read_back(dir.path(), "attachments/abc-0-notes.txt")
            .unwrap_err()
            .to_string();
        assert!(err.contains("not an image"), "{err}");
    }
}
