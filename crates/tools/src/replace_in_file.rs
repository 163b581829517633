//! `replace_in_file`: exact string replacement with a diff of the change.

use std::io::Read;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_engine::{Tool, ToolContext, ToolError, ToolOutput};
use cairn_protocol::{RiskLevel, ToolMeta, ToolSchema};
use serde::Deserialize;
use serde_json::json;

use crate::guard::ConflictGuard;
use crate::paths::{self, Access};
use crate::read_file::open_regular_file;
use crate::{args, atomic, diff, text};

/// Lines of a file scanned for the "closest line" hint.
const HINT_SCAN_LINES: usize = 5000;
/// Time the "closest line" hint may take (the scan stops there with what it found).
const HINT_SCAN_TIME: std::time::Duration = std::time::Duration::from_millis(500);

/// Replaces an exact string in a file.
#[derive(Debug, Default, Clone)]
pub struct ReplaceInFile {
    guard: Arc<ConflictGuard>,
}

impl ReplaceInFile {
    /// A replace_in_file tool checking writes against `guard`.
    pub fn new(guard: Arc<ConflictGuard>) -> Self {
        ReplaceInFile { guard }
    }
}

#[derive(Debug, Deserialize)]
struct Args {
    path: String,
    old_string: String,
    new_string: String,
    #[serde(default, deserialize_with = "args::opt_bool")]
    replace_all: Option<bool>,
}

#[async_trait]
impl Tool for ReplaceInFile {
    fn kind(&self) -> cairn_protocol::ToolKind {
        cairn_protocol::ToolKind::Edit
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "replace_in_file".into(),
            description: "Edit a file by replacing an exact string. `old_string` must match the \
                file's text exactly, including whitespace and indentation (do not include the \
                line-number prefixes that read_file shows). It must occur exactly once unless \
                replace_all is true: include enough surrounding lines to make it unique. \
                CRLF files keep their line endings; binary files are refused. Fails if the file \
                changed on disk since you read it. Returns a diff of the change."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "File path, relative to the workspace root (or absolute inside it)."
                    },
                    "old_string": {
                        "type": "string",
                        "description": "The exact text to replace (non-empty)."
                    },
                    "new_string": {
                        "type": "string",
                        "description": "The text to put in its place (must differ from old_string; may be empty to delete)."
                    },
                    "replace_all": {
                        "type": "boolean",
                        "description": "Replace every occurrence instead of requiring exactly one. Default false."
                    }
                },
                "required": ["path", "old_string", "new_string"]
            }),
        }
    }

    fn meta(&self) -> ToolMeta {
        ToolMeta::mutating("file", RiskLevel::Medium, &["write"])
    }

    fn permission_subject(&self, args: &serde_json::Value) -> cairn_engine::PermissionSubject {
        crate::subject::writes_path(args)
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args: Args = args::parse("replace_in_file", args)?;
        if args.old_string.is_empty() {
            return Err(ToolError::InvalidArguments(
                "replace_in_file: old_string must not be empty (use write_file to create a file)"
                    .into(),
            ));
        }
        if args.old_string == args.new_string {
            return Err(ToolError::InvalidArguments(
                "replace_in_file: old_string and new_string are identical; nothing would change"
                    .into(),
            ));
        }
        let guard = self.guard.clone();
        tokio::task::spawn_blocking(move || replace(&ctx, &guard, &args))
            .await
            .map_err(|e| ToolError::Failed(format!("replace_in_file task failed: {e}")))?
    }
}

fn replace(ctx: &ToolContext, guard: &ConflictGuard, args: &Args) -> Result<ToolOutput, ToolError> {
    let target = paths::resolve_for(ctx, &args.path, Access::Write)?;
    let shown = &target.rel;
    let mut bytes = Vec::new();
    open_regular_file(&target.abs, shown)?
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?;
    guard.check(&target.abs, shown, Some(&bytes))?;
    let before = text::decode_text(bytes, shown, "replace_in_file")?;

    let (old, new) = match_line_endings(&before, &args.old_string, &args.new_string);
    let count = before.matches(old.as_str()).count();
    let replace_all = args.replace_all.unwrap_or(false);
    if count == 0 {
        let mut msg = format!("old_string was not found in `{shown}`.");
        if let Some(hint) = closest_line_hint(&before, &args.old_string, &ctx.cancel) {
            msg.push(' ');
            msg.push_str(&hint);
        }
        msg.push_str(" Read the file again and copy the text exactly.");
        return Err(ToolError::Failed(msg));
    }
    if count > 1 && !replace_all {
        return Err(ToolError::Failed(format!(
            "old_string occurs {count} times in `{shown}`; include more surrounding lines to make \
             it unique, or set replace_all to true to replace every occurrence"
        )));
    }
    let after = if replace_all {
        before.replace(old.as_str(), &new)
    } else {
        before.replacen(old.as_str(), &new, 1)
    };
    // The write counts as this call's the moment it happens (the diff below may be cut short
    // by an interrupt); nothing is written once the call was interrupted.
    ctx.write_files(std::slice::from_ref(&target.rel), || {
        atomic::write_atomic(&target.abs, after.as_bytes())?;
        guard.record(&target.abs, after.as_bytes());
        Ok(())
    })?;
    let described = diff::describe(shown, &before, &after);
    let replaced = if replace_all { count } else { 1 };
    let noun = if replaced == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    Ok(ToolOutput {
        content: format!(
            "Replaced {replaced} {noun} in {shown} ({}).\n{}",
            described.summary, described.snippet
        ),
        produced_files: vec![target.rel.clone()],
        images: Vec::new(),
        stale_files: Vec::new(),
    })
}

