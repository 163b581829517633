//! `read_file`: a window of a text file with `cat -n` style line numbers.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::guard::{ConflictGuard, ContentHash};
use crate::paths::{self, Access};
use crate::{args, text};

/// Lines returned when the call gives no `limit`.
pub const DEFAULT_LIMIT: u64 = 2000;
/// Characters kept of one line; the rest is replaced by a marker.
pub const MAX_LINE_CHARS: usize = 2000;
/// Reads a text file (or a window of it) with line numbers; what it reads is remembered by
/// the session's conflict guard.
#[derive(Debug, Default, Clone)]
pub struct ReadFile {
    guard: Arc<ConflictGuard>,
}

impl ReadFile {
    /// A read_file tool recording what it reads in `guard`.
    pub fn new(guard: Arc<ConflictGuard>) -> Self {
        ReadFile { guard }
    }
}

#[derive(Debug, Deserialize)]
struct Args {
    path: String,
    #[serde(default, deserialize_with = "args::opt_u64")]
    offset: Option<u64>,
    #[serde(default, deserialize_with = "args::opt_u64")]
    limit: Option<u64>,
}

#[async_trait]
impl Tool for ReadFile {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Read
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "read_file".into(),
            description: "Read a text file from the workspace. Returns the lines prefixed with \
                their 1-based line numbers and a tab (like `cat -n`); the numbers are not part \
                of the file. Reads up to 2000 lines by default: for long files, page with \
                `offset` and `limit` as the footer suggests. Lines longer than 2000 characters \
                are cut. Binary files are refused; use list_files for directories."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path, relative to the workspace root (or absolute inside it)."
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "1-based line number to start reading at. Default 1."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Maximum number of lines to return. Default 2000."
                    }
                },
                "required": ["path"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::read_only("file")
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::reads_path(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("read_file", args)?;
        if args.limit == Some(0) {
            return Err(ToolError::InvalidArguments(
                "read_file: limit must be at least 1".into(),
            ));
        }
        let offset = args.offset.unwrap_or(1).max(1);
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        let cancel = ctx.cancel.clone();
        let guard = self.guard.clone();
        let text = tokio::task::spawn_blocking(move || {
            let target = paths::resolve_for(&ctx, &args.path, Access::Read)?;
            let (text, hash, whole) = read_window(&target.abs, &args.path, offset, limit, &cancel)?;
            match whole {
                Some(bytes) => guard.record(&target.abs, &bytes),
                None => guard.record_hash(&target.abs, hash),
            }
            Ok::<_, ToolError>(text)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("read_file task failed: {e}")))??;
        Ok(ToolOutput::text(text))
    }
}

/// Opens `path` (resolved) for reading, mapping "missing", "directory" and "not a file" to
/// clear errors. Opened through its folder's handle without following links: a folder swapped
/// for a link after the check fails the read instead of redirecting it.
pub(crate) fn open_regular_file(path: &Path, shown: &str) -> Result<File, ToolError> {
    let (file, st) = match crate::fsat::open_read(path) {
        Ok(opened) => opened,
        Err(e) if e.is_not_found() => {
            return Err(ToolError::NotFound(format!("{shown} (no such file)")))
        }
        Err(e) => return Err(e.into_tool(format!("cannot read {shown}"))),
    };
    if crate::fsat::is_dir(&st) {
        return Err(ToolError::Failed(format!(
            "`{shown}` is a directory, not a file; use list_files to see what it contains"
        )));
    }
    if !crate::fsat::is_file(&st) {
        return Err(ToolError::Failed(format!(
            "`{shown}` is not a regular file (device, socket or pipe)"
        )));
    }
    Ok(file)
}

/// Largest UTF-16 file read_file decodes (it is read whole).
const MAX_DECODED_BYTES: u64 = 32 * 1024 * 1024;

