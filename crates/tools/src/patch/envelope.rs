//! Parser for the `*** Begin Patch` envelope:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        (then every line starts with `+`)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path     (optional, right after Update File)
//! @@ optional anchor line   (starts a hunk; the first hunk may omit it)
//!  context / -removed / +added
//! *** End of File           (optional: the hunk ends at the end of the file)
//! *** End Patch
//! ```

use super::model::{FileOp, Hunk, HunkLine, ParseError};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF_MARK: &str = "*** End of File";

/// Parses an envelope patch into file operations.
pub fn parse(text: &str) -> Result<Vec<FileOp>, ParseError> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    // Tolerate surrounding blank lines, a Markdown fence and a heredoc wrapper.
    let start = lines
        .iter()
        .position(|l| l.trim() == BEGIN)
        .ok_or_else(|| ParseError::at(1, format!("the patch must start with `{BEGIN}`")))?;
    let end = lines
        .iter()
        .rposition(|l| l.trim() == END)
        .filter(|e| *e > start)
        .ok_or_else(|| {
            ParseError::at(
                lines.len(),
                format!("the patch must end with `{END}` (after the last file section)"),
            )
        })?;
    for (i, l) in lines[..start].iter().enumerate() {
        let t = l.trim();
        if !(t.is_empty() || t.starts_with("```") || t.contains("<<")) {
            return Err(ParseError::at(
                i + 1,
                format!("unexpected text before `{BEGIN}`: `{t}`"),
            ));
        }
    }
    let mut p = Parser {
        lines: &lines[..end],
        i: start + 1,
    };
    let mut ops = Vec::new();
    while p.i < p.lines.len() {
        let line = p.lines[p.i];
        if line.trim().is_empty() {
            p.i += 1;
            continue;
        }
        // File headers may be padded with whitespace, like the begin and end markers.
        let header = line.trim_start();
        if let Some(path) = header.strip_prefix(ADD) {
            ops.push(p.add(path.trim())?);
        } else if let Some(path) = header.strip_prefix(DELETE) {
            p.i += 1;
            ops.push(FileOp::Delete {
                path: non_empty(path, p.i)?,
            });
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            ops.push(p.update(path.trim())?);
        } else {
            return Err(ParseError::at(
                p.i + 1,
                format!(
                    "expected `{ADD}<path>`, `{DELETE}<path>` or `{UPDATE}<path>`, found `{line}`"
                ),
            ));
        }
    }
    if ops.is_empty() {
        return Err(ParseError::at(start + 1, "the patch has no file sections"));
    }
    Ok(ops)
}

fn non_empty(path: &str, line: usize) -> Result<String, ParseError> {
    let p = path.trim();
    if p.is_empty() {
        Err(ParseError::at(line, "missing file path"))
    } else {
        Ok(p.to_string())
    }
}

/// Whether `line` starts a file section (whitespace before the header allowed).
fn is_section_start(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with(ADD) || line.starts_with(DELETE) || line.starts_with(UPDATE)
}

struct Parser<'a> {
    lines: &'a [&'a str],
    i: usize,
}

