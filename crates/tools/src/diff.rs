//! What an edit changed, for its result: a `+added −removed lines` summary and a short
//! unified-diff snippet, bounded in time and size so a huge edit answers at once.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// Lines of a diff snippet kept before it is cut.
const MAX_DIFF_LINES: usize = 80;
/// Bytes (before and after together) beyond which an edit is not diffed.
pub(crate) const MAX_DIFF_BYTES: usize = 4 << 20;
/// Lines (before and after together) beyond which an edit is not diffed.
const MAX_DIFF_INPUT_LINES: usize = 100_000;
/// Time a diff may take before it settles for a coarser (still correct) result.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);
/// Overrides [`DEFAULT_TIMEOUT`], in milliseconds.
const TIMEOUT_ENV: &str = "CAIRN_DIFF_TIMEOUT_MS";
/// The summary of an edit too large to diff.
pub(crate) const TOO_LARGE: &str = "too large to diff, applied without a diff";

/// An edit's summary and diff snippet (empty when the edit was too large to diff).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Described {
    /// `+a −r lines`, or [`TOO_LARGE`].
    pub summary: String,
    /// A unified diff with 3 lines of context, cut when long; empty when not diffed.
    pub snippet: String,
}

/// Describes the change `before` → `after` of `rel`.
pub(crate) fn describe(rel: &str, before: &str, after: &str) -> Described {
    let Some(diff) = bounded_diff(before, after) else {
        return Described {
            summary: TOO_LARGE.to_string(),
            snippet: String::new(),
        };
    };
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{rel}"), &format!("b/{rel}"))
        .to_string();
    Described {
        summary: count(&diff),
        snippet: cut(text),
    }
}

/// `+a −r lines` between two texts, or [`TOO_LARGE`].
pub(crate) fn summary(before: &str, after: &str) -> String {
    match bounded_diff(before, after) {
        Some(diff) => count(&diff),
        None => TOO_LARGE.to_string(),
    }
}

/// A line diff with a deadline; `None` when the texts are too large to diff.
fn bounded_diff<'a>(before: &'a str, after: &'a str) -> Option<TextDiff<'a, 'a, 'a, str>> {
    if before.len() + after.len() > MAX_DIFF_BYTES {
        return None;
    }
    let lines = before.bytes().filter(|b| *b == b'\n').count()
        + after.bytes().filter(|b| *b == b'\n').count();
    if lines > MAX_DIFF_INPUT_LINES {
        return None;
    }
    Some(
        TextDiff::configure()
            .timeout(timeout())
            .diff_lines(before, after),
    )
}

fn timeout() -> Duration {
    std::env::var(TIMEOUT_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_TIMEOUT)
}

fn count<'a>(diff: &TextDiff<'a, 'a, 'a, str>) -> String {
    let (mut added, mut removed) = (0usize, 0usize);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    format!("+{added} −{removed} lines")
}

fn cut(text: String) -> String {
    let total = text.lines().count();
    if total <= MAX_DIFF_LINES {
        return text;
    }
    let mut out: String = text
        .lines()
        .take(MAX_DIFF_LINES)
        .flat_map(|l| [l, "\n"])
        .collect();
    out.push_str(&format!(
        "… (diff cut: {} more lines)\n",
        total - MAX_DIFF_LINES
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_changed_lines_with_headers() {
        let d = describe("a.txt", "one\ntwo\nthree\n", "one\n2\nthree\n");
        let s = &d.snippet;
        assert!(
            s.contains("--- a/a.txt") && s.contains("+++ b/a.txt"),
            "{s}"
        );
        assert!(s.contains("-two\n") && s.contains("+2\n"), "{s}");
        assert_eq!(d.summary, "+1 −1 lines");
    }

    #[test]
    fn long_diffs_are_cut() {
        let before: String = (0..200).map(|i| format!("{i}\n")).collect();
        let after: String = (0..200).map(|i| format!("x{i}\n")).collect();
        let d = describe("f", &before, &after).snippet;
        assert!(d.contains("diff cut"), "{d}");
        assert!(d.lines().count() <= MAX_DIFF_LINES + 1);
    }

    #[test]
    fn summarises_changes() {
        assert_eq!(summary("a\nb\n", "a\nc\nd\n"), "+2 −1 lines");
    }

    #[test]
    fn large_edits_are_not_diffed() {
        let many: String = "x\n".repeat(MAX_DIFF_INPUT_LINES);
        let d = describe("f", &many, "y\n");
        assert_eq!(d.summary, TOO_LARGE);
        assert!(d.snippet.is_empty());
        let big = "y".repeat(MAX_DIFF_BYTES);
        assert_eq!(summary("a", &big), TOO_LARGE);
    }
}