fn read_window(
    path: &Path,
    shown: &str,
    offset: u64,
    limit: u64,
    cancel: &CancellationToken,
) -> Result<(String, ContentHash, Option<Vec<u8>>), ToolError> {
    let mut file = open_regular_file(path, shown)?;
    let io_err = |e| ToolError::io(format!("cannot read {shown}"), e);
    let mut probe = Vec::with_capacity(text::BINARY_PROBE);
    (&mut file)
        .take(text::BINARY_PROBE as u64)
        .read_to_end(&mut probe)
        .map_err(io_err)?;
    // UTF-16 text (with its byte-order mark, as Windows tools write it) is shown decoded.
    let utf16 = encoding_rs::Encoding::for_bom(&probe)
        .map(|(enc, _)| enc)
        .filter(|enc| *enc == encoding_rs::UTF_16LE || *enc == encoding_rs::UTF_16BE);
    let (inner, raw_hash): (Box<dyn Read>, Option<ContentHash>) = match utf16 {
        Some(enc) => {
            let mut raw = probe;
            (&mut file)
                .take(MAX_DECODED_BYTES)
                .read_to_end(&mut raw)
                .map_err(io_err)?;
            if raw.len() as u64 >= MAX_DECODED_BYTES {
                return Err(ToolError::Failed(format!(
                    "`{shown}` is UTF-16 text too large to decode (over {} MB); read it with a \
                     command such as iconv",
                    MAX_DECODED_BYTES / (1024 * 1024)
                )));
            }
            let hash = crate::guard::hash(&raw);
            let text = enc.decode(&raw).0.into_owned();
            (
                Box::new(std::io::Cursor::new(text.into_bytes())),
                Some(hash),
            )
        }
        None if text::looks_binary(&probe) => {
            return Err(ToolError::Failed(format!(
                "`{shown}` looks like a binary file (it contains NUL bytes); read_file only reads text"
            )));
        }
        None => (Box::new(std::io::Cursor::new(probe).chain(file)), None),
    };
    let hashing = HashingReader {
        inner,
        hasher: sha2::Sha256::default(),
        copy: Some(Vec::new()),
    };
    let mut reader = BufReader::new(hashing);
    let last = offset.saturating_add(limit - 1);
    let keep = MAX_LINE_CHARS * 4 + 4;
    let mut out = String::new();
    let mut line_no = 0u64;
    let mut not_utf8 = 0u64;
    let mut buf = Vec::new();
    loop {
        if line_no.is_multiple_of(4096) && cancel.is_cancelled() {
            return Err(ToolError::Interrupted);
        }
        let in_window = line_no + 1 >= offset && line_no < last;
        buf.clear();
        let Some(len) =
            next_line(&mut reader, &mut buf, if in_window { keep } else { 0 }).map_err(io_err)?
        else {
            break;
        };
        line_no += 1;
        if in_window && !format_line(&mut out, line_no, &buf, len) {
            not_utf8 += 1;
        }
    }
    let total = line_no;
    let hashing = reader.into_inner();
    // Decoded text is not the file's bytes: the guard gets the raw hash only.
    let (hash, whole) = match raw_hash {
        Some(raw) => (raw, None),
        None => (sha2::Digest::finalize(hashing.hasher).into(), hashing.copy),
    };
    if total == 0 {
        return Ok((format!("[`{shown}` is empty]"), hash, whole));
    }
    if offset > total {
        return Err(ToolError::Failed(format!(
            "offset {offset} is past the end of `{shown}`, which has {total} lines"
        )));
    }
    if let Some(enc) = utf16 {
        out.push_str(&format!(
            "\n[note: `{shown}` is {} text, shown decoded. The editing tools refuse it; change \
             it with a command that keeps its encoding (iconv).]\n",
            enc.name()
        ));
    }
    if not_utf8 > 0 {
        out.push_str(&format!(
            "\n[note: {not_utf8} line(s) shown are not valid UTF-8 (`{shown}` may be Latin-1 or \
             another encoding); their other bytes show as \u{FFFD}. The editing tools refuse \
             such files; change them with a command that keeps their encoding.]\n"
        ));
    }
    let shown_last = last.min(total);
    if shown_last < total || offset > 1 {
        out.push_str(&format!(
            "\n[Showing lines {offset}-{shown_last} of {total}."
        ));
        if shown_last < total {
            out.push_str(&format!(
                " To read more, call read_file with offset={}.",
                shown_last + 1
            ));
        }
        out.push_str("]\n");
    }
    Ok((out, hash, whole))
}

/// The `cat -n` window of `text` (an editor's unsaved buffer of `shown`), as [`ReadFile`]
/// shows a file: lines `offset..offset+limit`, long lines cut, the paging footer.
pub(crate) fn text_window(
    text: &str,
    shown: &str,
    offset: u64,
    limit: u64,
) -> Result<String, ToolError> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let total = lines.len() as u64;
    if total == 0 {
        return Ok(format!("[`{shown}` is empty (unsaved editor buffer)]"));
    }
    if offset > total {
        return Err(ToolError::Failed(format!(
            "offset {offset} is past the end of `{shown}`, which has {total} lines"
        )));
    }
    let last = offset.saturating_add(limit - 1).min(total);
    let mut out = String::new();
    for n in offset..=last {
        let line = lines[(n - 1) as usize];
        format_line(&mut out, n, line.as_bytes(), line.len() as u64);
    }
    out.push_str(&format!(
        "\n[`{shown}` as the editor shows it: unsaved changes included; the file on disk differs.]\n"
    ));
    if last < total || offset > 1 {
        out.push_str(&format!("\n[Showing lines {offset}-{last} of {total}."));
        if last < total {
            out.push_str(&format!(
                " To read more, call read_file with offset={}.",
                last + 1
            ));
        }
        out.push_str("]\n");
    }
    Ok(out)
}

/// Hashes everything read through it (the whole file, since read_window reads to the end),
/// and keeps a copy of small files for the conflict guard's "what changed" diff.
struct HashingReader<R> {
    inner: R,
    hasher: sha2::Sha256,
    copy: Option<Vec<u8>>,
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        sha2::Digest::update(&mut self.hasher, &buf[..n]);
        if let Some(copy) = &mut self.copy {
            if copy.len() + n <= crate::guard::KEEP_TEXT_BYTES {
                copy.extend_from_slice(&buf[..n]);
            } else {
                self.copy = None;
            }
        }
        Ok(n)
    }
}

