//! `cairn run --attach FILE`: reads, validates and stores the turn's attachments.

use std::path::{Path, PathBuf};

use cairn_engine::attachments::{
    data_url, mime_from_name, normalize_attachments, save_attachments, MessageAttachment,
    TurnAttachments, MAX_ATTACHMENTS, MAX_ATTACHMENT_BYTES,
};

/// Reads and validates the files (count, type by extension, size) before anything runs.
pub fn read_files(files: &[PathBuf]) -> Result<Vec<MessageAttachment>, String> {
    if files.len() > MAX_ATTACHMENTS {
        return Err(format!(
            "at most {MAX_ATTACHMENTS} attachments per message ({} given)",
            files.len()
        ));
    }
    let mut raw = Vec::with_capacity(files.len());
    for f in files {
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let mime = mime_from_name(&name).ok_or_else(|| {
            format!(
                "attachment {}: unsupported type (images, audio and video only: png, jpg, gif, webp, bmp, mp3, wav, ogg, m4a, flac, mp4, webm, mov)",
                f.display()
            )
        })?;
        let meta = std::fs::metadata(f).map_err(|e| format!("attachment {}: {e}", f.display()))?;
        if !meta.is_file() {
            return Err(format!("attachment {}: not a file", f.display()));
        }
        if meta.len() > MAX_ATTACHMENT_BYTES {
            return Err(format!(
                "attachment {} is {} bytes: the limit is 10 MB per file and in total",
                f.display(),
                meta.len()
            ));
        }
        let bytes = std::fs::read(f).map_err(|e| format!("attachment {}: {e}", f.display()))?;
        raw.push(MessageAttachment {
            name,
            mime_type: mime.to_string(),
            data_url: data_url(mime, &bytes),
        });
    }
    normalize_attachments(raw).map_err(|e| e.to_string())
}

/// Stores validated attachments under the session's `attachments/`.
pub fn store(
    session_dir: &Path,
    attachments: Vec<MessageAttachment>,
) -> Result<TurnAttachments, String> {
    let refs = save_attachments(session_dir, &attachments).map_err(|e| e.to_string())?;
    Ok(TurnAttachments {
        attachments,
        refs,
        files: Vec::new(),
    })
}
