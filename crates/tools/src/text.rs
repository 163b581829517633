//! Text-file helpers shared by the editing tools: binary detection, line endings, counts.

use cairn_engine::ToolError;

/// Bytes probed for NUL to detect binary files.
pub(crate) const BINARY_PROBE: usize = 8192;

/// Whether `bytes` look like a binary file (a NUL byte near the start, as git and ripgrep judge).
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_PROBE)].contains(&0)
}

/// Decodes a file's bytes as text for editing, refusing binary and non-UTF-8 content.
pub(crate) fn decode_text(bytes: Vec<u8>, shown: &str, tool: &str) -> Result<String, ToolError> {
    if looks_binary(&bytes) {
        return Err(ToolError::Failed(format!(
            "`{shown}` looks like a binary file (it contains NUL bytes); {tool} only edits text files"
        )));
    }
    String::from_utf8(bytes).map_err(|_| {
        ToolError::Failed(format!(
            "`{shown}` is not valid UTF-8 text; {tool} only edits text files"
        ))
    })
}

/// The line ending a text uses: `"\r\n"` when most of its line breaks are CRLF, else `"\n"`.
pub(crate) fn line_ending(text: &str) -> &'static str {
    let total = text.matches('\n').count();
    let crlf = text.matches("\r\n").count();
    if total > 0 && crlf * 2 > total {
        "\r\n"
    } else {
        "\n"
    }
}

/// Converts `content`'s LF line breaks to `eol` (content that already has CRs is left alone).
pub(crate) fn with_line_ending(content: &str, eol: &str) -> String {
    if eol == "\n" || content.contains('\r') {
        content.to_string()
    } else {
        content.replace('\n', eol)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn detects_crlf_by_majority() {
        assert_eq!(line_ending("a\r\nb\r\nc\n"), "\r\n");
        assert_eq!(line_ending("a\nb\r\nc\n"), "\n");
        assert_eq!(line_ending("no break"), "\n");
    }

    #[test]
    fn converts_only_plain_lf_content() {
        assert_eq!(with_line_ending("a\nb\n", "\r\n"), "a\r\nb\r\n");
        assert_eq!(with_line_ending("a\r\nb\n", "\r\n"), "a\r\nb\n");
        assert_eq!(with_line_ending("a\nb", "\n"), "a\nb");
    }

    #[test]
    fn refuses_binary_and_invalid_utf8() {
        assert!(decode_text(b"a\0b".to_vec(), "f", "t")
            .unwrap_err()
            .to_string()
            .contains("binary"));
        assert!(decode_text(vec![0xff, b'a'], "f", "t")
            .unwrap_err()
            .to_string()
            .contains("UTF-8"));
        assert!(looks_binary(b"\0") && !looks_binary(b"text"));
    }
}