/// Reads one line (without its `\n`), keeping at most `keep` bytes in `buf`.
/// Returns the full line length in bytes, or `None` at end of file.
fn next_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    keep: usize,
) -> std::io::Result<Option<u64>> {
    let mut len = 0u64;
    let mut any = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(any.then_some(len));
        }
        any = true;
        let (part, consumed, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (&chunk[..i], i + 1, true),
            None => (chunk, chunk.len(), false),
        };
        let room = keep.saturating_sub(buf.len());
        buf.extend_from_slice(&part[..part.len().min(room)]);
        len += part.len() as u64;
        reader.consume(consumed);
        if done {
            return Ok(Some(len));
        }
    }
}

/// Appends line `n`; false when its bytes are not valid UTF-8 (a character cut by the
/// length cap does not count).
fn format_line(out: &mut String, n: u64, bytes: &[u8], full_len: u64) -> bool {
    let utf8 = match std::str::from_utf8(bytes) {
        Ok(_) => true,
        // Incomplete at the end only because the line was cut here.
        Err(e) => e.error_len().is_none() && (bytes.len() as u64) < full_len,
    };
    let mut text = String::from_utf8_lossy(bytes).into_owned();
    let cut_bytes = (bytes.len() as u64) < full_len;
    if !cut_bytes && text.ends_with('\r') {
        text.pop();
    }
    out.push_str(&format!("{n:>6}\t"));
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => {
            out.push_str(&text[..at]);
            out.push_str(&format!(" … [line truncated: {full_len} bytes in total]"));
        }
        None if cut_bytes => {
            out.push_str(&text);
            out.push_str(&format!(" … [line truncated: {full_len} bytes in total]"));
        }
        None => out.push_str(&text),
    }
    out.push('\n');
    utf8
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn window(content: &[u8], offset: u64, limit: u64) -> Result<String, ToolError> {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, content).unwrap();
        read_window(&p, "f", offset, limit, &CancellationToken::new()).map(|(t, _, _)| t)
    }

    #[test]
    fn hash_covers_the_whole_file_even_for_a_window() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let content = b"1\n2\n3\n4\n";
        std::fs::write(&p, content).unwrap();
        let (_, h, whole) = read_window(&p, "f", 2, 1, &CancellationToken::new()).unwrap();
        assert_eq!(h, crate::guard::hash(content));
        assert_eq!(whole.as_deref(), Some(&content[..]));
    }

    #[test]
    fn numbers_lines_like_cat_n() {
        assert_eq!(window(b"a\nb\n", 1, 10).unwrap(), "     1\ta\n     2\tb\n");
        assert_eq!(window(b"a\r\nb", 1, 10).unwrap(), "     1\ta\n     2\tb\n");
    }

    #[test]
    fn window_and_footer() {
        let s = window(b"1\n2\n3\n4\n5\n", 2, 2).unwrap();
        assert!(s.starts_with("     2\t2\n     3\t3\n"), "{s}");
        assert!(
            s.contains("lines 2-3 of 5") && s.contains("offset=4"),
            "{s}"
        );
        let s = window(b"1\n2\n3\n", 3, 5).unwrap();
        assert!(
            s.contains("lines 3-3 of 3") && !s.contains("offset="),
            "{s}"
        );
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let line = "é".repeat(MAX_LINE_CHARS + 10);
        let s = window(line.as_bytes(), 1, 1).unwrap();
        assert!(s.contains("[line truncated"), "{}", &s[s.len() - 80..]);
        assert_eq!(s.matches('é').count(), MAX_LINE_CHARS);
    }

    #[test]
    fn offset_past_end_and_empty_file() {
        assert!(matches!(window(b"a\n", 5, 1), Err(ToolError::Failed(m)) if m.contains("1 lines")));
        assert!(window(b"", 1, 10).unwrap().contains("empty"));
    }

    #[test]
    fn invalid_utf8_is_shown_lossily() {
        let shown = window(b"a\xffb\n", 1, 1).unwrap();
        assert!(shown.starts_with("     1\ta\u{fffd}b\n"), "{shown}");
        assert!(
            shown.contains("[note: 1 line(s) shown are not valid UTF-8"),
            "{shown}"
        );
    }

    #[test]
    fn a_buffer_window_is_numbered_marked_and_paged() {
        let w = text_window("a\nb\nc\n", "f.txt", 2, 1).unwrap();
        assert!(w.starts_with("     2\tb\n"), "{w}");
        assert!(w.contains("unsaved changes included"), "{w}");
        assert!(
            w.contains("Showing lines 2-2 of 3") && w.contains("offset=3"),
            "{w}"
        );
        assert!(text_window("a\n", "f.txt", 5, 10).is_err());
        assert!(text_window("", "f.txt", 1, 10)
            .unwrap()
            .contains("is empty"));
    }
}
