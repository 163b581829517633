//! The transcript a hook may read (`transcript_path`), as a documented subset of Claude Code's
//! JSONL: one line per user and assistant message with its text content,
//! `{"type": "user"|"assistant", "sessionId", "message": {"role", "content": [{"type":
//! "text", "text"}]}}`. It is written only while the user's own hooks run, in a folder only
//! the user can read (`<tmp>/cairn-transcripts-<uid>`, 0700; the file 0600), and removed when
//! they end; hooks inside the sandbox (the project's) do not get it.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use cairn_protocol::{ContentPart, Message};

/// A transcript file that is removed when dropped.
pub struct Transcript {
    path: PathBuf,
}

impl Transcript {
    /// Writes the transcript of `history` for session `session_id`; `None` when it cannot
    /// be written (the hooks then run without one, and it is logged).
    pub fn write(session_id: &str, history: &[Message]) -> Option<Transcript> {
        let dir =
            std::env::temp_dir().join(format!("cairn-transcripts-{}", crate::reserved::real_uid()));
        let made = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir);
        if let Err(e) = made {
            tracing::warn!("hooks: no transcript ({}: {e})", dir.display());
            return None;
        }
        // A folder someone else made (or opened to others) in the shared temp folder is
        // never written into.
        let own = std::fs::symlink_metadata(&dir).is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.is_dir() && m.uid() == crate::reserved::real_uid() && m.mode() & 0o077 == 0
        });
        if !own {
            tracing::warn!(
                "hooks: no transcript ({} is not a private folder of this user)",
                dir.display()
            );
            return None;
        }
        let safe: String = session_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("{safe}.jsonl"));
        let mut text = String::new();
        for m in history {
            if let Some(line) = line(session_id, m) {
                text.push_str(&line);
                text.push('\n');
            }
        }
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(&path)
            .and_then(|mut f| f.write_all(text.as_bytes()));
        match written {
            Ok(()) => Some(Transcript { path }),
            Err(e) => {
                tracing::warn!("hooks: no transcript ({}: {e})", path.display());
                None
            }
        }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Transcript {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// One message as a transcript line; `None` for messages without text (tool results,
/// the system prompt).
fn line(session_id: &str, m: &Message) -> Option<String> {
    let (kind, content) = match m {
        Message::User { content } => ("user", content),
        Message::Assistant { content, .. } => ("assistant", content),
        _ => return None,
    };
    let parts: Vec<serde_json::Value> = content
        .iter()
        .filter_map(|p| match p {
            ContentPart::Text { text } => Some(serde_json::json!({"type": "text", "text": text})),
            _ => None,
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    Some(
        serde_json::json!({
            "type": kind,
            "sessionId": session_id,
            "message": {"role": kind, "content": parts},
        })
        .to_string(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn user_and_assistant_text_in_claude_codes_lines_removed_when_done() {
        let history = vec![
            Message::system("sys"),
            Message::user("fix the bug"),
            Message::Assistant {
                content: vec![ContentPart::Text {
                    text: "DONE-MARKER".into(),
                }],
                tool_calls: Vec::new(),
                usage: None,
            },
        ];
        let t = Transcript::write("s/1", &history).unwrap();
        let path = t.path().to_path_buf();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["type"], "user");
        assert_eq!(lines[0]["message"]["content"][0]["text"], "fix the bug");
        assert_eq!(lines[1]["message"]["role"], "assistant");
        assert_eq!(lines[1]["message"]["content"][0]["text"], "DONE-MARKER");
        drop(t);
        assert!(!path.exists());
    }
}
