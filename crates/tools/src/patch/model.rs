//! What a parsed patch says to do, independent of its format.

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// Unchanged line that must be present.
    Context(String),
    /// Line removed.
    Remove(String),
    /// Line added.
    Add(String),
}

/// A change to one region of a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    /// Envelope `@@ <text>` anchor: a line to find before the hunk's own lines.
    pub anchor: Option<String>,
    /// Unified-diff `@@ -N` hint: the 1-based line where the old lines should start.
    pub old_start: Option<usize>,
    /// The hunk's lines in order.
    pub lines: Vec<HunkLine>,
    /// The hunk must match at the end of the file (`*** End of File`).
    pub at_eof: bool,
    /// The old side's last line has no newline (`\ No newline at end of file`).
    pub old_no_newline: bool,
    /// The new side's last line has no newline.
    pub new_no_newline: bool,
    /// The header as written, for error messages (`@@ -3,4 +3,5 @@`, `@@ fn main`).
    pub label: String,
}

impl Hunk {
    /// Lines the file has before the change (context and removed).
    pub fn old_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Remove(s) => Some(s.as_str()),
                HunkLine::Add(_) => None,
            })
            .collect()
    }

    /// Lines the file has after the change (context and added).
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Add(s) => Some(s.as_str()),
                HunkLine::Remove(_) => None,
            })
            .collect()
    }
}

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// Create a file that must not exist yet.
    Add {
        /// Path as written in the patch.
        path: String,
        /// Full content.
        content: String,
    },
    /// Delete a file that must exist.
    Delete {
        /// Path as written in the patch.
        path: String,
    },
    /// Change a file (and optionally move it).
    Update {
        /// Path as written in the patch.
        path: String,
        /// New path, when the file moves.
        move_to: Option<String>,
        /// Changes in file order.
        hunks: Vec<Hunk>,
    },
}

impl FileOp {
    /// The path the operation starts from.
    pub fn path(&self) -> &str {
        match self {
            FileOp::Add { path, .. } | FileOp::Delete { path } | FileOp::Update { path, .. } => {
                path
            }
        }
    }
}

/// A patch that cannot be parsed: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    /// 1-based line of the patch text.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl ParseError {
    pub(crate) fn at(line: usize, message: impl Into<String>) -> Self {
        ParseError {
            line,
            message: message.into(),
        }
    }
}