/// `old` as it occurs in the file (with `\r\n` when the file uses CRLF and only that form
/// matches), and `new` with the line ending where it goes (the first line end at or after the
/// match; the file's own when there is none), so an edit never mixes line endings in.
fn match_line_endings(content: &str, old: &str, new: &str) -> (String, String) {
    let old = if content.contains(old) || old.contains('\r') || !old.contains('\n') {
        old.to_string()
    } else {
        let crlf_old = old.replace('\n', "\r\n");
        if content.contains(&crlf_old) {
            crlf_old
        } else {
            old.to_string()
        }
    };
    let local = content.find(&old).and_then(|at| {
        let nl = content[at..].find('\n')? + at;
        Some(if nl > 0 && content.as_bytes()[nl - 1] == b'\r' {
            "\r\n"
        } else {
            "\n"
        })
    });
    let eol = local.unwrap_or_else(|| crate::text::line_ending(content));
    let lf = new.replace("\r\n", "\n");
    let new = if eol == "\r\n" {
        lf.replace('\n', "\r\n")
    } else {
        lf
    };
    (old, new)
}

fn closest_line_hint(
    content: &str,
    old: &str,
    cancel: &tokio_util::sync::CancellationToken,
) -> Option<String> {
    let first = old.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut best: Option<(f32, usize, &str)> = None;
    let until = std::time::Instant::now() + HINT_SCAN_TIME;
    for (i, line) in content.lines().take(HINT_SCAN_LINES).enumerate() {
        if cancel.is_cancelled() || std::time::Instant::now() > until {
            break;
        }
        let t = line.trim();
        if t == first {
            return Some(format!(
                "Line {} matches the first non-blank line of old_string apart from surrounding \
                 whitespace: `{}`; check indentation and the lines after it.",
                i + 1,
                clip(line)
            ));
        }
        let (a, b) = (t.len(), first.len());
        if a == 0 || a.min(b) * 2 < a.max(b) || a.max(b) > 500 {
            continue;
        }
        let ratio = similar::TextDiff::configure()
            .deadline(until)
            .diff_chars(t, first)
            .ratio();
        if best.is_none_or(|(r, _, _)| ratio > r) {
            best = Some((ratio, i + 1, line));
        }
    }
    let (ratio, n, line) = best?;
    (ratio >= 0.6).then(|| format!("The closest line is {n}: `{}`.", clip(line)))
}

fn clip(line: &str) -> String {
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn hint_finds_whitespace_only_difference() {
        let live = tokio_util::sync::CancellationToken::new();
        let h =
            closest_line_hint("fn a() {\n    let x = 1;\n}\n", "let x = 1;\n  y", &live).unwrap();
        assert!(h.contains("Line 2"), "{h}");
    }

    #[test]
    fn hint_finds_similar_line() {
        let live = tokio_util::sync::CancellationToken::new();
        let h = closest_line_hint(
            "alpha\nlet value = compute(1);\n",
            "let value = compute(2);",
            &live,
        )
        .unwrap();
        assert!(h.contains("closest line is 2"), "{h}");
        assert!(closest_line_hint("alpha\n", "zzzzzzzzzzzz", &live).is_none());
    }

    #[test]
    fn crlf_files_match_lf_old_strings() {
        let (o, n) = match_line_endings("a\r\nb\r\n", "a\nb", "c\nd");
        assert_eq!((o.as_str(), n.as_str()), ("a\r\nb", "c\r\nd"));
        let (o, _) = match_line_endings("a\nb\n", "a\nb", "x");
        assert_eq!(o, "a\nb");
    }

    #[test]
    fn inserted_text_takes_the_files_line_ending() {
        // A one-line old_string in a CRLF file: the new lines are CRLF too.
        let (o, n) = match_line_endings("one\r\ntwo\r\n", "two", "2\n2b");
        assert_eq!((o.as_str(), n.as_str()), ("two", "2\r\n2b"));
        // CRLF text put into an LF file becomes LF.
        let (_, n) = match_line_endings("a\nb\nc\n", "b\n", "B1\r\nB2\r\n");
        assert_eq!(n, "B1\nB2\n");
        // A file mixing both: the line ending where the edit goes wins.
        let mixed = "w1\r\nw2\r\nw3\r\nunix\n";
        let (_, n) = match_line_endings(mixed, "unix", "U\nV");
        assert_eq!(n, "U\nV");
        let (_, n) = match_line_endings(mixed, "w2", "X\nY");
        assert_eq!(n, "X\r\nY");
    }
}
