//! Parser for unified diffs (`diff -u`, `git diff`): `---`/`+++` headers, `@@ -a,b +c,d @@`
//! hunks, `/dev/null` for added and deleted files, git's rename headers and
//! `\ No newline at end of file`.

use super::model::{FileOp, Hunk, HunkLine, ParseError};

const DEV_NULL: &str = "/dev/null";

/// One file's section while parsing.
#[derive(Default)]
struct Section {
    git_old: Option<String>,
    git_new: Option<String>,
    rename_from: Option<String>,
    rename_to: Option<String>,
    old: Option<String>,
    new: Option<String>,
    new_file: bool,
    deleted: bool,
    hunks: Vec<Hunk>,
    line: usize,
}

/// Parses a unified diff into file operations.
pub fn parse(text: &str) -> Result<Vec<FileOp>, ParseError> {
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let mut sections: Vec<Section> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let n = i + 1;
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let mut s = Section {
                line: n,
                ..Section::default()
            };
            if let Some((a, b)) = split_git_paths(rest) {
                s.git_old = Some(a);
                s.git_new = Some(b);
            }
            sections.push(s);
            i += 1;
            continue;
        }
        if line.starts_with("--- ") && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ ")) {
            let old = header_path(&line[4..]);
            let new = header_path(&lines[i + 1][4..]);
            let reuse = sections
                .last()
                .is_some_and(|s| s.git_old.is_some() && s.old.is_none() && s.hunks.is_empty());
            if !reuse {
                sections.push(Section {
                    line: n,
                    ..Section::default()
                });
            }
            if let Some(s) = sections.last_mut() {
                s.old = Some(old);
                s.new = Some(new);
            }
            i += 2;
            continue;
        }
        if line.starts_with("@@") {
            let Some(s) = sections.last_mut() else {
                return Err(ParseError::at(
                    n,
                    "a hunk (`@@ ... @@`) must follow `--- old` and `+++ new` file headers",
                ));
            };
            if s.old.is_none() {
                return Err(ParseError::at(
                    n,
                    "a hunk (`@@ ... @@`) must follow `--- old` and `+++ new` file headers",
                ));
            }
            let (hunk, next) = parse_hunk(&lines, i)?;
            s.hunks.push(hunk);
            i = next;
            continue;
        }
        if let Some(s) = sections.last_mut() {
            if let Some(p) = line.strip_prefix("rename from ") {
                s.rename_from = Some(p.trim().to_string());
            } else if let Some(p) = line.strip_prefix("rename to ") {
                s.rename_to = Some(p.trim().to_string());
            } else if line.starts_with("new file mode") {
                s.new_file = true;
            } else if line.starts_with("deleted file mode") {
                s.deleted = true;
            } else if line.starts_with("Binary files ") || line.starts_with("GIT binary patch") {
                return Err(ParseError::at(
                    n,
                    "binary diffs cannot be applied; only text changes are supported",
                ));
            }
        }
        // Anything else (index lines, mode lines, commit messages) is ignored.
        i += 1;
    }
    let ops = sections
        .into_iter()
        .map(into_op)
        .collect::<Result<Vec<_>, _>>()?;
    if ops.is_empty() {
        return Err(ParseError::at(
            1,
            "no file changes found: a unified diff needs `--- a/path`, `+++ b/path` and `@@ -l,n +l,n @@` hunks",
        ));
    }
    Ok(ops)
}

/// `a/x b/x` from a `diff --git` line (paths without spaces, or identical halves).
fn split_git_paths(rest: &str) -> Option<(String, String)> {
    let rest = rest.trim();
    if let Some(idx) = rest.find(" b/") {
        let a = rest[..idx].trim();
        let b = rest[idx + 1..].trim();
        return Some((a.to_string(), b.to_string()));
    }
    let mut parts = rest.split_whitespace();
    Some((parts.next()?.to_string(), parts.next()?.to_string()))
}

/// The path of a `---`/`+++` header, without a trailing timestamp.
fn header_path(rest: &str) -> String {
    let p = rest.split('\t').next().unwrap_or(rest).trim_end();
    let p = p
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(p);
    p.to_string()
}

