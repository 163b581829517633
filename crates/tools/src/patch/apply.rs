//! Applies hunks to a text in memory: locate each hunk's old lines (exactly, then ignoring
//! trailing whitespace, then surrounding whitespace, then typographic punctuation), replace
//! them, and say precisely which hunk failed and why.

use super::model::{Hunk, HunkLine};

/// A text file as lines, each with its own line ending, so untouched lines stay byte-exact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    lines: Vec<String>,
    /// Line ending after each line (`""` for a last line without newline).
    eols: Vec<&'static str>,
    /// The file's dominant line ending, used for new lines.
    eol: &'static str,
    /// The file starts with a UTF-8 byte order mark: kept out of the lines (so hunks match
    /// the first line as written) and put back on render.
    bom: bool,
}

impl TextFile {
    /// Splits `text` into lines, remembering each line's ending.
    pub fn parse(text: &str) -> Self {
        let (text, bom) = match text.strip_prefix('\u{feff}') {
            Some(rest) => (rest, true),
            None => (text, false),
        };
        let eol = crate::text::line_ending(text);
        let mut lines = Vec::new();
        let mut eols = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find('\n') {
                Some(i) => {
                    let (line, ending) = match rest[..i].strip_suffix('\r') {
                        Some(l) => (l, "\r\n"),
                        None => (&rest[..i], "\n"),
                    };
                    lines.push(line.to_string());
                    eols.push(ending);
                    rest = &rest[i + 1..];
                }
                None => {
                    lines.push(rest.to_string());
                    eols.push("");
                    rest = "";
                }
            }
        }
        TextFile {
            lines,
            eols,
            eol,
            bom,
        }
    }

    /// The text again.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if self.bom {
            out.push('\u{feff}');
        }
        for (l, e) in self.lines.iter().zip(&self.eols) {
            out.push_str(l);
            out.push_str(e);
        }
        out
    }

    /// Whether the last line ends with a newline (an empty file counts as ending with one).
    fn ends_with_newline(&self) -> bool {
        self.eols.last().is_none_or(|e| !e.is_empty())
    }

    /// Replaces `len` lines at `at` with `new`, keeping a missing final newline missing.
    fn splice(&mut self, at: usize, len: usize, new: &[&str]) {
        let touches_end = at + len >= self.lines.len();
        let keep_no_newline = touches_end && !self.ends_with_newline();
        let new_lines: Vec<String> = new.iter().map(|s| s.to_string()).collect();
        let mut new_eols: Vec<&'static str> = vec![self.eol; new.len()];
        if keep_no_newline {
            if let Some(last) = new_eols.last_mut() {
                *last = "";
            }
        }
        self.lines.splice(at..at + len, new_lines);
        self.eols.splice(at..at + len, new_eols);
        if touches_end && !keep_no_newline {
            // Whatever now ends the file ends with a newline, as before.
            if let Some(last) = self.eols.last_mut() {
                if last.is_empty() {
                    *last = self.eol;
                }
            }
        }
    }

    /// Sets whether the file ends with a newline.
    fn set_final_newline(&mut self, yes: bool) {
        let eol = self.eol;
        if let Some(last) = self.eols.last_mut() {
            *last = if yes { eol } else { "" };
        }
    }
}

/// Why a hunk could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HunkError {
    /// 1-based index of the hunk in its file section.
    pub index: usize,
    /// Hunks in the section.
    pub of: usize,
    /// The hunk's header.
    pub label: String,
    /// What went wrong, with the closest text found.
    pub reason: String,
}

impl std::fmt::Display for HunkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "hunk {} of {} (`{}`) does not apply: {}",
            self.index, self.of, self.label, self.reason
        )
    }
}

