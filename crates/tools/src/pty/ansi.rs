//! Terminal output as plain text: escape sequences stripped, carriage-return overwrites and
//! backspaces resolved, `\r\n` folded to `\n`.

/// Plain text of raw terminal output.
pub fn clean(raw: &[u8]) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut line = Line::default();
    // Escape sequences never contain CR, BS, TAB or LF: strip them from the runs in between
    // (the stripper would drop a tab).
    for piece in raw.split_inclusive(|b| matches!(b, b'\r' | b'\x08' | b'\n' | b'\t')) {
        let (body, ctl) = match piece.last() {
            Some(c @ (b'\r' | b'\x08' | b'\n' | b'\t')) => (&piece[..piece.len() - 1], Some(*c)),
            _ => (piece, None),
        };
        let text = strip_ansi_escapes::strip(body);
        for c in String::from_utf8_lossy(&text).chars() {
            if c == '\t' || !c.is_control() {
                line.put(c);
            }
        }
        match ctl {
            Some(b'\t') => line.put('\t'),
            Some(b'\r') => line.col = 0,
            Some(b'\x08') => line.col = line.col.saturating_sub(1),
            Some(_) => {
                out.push_str(&line.take());
                out.push('\n');
            }
            None => {}
        }
    }
    out.push_str(&line.take());
    out
}

/// One line being drawn: a carriage return moves back to the start, later text overwrites.
#[derive(Default)]
struct Line {
    cells: Vec<char>,
    col: usize,
}

impl Line {
    fn put(&mut self, c: char) {
        if self.col < self.cells.len() {
            self.cells[self.col] = c;
        } else {
            self.cells.push(c);
        }
        self.col += 1;
    }

    fn take(&mut self) -> String {
        let s: String = self.cells.drain(..).collect();
        self.col = 0;
        s.trim_end().to_string()
    }
}

/// The last `n` lines of `text` (without a trailing empty line).
pub fn tail(text: &str, n: usize) -> String {
    let trimmed = text.trim_end_matches('\n');
    let lines: Vec<&str> = trimmed.split('\n').collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_and_cursor_moves() {
        assert_eq!(clean(b"\x1b[1;31merror\x1b[0m: x\r\n"), "error: x\n");
        assert_eq!(clean(b"\x1b]0;title\x07$ ls\r\n"), "$ ls\n");
    }

    #[test]
    fn tabs_are_kept() {
        assert_eq!(clean(b"a\tb\r\ncol1\tcol2\n"), "a\tb\ncol1\tcol2\n");
        assert_eq!(clean(b"\x1b[32mx\x1b[0m\ty\n"), "x\ty\n");
    }

    #[test]
    fn carriage_return_overwrites_progress() {
        assert_eq!(clean(b"10%\r50%\r100%\n"), "100%\n");
        assert_eq!(clean(b"abc\x08\x08X\n"), "aXc\n");
    }

    #[test]
    fn tail_takes_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}
