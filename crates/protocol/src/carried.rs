//! What a turn or a steering line carried besides its text (`turn_start.data.attachments`,
//! `queue_steering.data.attachments`): saved attachments and mentioned files, typed so a face
//! shows them without reading JSON. The wire form is the one these events always had.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One thing a prompt carried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(untagged)]
#[ts(export)]
pub enum CarriedRef {
    /// A file the prompt mentioned (`@path`).
    File(MentionedFile),
    /// A saved attachment (an image, audio or video): what travels instead of the bytes.
    Stored(StoredRef),
    /// Something a later version wrote: kept as it was.
    Other(#[ts(type = "unknown")] serde_json::Value),
}

/// The tag of a [`MentionedFile`] (`"file"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum FileTag {
    /// A mentioned file.
    File,
}

/// A file a prompt mentioned: `{"kind": "file", "path", "size"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct MentionedFile {
    /// Always `file`.
    pub kind: FileTag,
    /// The path as mentioned, relative to the workspace.
    pub path: String,
    /// The size of the text sent, in bytes.
    pub size: u64,
}

/// A saved attachment: `{"name", "mimeType", "size", "path"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct StoredRef {
    /// File name shown to the user.
    pub name: String,
    /// Mime type.
    pub mime_type: String,
    /// Size in bytes.
    pub size: u64,
    /// Path relative to the session directory, `attachments/<file>`.
    pub path: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_form_is_read_and_written_as_before() -> Result<(), serde_json::Error> {
        let wire = serde_json::json!([
            {"name": "shot.png", "mimeType": "image/png", "size": 12, "path": "attachments/a.png"},
            {"kind": "file", "path": "src/app.py", "size": 40},
            {"kind": "later", "what": 1}
        ]);
        let refs: Vec<CarriedRef> = serde_json::from_value(wire.clone())?;
        assert!(matches!(&refs[0], CarriedRef::Stored(s) if s.mime_type == "image/png"));
        assert!(matches!(&refs[1], CarriedRef::File(f) if f.path == "src/app.py" && f.size == 40));
        assert!(matches!(&refs[2], CarriedRef::Other(_)));
        assert_eq!(serde_json::to_value(&refs)?, wire);
        Ok(())
    }
}
