//! What a prompt carries besides its text: images pasted or dropped into it (seed §13 limits,
//! stored under the session's `attachments/`) and the files its `@path` mentions name
//! ([`crate::mentions`]). Stored images are read back, for the transcript's thumbnails, only
//! from the window's own session.

use std::path::Path;

use cairn_engine::attachments::{
    self, mime_from_name, normalize_attachments, save_attachments, MessageAttachment,
    TurnAttachments, MAX_ATTACHMENTS,
};

use cairn_runtime::host::TurnInput;

use crate::runtime::SessionRuntime;
use crate::types::ImageUpload;

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
pub fn uploads_to_attachments(images: Vec<ImageUpload>) -> Result<Vec<MessageAttachment>, String> {
    if images.len() > MAX_ATTACHMENTS {
        return Err(format!(
            "at most {MAX_ATTACHMENTS} images per message ({} given)",
            images.len()
        ));
    }
    let mut out = Vec::with_capacity(images.len());
    for (i, img) in images.into_iter().enumerate() {
        let mime = img.mime_type.trim().to_ascii_lowercase();
        let Some(ext) = extension_for(&mime) else {
            return Err(format!(
                "`{}` is {}: only PNG, JPEG, GIF, WebP and BMP images can be attached",
                img.name,
                if mime.is_empty() {
                    "of no known type"
                } else {
                    mime.as_str()
                }
            ));
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
    normalize_attachments(out).map_err(|e| e.to_string())
}

/// The turn input for a prompt: its mentioned files read, its images validated and saved
/// under the session. Plain text when it carries neither.
pub fn turn_input(
    runtime: &SessionRuntime,
    text: String,
    images: Vec<ImageUpload>,
) -> Result<TurnInput, String> {
    let denials = runtime.session().read_denials("read_file");
    let files = crate::mentions::resolve(runtime.workspace(), &text, &denials)?;
    let images = uploads_to_attachments(images)?;
    if files.is_empty() && images.is_empty() {
        return Ok(TurnInput::Text(text));
    }
    let refs = if images.is_empty() {
        Vec::new()
    } else {
        let dir = runtime
            .store()
            .session_dir(&runtime.id())
            .map_err(|e| e.to_string())?;
        save_attachments(&dir, &images).map_err(|e| e.to_string())?
    };
    let mut attached = TurnAttachments {
        attachments: images,
        refs,
        files,
    };
    let held = cairn_runtime::tooling::hold_back_images(&runtime.session().model(), &mut attached);
    if held > 0 {
        tracing::info!(
            held,
            "the model does not accept images: they are referenced, not sent"
        );
    }
    Ok(TurnInput::Attached(text, Box::new(attached)))
}

/// A stored image of the session in `session_dir` as a `data:` URL; only
/// `attachments/<file>` is accepted, never a symbolic link, only images.
pub fn read_back(session_dir: &Path, path: &str) -> Result<String, String> {
    let full = session_dir.join(path);
    if let Ok(meta) = std::fs::symlink_metadata(&full) {
        if meta.file_type().is_symlink() {
            return Err(format!(
                "`{path}` is a symbolic link, not a stored attachment"
            ));
        }
    }
    let loaded = attachments::read_stored_attachment(session_dir, path).map_err(|e| match e {
        attachments::AttachmentError::Io { source, .. }
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            format!("this session has no attachment `{path}`")
        }
        other => other.to_string(),
    })?;
    if !loaded.mime_type.starts_with("image/") {
        return Err(format!("`{path}` is not an image"));
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
    use cairn_engine::attachments::data_url;

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
        let err =
            uploads_to_attachments(vec![upload("x.svg", "image/svg+xml", b"<svg/>")]).unwrap_err();
        assert!(err.contains("only PNG, JPEG"), "{err}");
        let err = uploads_to_attachments(vec![upload("a.wav", "audio/wav", b"RIFF")]).unwrap_err();
        assert!(err.contains("audio/wav"), "{err}");
        let five = (0..5).map(|_| upload("a.png", "image/png", PNG)).collect();
        let err = uploads_to_attachments(five).unwrap_err();
        assert!(err.contains("at most 4 images"), "{err}");
        let big = vec![0u8; 10 * 1024 * 1024 + 1];
        let err = uploads_to_attachments(vec![upload("big.png", "image/png", &big)]).unwrap_err();
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
            let err = read_back(dir.path(), bad).unwrap_err();
            assert!(err.contains("not an attachment path"), "{bad}: {err}");
        }
        let err = read_back(dir.path(), "attachments/abc-0-none.png").unwrap_err();
        assert!(err.contains("no attachment"), "{err}");
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.png"), PNG).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("x.png"),
            dir.path().join("attachments/abc-0-link.png"),
        )
        .unwrap();
        let err = read_back(dir.path(), "attachments/abc-0-link.png").unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        std::fs::write(dir.path().join("attachments/abc-0-notes.txt"), "x").unwrap();
        let err = read_back(dir.path(), "attachments/abc-0-notes.txt").unwrap_err();
        assert!(err.contains("not an image"), "{err}");
    }
}