/// Applies `hunks` in order to `file`.
pub fn apply_hunks(file: &mut TextFile, hunks: &[Hunk]) -> Result<(), HunkError> {
    // Where the next hunk may start (hunks must come in file order).
    let mut cursor = 0usize;
    // Unified-diff line hints shift by what earlier hunks added or removed.
    let mut shift: isize = 0;
    for (i, hunk) in hunks.iter().enumerate() {
        let err = |reason: String| HunkError {
            index: i + 1,
            of: hunks.len(),
            label: hunk.label.clone(),
            reason,
        };
        if let Some(anchor) = &hunk.anchor {
            match seek(&file.lines, &[anchor.as_str()], cursor, false, None) {
                Some(at) => cursor = at + 1,
                None => {
                    return Err(err(format!(
                        "its anchor line `{anchor}` was not found{}.{}",
                        after(cursor),
                        closest(&file.lines, &[anchor.as_str()], cursor)
                    )))
                }
            }
        }
        let old = hunk.old_lines();
        let hint = hunk
            .old_start
            .map(|s| (s as isize - 1 + shift).max(0) as usize);
        let at = if old.is_empty() {
            // Pure insertion: at the hint, after the anchor, or at the end of the file.
            match (hint, &hunk.anchor) {
                (Some(h), _) => h.min(file.lines.len()).max(cursor),
                (None, Some(_)) => cursor,
                (None, None) => file.lines.len(),
            }
        } else {
            let found = seek(&file.lines, &old, cursor, hunk.at_eof, hint).or_else(|| {
                // Models often add a trailing blank context line that the file lacks.
                (old.len() > 1 && old.last().is_some_and(|l| l.trim().is_empty()))
                    .then(|| {
                        seek(
                            &file.lines,
                            &old[..old.len() - 1],
                            cursor,
                            hunk.at_eof,
                            hint,
                        )
                    })
                    .flatten()
            });
            match found {
                Some(at) => at,
                None => {
                    return Err(err(format!(
                        "these {} line(s) were not found{}:\n{}{}",
                        old.len(),
                        after(cursor),
                        quote(&old),
                        closest(&file.lines, &old, cursor)
                    )))
                }
            }
        };
        let matched_len = if old.is_empty() {
            0
        } else {
            // The trailing-blank retry matched one line less.
            let full = lines_match(&file.lines, at, &old);
            if full {
                old.len()
            } else {
                old.len() - 1
            }
        };
        // Context lines keep the file's own text (they may have matched only after
        // normalising whitespace or punctuation); a context line past the matched region (the
        // trailing blank of the retry) is dropped.
        let mut new_slice: Vec<String> = Vec::with_capacity(hunk.lines.len());
        let mut old_idx = 0usize;
        for l in &hunk.lines {
            match l {
                HunkLine::Context(_) => {
                    if old_idx < matched_len {
                        new_slice.push(file.lines[at + old_idx].clone());
                    }
                    old_idx += 1;
                }
                HunkLine::Remove(_) => old_idx += 1,
                HunkLine::Add(text) => new_slice.push(text.clone()),
            }
        }
        let new_slice: Vec<&str> = new_slice.iter().map(String::as_str).collect();
        let reaches_end = at + matched_len >= file.lines.len();
        file.splice(at, matched_len, &new_slice);
        if reaches_end && (hunk.old_no_newline || hunk.new_no_newline) {
            file.set_final_newline(!hunk.new_no_newline);
        }
        cursor = at + new_slice.len();
        shift += new_slice.len() as isize - matched_len as isize;
    }
    Ok(())
}

fn after(cursor: usize) -> String {
    if cursor == 0 {
        String::new()
    } else {
        format!(" after line {cursor} (where the previous hunk ended)")
    }
}

fn quote(lines: &[&str]) -> String {
    let mut s = String::new();
    for l in lines.iter().take(12) {
        s.push_str("    |");
        s.push_str(l);
        s.push('\n');
    }
    if lines.len() > 12 {
        s.push_str(&format!("    | … ({} more lines)\n", lines.len() - 12));
    }
    s
}

/// Whether `old` matches `lines` at `at` under any normalisation (exact first).
fn lines_match(lines: &[String], at: usize, old: &[&str]) -> bool {
    NORMALISERS
        .iter()
        .any(|norm| matches_at(lines, at, old, *norm))
}

type Normaliser = fn(&str) -> String;

/// From strict to lenient.
const NORMALISERS: [Normaliser; 4] = [
    |s| s.to_string(),
    |s| s.trim_end().to_string(),
    |s| s.trim().to_string(),
    |s| normalise_punctuation(s.trim()),
];

fn matches_at(lines: &[String], at: usize, old: &[&str], norm: Normaliser) -> bool {
    at + old.len() <= lines.len()
        && old
            .iter()
            .zip(&lines[at..at + old.len()])
            .all(|(a, b)| norm(a) == norm(b))
}

/// Finds `old` in `lines` at or after `from`; at the end when `eof`; nearest to `hint` first.
fn seek(
    lines: &[String],
    old: &[&str],
    from: usize,
    eof: bool,
    hint: Option<usize>,
) -> Option<usize> {
    if old.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - old.len();
    for norm in NORMALISERS {
        if eof {
            if last_start >= from && matches_at(lines, last_start, old, norm) {
                return Some(last_start);
            }
            continue;
        }
        if let Some(h) = hint {
            // Search outward from the hinted line, like `patch` does.
            let h = h.clamp(from, last_start.max(from));
            for d in 0..=lines.len() {
                let below = h.checked_sub(d).filter(|p| *p >= from);
                let above = Some(h + d).filter(|p| *p <= last_start);
                if below.is_none() && above.is_none() {
                    break;
                }
                for p in [below, above].into_iter().flatten() {
                    if matches_at(lines, p, old, norm) {
                        return Some(p);
                    }
                }
            }
        } else {
            for p in from..=last_start {
                if matches_at(lines, p, old, norm) {
                    return Some(p);
                }
            }
        }
    }
    // An end-of-file hunk may still match elsewhere: say so rather than fail on the marker.
    if eof {
        return seek(lines, old, from, false, hint);
    }
    None
}