/// Parses the hunk starting at `lines[start]` (an `@@` line); returns it and the next index.
fn parse_hunk(lines: &[&str], start: usize) -> Result<(Hunk, usize), ParseError> {
    let header = lines[start];
    let n = start + 1;
    let bad = || {
        ParseError::at(
            n,
            format!("malformed hunk header `{header}`; expected `@@ -start,count +start,count @@`"),
        )
    };
    let inner = header.strip_prefix("@@").ok_or_else(bad)?;
    let close = inner.find("@@").ok_or_else(bad)?;
    let ranges = inner[..close].trim();
    let mut parts = ranges.split_whitespace();
    let old = parts
        .next()
        .and_then(|p| p.strip_prefix('-'))
        .ok_or_else(bad)?;
    let new = parts
        .next()
        .and_then(|p| p.strip_prefix('+'))
        .ok_or_else(bad)?;
    let (old_start, _) = parse_range(old).ok_or_else(bad)?;
    let _ = parse_range(new).ok_or_else(bad)?;
    let mut hunk = Hunk {
        old_start: Some(old_start),
        label: header.trim().to_string(),
        ..Hunk::default()
    };
    let mut i = start + 1;
    while i < lines.len() {
        let line = lines[i];
        if line.starts_with("@@")
            || line.starts_with("diff --git ")
            || (line.starts_with("--- ") && lines.get(i + 1).is_some_and(|l| l.starts_with("+++ ")))
        {
            break;
        }
        match line.chars().next() {
            Some(' ') => hunk.lines.push(HunkLine::Context(line[1..].to_string())),
            Some('-') => hunk.lines.push(HunkLine::Remove(line[1..].to_string())),
            Some('+') => hunk.lines.push(HunkLine::Add(line[1..].to_string())),
            Some('\\') => match hunk.lines.last() {
                Some(HunkLine::Remove(_)) => hunk.old_no_newline = true,
                Some(HunkLine::Add(_)) => hunk.new_no_newline = true,
                Some(HunkLine::Context(_)) => {
                    hunk.old_no_newline = true;
                    hunk.new_no_newline = true;
                }
                None => {}
            },
            // A blank line is an empty context line whose space was stripped, unless only
            // blank lines (or the end) follow.
            None => {
                let rest_blank = lines[i..].iter().all(|l| l.trim().is_empty());
                if rest_blank {
                    i = lines.len();
                    break;
                }
                hunk.lines.push(HunkLine::Context(String::new()));
            }
            Some(_) => break,
        }
        i += 1;
    }
    if !hunk
        .lines
        .iter()
        .any(|l| matches!(l, HunkLine::Add(_) | HunkLine::Remove(_)))
    {
        return Err(ParseError::at(
            n,
            format!(
                "hunk `{}` changes nothing (no `-` or `+` lines)",
                hunk.label
            ),
        ));
    }
    Ok((hunk, i))
}

/// `start[,count]` → (start, count).
fn parse_range(s: &str) -> Option<(usize, usize)> {
    match s.split_once(',') {
        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
        None => Some((s.parse().ok()?, 1)),
    }
}

/// Strips git's `a/` / `b/` prefixes.
fn strip_prefix(p: &str, prefix: &str) -> String {
    p.strip_prefix(prefix).unwrap_or(p).to_string()
}

