//! Captured command output with a hard memory cap.

/// Which part of the output survives when the cap is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// Keep the first `cap` bytes (foreground commands).
    Head,
    /// Keep the most recent bytes (background tasks that may run for hours).
    Tail,
}

/// Bytes of output, capped.
#[derive(Debug)]
pub(crate) struct OutputBuf {
    data: Vec<u8>,
    cap: usize,
    keep: Keep,
    dropped: u64,
}

impl OutputBuf {
    /// An empty buffer holding at most `cap` bytes.
    pub(crate) fn new(cap: usize, keep: Keep) -> Self {
        OutputBuf {
            data: Vec::new(),
            cap: cap.max(1),
            keep,
            dropped: 0,
        }
    }

    /// Appends a chunk, dropping bytes beyond the cap.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        match self.keep {
            Keep::Head => {
                let room = self.cap.saturating_sub(self.data.len());
                let take = room.min(chunk.len());
                self.data.extend_from_slice(&chunk[..take]);
                self.dropped += (chunk.len() - take) as u64;
            }
            Keep::Tail => {
                self.data.extend_from_slice(chunk);
                if self.data.len() > self.cap {
                    // Drop down to 3/4 of the cap so trimming is amortised.
                    let excess = self.data.len() - self.cap * 3 / 4;
                    self.data.drain(..excess);
                    self.dropped += excess as u64;
                }
            }
        }
    }

    /// Bytes that were discarded because of the cap.
    #[cfg(test)]
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The kept output as the model should read it, with a note when bytes were dropped: as
    /// a terminal would show it (colour and other escape sequences removed, carriage-return
    /// progress lines resolved to what stayed on screen, NUL and other control bytes
    /// dropped, invalid UTF-8 replaced).
    pub(crate) fn to_text(&self) -> String {
        // Plain output (the usual case, and floods such as `yes`) needs no terminal pass.
        let plain = !self
            .data
            .iter()
            .any(|&b| (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f);
        let text = if plain {
            String::from_utf8_lossy(&self.data).into_owned()
        } else {
            crate::pty::ansi::clean(&self.data)
        };
        if self.dropped == 0 {
            return text;
        }
        match self.keep {
            Keep::Head => format!(
                "{text}\n[output cut: {} more bytes were discarded after the first {} bytes]\n",
                self.dropped,
                self.data.len()
            ),
            Keep::Tail => {
                // Start at a line boundary so the first line is not a fragment.
                let start = text.find('\n').map(|i| i + 1).unwrap_or(0);
                format!(
                    "[earlier output discarded: {} bytes]\n{}",
                    self.dropped + start as u64,
                    &text[start..]
                )
            }
        }
    }
}

/// The last `n` lines of `text`.
pub(crate) fn tail_lines(text: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    let trimmed = text.strip_suffix('\n').unwrap_or(text);
    match trimmed.rmatch_indices('\n').nth(n - 1) {
        Some((i, _)) => &text[i + 1..],
        None => text,
    }
}

/// Keeps the head and tail of a long text, marking the cut (for error messages).
pub(crate) fn clip_middle(text: &str, head: usize, tail: usize) -> String {
    if text.len() <= head + tail {
        return text.to_string();
    }
    let h = floor_char_boundary(text, head);
    let t = ceil_char_boundary(text, text.len() - tail);
    format!(
        "{}\n[… {} bytes omitted …]\n{}",
        &text[..h],
        t - h,
        &text[t..]
    )
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_keeps_the_start_and_notes_the_cut() {
        let mut b = OutputBuf::new(4, Keep::Head);
        b.push(b"ab");
        b.push(b"cdef");
        assert_eq!(b.dropped(), 2);
        let t = b.to_text();
        assert!(t.starts_with("abcd\n[output cut: 2 more bytes"), "{t}");
    }

    #[test]
    fn tail_keeps_recent_lines() {
        let mut b = OutputBuf::new(16, Keep::Tail);
        for i in 0..10 {
            b.push(format!("line{i}\n").as_bytes());
        }
        let t = b.to_text();
        assert!(t.starts_with("[earlier output discarded"), "{t}");
        assert!(t.ends_with("line9\n"), "{t}");
    }

    #[test]
    fn tail_lines_counts_from_the_end() {
        assert_eq!(tail_lines("a\nb\nc\n", 2), "b\nc\n");
        assert_eq!(tail_lines("a\nb\nc", 2), "b\nc");
        assert_eq!(tail_lines("a\n", 5), "a\n");
        assert_eq!(tail_lines("a\n", 0), "");
    }

    #[test]
    fn clip_middle_respects_char_boundaries() {
        let s = "é".repeat(100);
        let c = clip_middle(&s, 11, 11);
        assert!(c.contains("omitted"));
        assert!(clip_middle("short", 10, 10) == "short");
    }
}