/// Folds typographic dashes, quotes and spaces to ASCII.
fn normalise_punctuation(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

/// Points at the file region most like `old`, to help regenerate the hunk.
fn closest(lines: &[String], old: &[&str], from: usize) -> String {
    let Some(first) = old.iter().map(|l| l.trim()).find(|l| !l.is_empty()) else {
        return String::new();
    };
    let mut best: Option<(f32, usize)> = None;
    for (i, line) in lines.iter().enumerate().skip(from).take(20_000) {
        let t = line.trim();
        if t.is_empty() || t.len().max(first.len()) > 2000 {
            continue;
        }
        let ratio = similar::TextDiff::from_chars(t, first).ratio();
        if best.is_none_or(|(r, _)| ratio > r) {
            best = Some((ratio, i));
        }
    }
    match best {
        Some((ratio, i)) if ratio >= 0.5 => {
            let end = (i + old.len()).min(lines.len());
            let region: Vec<&str> = lines[i..end].iter().map(String::as_str).collect();
            format!(
                "\nThe most similar text in the file starts at line {}:\n{}",
                i + 1,
                quote(&region)
            )
        }
        _ => "\nNo similar line exists in the file; it may have changed: read it again.".into(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::patch::model::HunkLine::{Add, Context, Remove};

    fn hunk(lines: Vec<crate::patch::model::HunkLine>) -> Hunk {
        Hunk {
            lines,
            label: "@@".into(),
            ..Hunk::default()
        }
    }

    #[test]
    fn round_trips_line_endings() {
        for t in ["a\nb\n", "a\r\nb\r\n", "a\nb", "", "x\r\ny\nz"] {
            assert_eq!(TextFile::parse(t).render(), t);
        }
    }

    #[test]
    fn replaces_and_keeps_crlf_and_missing_final_newline() {
        let mut f = TextFile::parse("a\r\nb\r\nc");
        let h = hunk(vec![
            Context("b".into()),
            Remove("c".into()),
            Add("C".into()),
        ]);
        apply_hunks(&mut f, &[h]).unwrap();
        assert_eq!(f.render(), "a\r\nb\r\nC");
    }

    #[test]
    fn fuzzy_whitespace_and_punctuation_match() {
        let mut f = TextFile::parse("let x = “a”;   \n");
        let h = hunk(vec![
            Remove("let x = \"a\";".into()),
            Add("let x = 1;".into()),
        ]);
        apply_hunks(&mut f, &[h]).unwrap();
        assert_eq!(f.render(), "let x = 1;\n");
    }

    #[test]
    fn failure_names_the_hunk_and_the_closest_text() {
        let mut f = TextFile::parse("fn main() {\n    println!(\"hi\");\n}\n");
        let ok = hunk(vec![
            Remove("fn main() {".into()),
            Add("fn main() -> () {".into()),
        ]);
        let bad = hunk(vec![
            Remove("    println!(\"bye\");".into()),
            Add("    x();".into()),
        ]);
        let e = apply_hunks(&mut f, &[ok, bad]).unwrap_err();
        assert_eq!((e.index, e.of), (2, 2));
        let msg = e.to_string();
        assert!(msg.contains("were not found"), "{msg}");
        assert!(msg.contains("starts at line 2"), "{msg}");
    }

    #[test]
    fn hint_picks_the_nearest_of_repeated_blocks() {
        let mut f = TextFile::parse("x\ny\nx\ny\n");
        let mut h = hunk(vec![Remove("x".into()), Add("X".into())]);
        h.old_start = Some(3);
        apply_hunks(&mut f, &[h]).unwrap();
        assert_eq!(f.render(), "x\ny\nX\ny\n");
    }

    #[test]
    fn anchor_then_insertion() {
        let mut f = TextFile::parse("fn a() {\n}\nfn b() {\n}\n");
        let mut h = hunk(vec![Add("    // in b".into())]);
        h.anchor = Some("fn b() {".into());
        apply_hunks(&mut f, &[h]).unwrap();
        assert_eq!(f.render(), "fn a() {\n}\nfn b() {\n    // in b\n}\n");
    }

    #[test]
    fn no_newline_markers_set_the_final_newline() {
        let mut f = TextFile::parse("a\nb\n");
        let mut h = hunk(vec![Remove("b".into()), Add("c".into())]);
        h.new_no_newline = true;
        apply_hunks(&mut f, &[h]).unwrap();
        assert_eq!(f.render(), "a\nc");
    }
}