fn into_op(s: Section) -> Result<FileOp, ParseError> {
    let git = s.git_old.is_some();
    let prefixed = git
        || (s
            .old
            .as_deref()
            .is_none_or(|p| p == DEV_NULL || p.starts_with("a/"))
            && s.new
                .as_deref()
                .is_none_or(|p| p == DEV_NULL || p.starts_with("b/")));
    let clean = |p: &str, prefix: &str| -> Option<String> {
        if p == DEV_NULL {
            None
        } else if prefixed {
            Some(strip_prefix(p, prefix))
        } else {
            Some(p.to_string())
        }
    };
    let old = s
        .old
        .as_deref()
        .map(|p| clean(p, "a/"))
        .unwrap_or_else(|| s.git_old.as_deref().and_then(|p| clean(p, "a/")));
    let new = s
        .new
        .as_deref()
        .map(|p| clean(p, "b/"))
        .unwrap_or_else(|| s.git_new.as_deref().and_then(|p| clean(p, "b/")));
    let old = s.rename_from.clone().or(old);
    let new = s.rename_to.clone().or(new);
    let at = s.line;
    match (old, new) {
        (None, Some(path)) => {
            let mut content = String::new();
            for h in &s.hunks {
                for l in h.new_lines() {
                    content.push_str(l);
                    content.push('\n');
                }
            }
            if s.hunks.last().is_some_and(|h| h.new_no_newline) {
                content.pop();
            }
            Ok(FileOp::Add { path, content })
        }
        (Some(path), None) => Ok(FileOp::Delete { path }),
        (Some(path), Some(new)) => {
            if s.deleted {
                return Ok(FileOp::Delete { path });
            }
            if s.new_file {
                return Err(ParseError::at(
                    at,
                    format!("`{new}` is marked as a new file but its old side is not /dev/null"),
                ));
            }
            let move_to = (new != path).then_some(new);
            if s.hunks.is_empty() && move_to.is_none() {
                return Err(ParseError::at(
                    at,
                    format!("the diff for `{path}` has no hunks"),
                ));
            }
            Ok(FileOp::Update {
                path,
                move_to,
                hunks: s.hunks,
            })
        }
        (None, None) => Err(ParseError::at(at, "a file section without any path")),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn parses_git_diff_with_add_delete_rename() {
        let d = "diff --git a/src/x.rs b/src/x.rs\nindex 1..2 100644\n--- a/src/x.rs\n+++ b/src/x.rs\n\
                 @@ -1,3 +1,3 @@ fn main\n a\n-b\n+B\n c\n\
                 diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n\
                 @@ -0,0 +1,2 @@\n+hello\n+world\n\\ No newline at end of file\n\
                 diff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n\
                 @@ -1 +0,0 @@\n-bye\n\
                 diff --git a/old.md b/new.md\nsimilarity index 100%\nrename from old.md\nrename to new.md\n";
        let ops = parse(d).unwrap();
        assert_eq!(ops.len(), 4, "{ops:?}");
        let FileOp::Update {
            path,
            hunks,
            move_to,
        } = &ops[0]
        else {
            panic!()
        };
        assert_eq!((path.as_str(), move_to), ("src/x.rs", &None));
        assert_eq!(hunks[0].old_start, Some(1));
        assert_eq!(hunks[0].old_lines(), ["a", "b", "c"]);
        assert_eq!(
            ops[1],
            FileOp::Add {
                path: "new.txt".into(),
                content: "hello\nworld".into()
            }
        );
        assert_eq!(
            ops[2],
            FileOp::Delete {
                path: "gone.txt".into()
            }
        );
        assert_eq!(
            ops[3],
            FileOp::Update {
                path: "old.md".into(),
                move_to: Some("new.md".into()),
                hunks: vec![]
            }
        );
    }

    #[test]
    fn plain_diff_u_keeps_paths_and_drops_timestamps() {
        let d = "--- lib/a.c\t2024-01-01 00:00:00\n+++ lib/a.c\t2024-01-02 00:00:00\n@@ -2 +2 @@\n-x\n+y\n";
        let ops = parse(d).unwrap();
        let FileOp::Update { path, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(path, "lib/a.c");
    }

    #[test]
    fn removed_line_starting_with_dashes_is_not_a_header() {
        let d = "--- a/f\n+++ b/f\n@@ -1,2 +1,1 @@\n--- not a header\n keep\n";
        let ops = parse(d).unwrap();
        let FileOp::Update { hunks, .. } = &ops[0] else {
            panic!()
        };
        assert_eq!(
            hunks[0].lines[0],
            HunkLine::Remove("-- not a header".into())
        );
    }

    #[test]
    fn clear_errors() {
        assert!(parse("hello")
            .unwrap_err()
            .message
            .contains("no file changes"));
        let e = parse("--- a/f\n+++ b/f\n@@ bogus @@\n-x\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.message.contains("malformed hunk header"), "{e}");
        let e = parse("--- a/f\n+++ b/f\nBinary files a/f and b/f differ\n").unwrap_err();
        assert!(e.message.contains("binary"), "{e}");
    }
}