impl Parser<'_> {
    fn add(&mut self, path: &str) -> Result<FileOp, ParseError> {
        let path = non_empty(path, self.i + 1)?;
        self.i += 1;
        let mut content = String::new();
        while self.i < self.lines.len() && !is_section_start(self.lines[self.i]) {
            let line = self.lines[self.i];
            match line.strip_prefix('+') {
                Some(rest) => {
                    content.push_str(rest);
                    content.push('\n');
                }
                None if line.is_empty() => {}
                None => {
                    return Err(ParseError::at(
                        self.i + 1,
                        format!("in `{ADD}{path}` every line must start with `+`; found `{line}`"),
                    ))
                }
            }
            self.i += 1;
        }
        Ok(FileOp::Add { path, content })
    }

    fn update(&mut self, path: &str) -> Result<FileOp, ParseError> {
        let path = non_empty(path, self.i + 1)?;
        self.i += 1;
        let mut move_to = None;
        if let Some(dest) = self
            .lines
            .get(self.i)
            .and_then(|l| l.trim_start().strip_prefix(MOVE))
        {
            move_to = Some(non_empty(dest, self.i + 1)?);
            self.i += 1;
        }
        let mut hunks: Vec<Hunk> = Vec::new();
        let mut cur: Option<Hunk> = None;
        while self.i < self.lines.len() && !is_section_start(self.lines[self.i]) {
            let line = self.lines[self.i];
            let n = self.i + 1;
            self.i += 1;
            if line == EOF_MARK || line.trim() == EOF_MARK {
                match cur.as_mut() {
                    Some(h) => h.at_eof = true,
                    None => {
                        return Err(ParseError::at(
                            n,
                            format!("`{EOF_MARK}` must follow the lines of a hunk"),
                        ))
                    }
                }
                hunks.extend(cur.take());
                continue;
            }
            if let Some(anchor) = line.strip_prefix("@@") {
                hunks.extend(cur.take());
                let anchor = anchor.trim();
                cur = Some(Hunk {
                    anchor: (!anchor.is_empty()).then(|| anchor.to_string()),
                    label: line.trim().to_string(),
                    ..Hunk::default()
                });
                continue;
            }
            let parsed = match line.chars().next() {
                Some(' ') => HunkLine::Context(line[1..].to_string()),
                Some('-') => HunkLine::Remove(line[1..].to_string()),
                Some('+') => HunkLine::Add(line[1..].to_string()),
                // An empty line is an empty context line (editors strip the lone space).
                None => HunkLine::Context(String::new()),
                Some(_) => {
                    return Err(ParseError::at(
                        n,
                        format!(
                            "in `{UPDATE}{path}`, hunk lines must start with ` ` (context), `-` \
                             (remove) or `+` (add), and hunks with `@@`; found `{line}`"
                        ),
                    ))
                }
            };
            cur.get_or_insert_with(|| Hunk {
                label: format!("hunk at patch line {n}"),
                ..Hunk::default()
            })
            .lines
            .push(parsed);
        }
        hunks.extend(cur.take());
        // Trailing empty context lines come from blank lines between sections.
        for h in &mut hunks {
            while matches!(h.lines.last(), Some(HunkLine::Context(s)) if s.is_empty())
                && h.lines.len() > 1
            {
                h.lines.pop();
            }
        }
        hunks.retain(|h| !h.lines.is_empty());
        if hunks.is_empty() && move_to.is_none() {
            return Err(ParseError::at(
                self.i,
                format!("`{UPDATE}{path}` has no changes"),
            ));
        }
        for h in &hunks {
            if !h
                .lines
                .iter()
                .any(|l| matches!(l, HunkLine::Add(_) | HunkLine::Remove(_)))
            {
                return Err(ParseError::at(
                    self.i,
                    format!(
                        "`{UPDATE}{path}`: {} has only context lines; mark changed lines with - and +",
                        h.label
                    ),
                ));
            }
        }
        Ok(FileOp::Update {
            path,
            move_to,
            hunks,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parses_every_section_kind() {
        let ops = parse(
            "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Delete File: b.txt\n\
             *** Update File: c.txt\n*** Move to: d.txt\n@@ fn main\n ctx\n-old\n+new\n\
             *** End of File\n*** End Patch\n",
        )
        .unwrap();
        assert_eq!(ops.len(), 3);
        assert_eq!(
            ops[0],
            FileOp::Add {
                path: "a.txt".into(),
                content: "one\ntwo\n".into()
            }
        );
        assert_eq!(
            ops[1],
            FileOp::Delete {
                path: "b.txt".into()
            }
        );
        let FileOp::Update {
            path,
            move_to,
            hunks,
        } = &ops[2]
        else {
            panic!("{:?}", ops[2]);
        };
        assert_eq!(
            (path.as_str(), move_to.as_deref()),
            ("c.txt", Some("d.txt"))
        );
        assert_eq!(hunks[0].anchor.as_deref(), Some("fn main"));
        assert!(hunks[0].at_eof);
        assert_eq!(hunks[0].old_lines(), ["ctx", "old"]);
        assert_eq!(hunks[0].new_lines(), ["ctx", "new"]);
    }

    #[test]
    fn errors_point_at_the_line() {
        let e = parse("*** Begin Patch\n*** Update File: a\n@@\n?bad\n*** End Patch").unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        let e = parse("*** Begin Patch\n*** Add File: a\n+x\n").unwrap_err();
        assert!(e.message.contains("End Patch"), "{e}");
        let e = parse("no patch").unwrap_err();
        assert!(e.message.contains("Begin Patch"), "{e}");
        let e = parse("*** Begin Patch\n*** Update File: a\n@@\n ctx\n*** End Patch").unwrap_err();
        assert!(e.message.contains("only context"), "{e}");
    }

    #[test]
    fn tolerates_fences_and_crlf() {
        let ops = parse("```\r\n*** Begin Patch\r\n*** Delete File: x\r\n*** End Patch\r\n```\r\n")
            .unwrap();
        assert_eq!(ops, [FileOp::Delete { path: "x".into() }]);
    }
}
