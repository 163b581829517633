//! Short unified-diff snippets for edit results.

use similar::TextDiff;

/// Lines of a diff snippet kept before it is cut.
const MAX_DIFF_LINES: usize = 80;

/// A unified diff of `before` → `after` for `rel`, with 3 lines of context, cut when long.
pub(crate) fn snippet(rel: &str, before: &str, after: &str) -> String {
    let diff = TextDiff::from_lines(before, after);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{rel}"), &format!("b/{rel}"))
        .to_string();
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
        let d = snippet("a.txt", "one\ntwo\nthree\n", "one\n2\nthree\n");
        assert!(
            d.contains("--- a/a.txt") && d.contains("+++ b/a.txt"),
            "{d}"
        );
        assert!(d.contains("-two\n") && d.contains("+2\n"), "{d}");
    }

    #[test]
    fn long_diffs_are_cut() {
        let before: String = (0..200).map(|i| format!("{i}\n")).collect();
        let after: String = (0..200).map(|i| format!("x{i}\n")).collect();
        let d = snippet("f", &before, &after);
        assert!(d.contains("diff cut"), "{d}");
        assert!(d.lines().count() <= MAX_DIFF_LINES + 1);
    }
}
