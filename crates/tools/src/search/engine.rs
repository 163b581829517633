//! The search itself: ripgrep's crates (`ignore` parallel walker, `grep-regex` matcher,
//! `grep-searcher` line searcher), binary files skipped, matches collected per thread.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use cairn_policy::ReadDenials;

use super::walk;

/// Characters of one matching line kept in a result.
pub const MAX_LINE_CHARS: usize = 300;
/// Matching lines kept in memory at most; beyond it matches are only counted.
const STORE_CAP: usize = 20_000;

/// What to search for and where.
#[derive(Debug, Clone)]
pub struct GrepRequest {
    /// Regular expression (Rust `regex` syntax, as ripgrep).
    pub pattern: String,
    /// File or directory to search.
    pub root: PathBuf,
    /// Globs limiting the files searched (`*.rs`, `!*.min.js`), relative to `root`.
    pub globs: Vec<String>,
    /// Case-insensitive matching.
    pub ignore_case: bool,
    /// Also search hidden files and directories.
    pub include_hidden: bool,
    /// Worker threads; 0 = one per core.
    pub threads: usize,
    /// Paths a deny rule keeps from being read: not searched.
    pub denials: ReadDenials,
}

/// One matching line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepLine {
    /// 1-based line number.
    pub line: u64,
    /// The line's text (lossy UTF-8, cut at [`MAX_LINE_CHARS`]).
    pub text: String,
}

/// The matches of one file.
#[derive(Debug, Clone)]
pub struct FileMatches {
    /// The file.
    pub path: PathBuf,
    /// Matching lines kept (all of them unless the store cap was reached).
    pub lines: Vec<GrepLine>,
    /// Matching lines in the file.
    pub count: u64,
}

/// Everything a search found, files sorted by path.
#[derive(Debug, Clone, Default)]
pub struct GrepReport {
    /// Files with matches, sorted by path.
    pub files: Vec<FileMatches>,
    /// Matching lines in total.
    pub total_lines: u64,
    /// Binary files skipped.
    pub binary_skipped: u64,
    /// Files that could not be read.
    pub unreadable: u64,
    /// Whether some matching lines were counted but not kept.
    pub store_capped: bool,
    /// What was skipped because a deny rule keeps it from being read (`[N entries skipped:
    /// denied by rule …]`).
    pub denied_note: Option<String>,
}

/// Why a search could not run.
#[derive(Debug, thiserror::Error)]
pub enum GrepError {
    /// The pattern is not a valid regular expression.
    #[error("invalid regex `{pattern}`: {message}")]
    BadPattern {
        /// The pattern given.
        pattern: String,
        /// What is wrong with it.
        message: String,
    },
    /// A glob is invalid.
    #[error("invalid glob `{glob}`: {message}")]
    BadGlob {
        /// The glob given.
        glob: String,
        /// What is wrong with it.
        message: String,
    },
    /// The search was cancelled.
    #[error("search cancelled")]
    Cancelled,
}

/// Builds the matcher ripgrep would build for `pattern`.
pub fn matcher(pattern: &str, ignore_case: bool) -> Result<RegexMatcher, GrepError> {
    // `$` also matches before `\r\n` (files with Windows line endings), as `rg --crlf`
    // (the searcher uses the same line terminator).
    RegexMatcherBuilder::new()
        .case_insensitive(ignore_case)
        .multi_line(true)
        .crlf(true)
        .build(pattern)
        .map_err(|e| GrepError::BadPattern {
            pattern: pattern.to_string(),
            message: e.to_string(),
        })
}

/// Runs a search (blocking; uses `threads` worker threads).
pub fn search(req: &GrepRequest, cancel: &CancellationToken) -> Result<GrepReport, GrepError> {
    let matcher = matcher(&req.pattern, req.ignore_case)?;
    let skips = walk::DeniedSkips::new(req.denials.clone());
    let mut builder = walk::builder(&req.root, req.include_hidden, skips.clone());
    if !req.globs.is_empty() {
        let mut ob = OverrideBuilder::new(&req.root);
        for g in &req.globs {
            ob.add(g).map_err(|e| GrepError::BadGlob {
                glob: g.clone(),
                message: e.to_string(),
            })?;
        }
        let overrides = ob.build().map_err(|e| GrepError::BadGlob {
            glob: req.globs.join(" "),
            message: e.to_string(),
        })?;
        builder.overrides(overrides);
    }
    let threads = if req.threads == 0 {
        std::thread::available_parallelism().map_or(2, |n| n.get().min(12))
    } else {
        req.threads
    };
    builder.threads(threads);
    let shared = Shared {
        results: Mutex::new(Vec::new()),
        total: AtomicU64::new(0),
        stored: AtomicUsize::new(0),
        binary: AtomicU64::new(0),
        unreadable: AtomicU64::new(0),
        capped: std::sync::atomic::AtomicBool::new(false),
        cancel,
    };
    let mut vb = Builder {
        shared: &shared,
        matcher: &matcher,
    };
    builder.build_parallel().visit(&mut vb);
    if cancel.is_cancelled() {
        return Err(GrepError::Cancelled);
    }
    let mut files = shared
        .results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(GrepReport {
        files,
        total_lines: shared.total.into_inner(),
        binary_skipped: shared.binary.into_inner(),
        unreadable: shared.unreadable.into_inner(),
        store_capped: shared.capped.into_inner(),
        denied_note: skips.note(),
    })
}

struct Shared<'a> {
    results: Mutex<Vec<FileMatches>>,
    total: AtomicU64,
    stored: AtomicUsize,
    binary: AtomicU64,
    unreadable: AtomicU64,
    capped: std::sync::atomic::AtomicBool,
    cancel: &'a CancellationToken,
}

struct Builder<'a, 's> {
    shared: &'a Shared<'s>,
    matcher: &'a RegexMatcher,
}

impl<'a, 's: 'a> ParallelVisitorBuilder<'a> for Builder<'a, 's> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(Visitor {
            shared: self.shared,
            matcher: self.matcher.clone(),
            searcher: SearcherBuilder::new()
                .line_terminator(LineTerminator::crlf())
                .binary_detection(BinaryDetection::quit(b'\x00'))
                .line_number(true)
                .build(),
            local: Vec::new(),
        })
    }
}

/// One worker thread's state; its matches join the shared list when it is dropped.
struct Visitor<'a, 's> {
    shared: &'a Shared<'s>,
    matcher: RegexMatcher,
    searcher: Searcher,
    local: Vec<FileMatches>,
}

impl ParallelVisitor for Visitor<'_, '_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.shared.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            self.shared.unreadable.fetch_add(1, Ordering::Relaxed);
            return WalkState::Continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        self.search_file(entry.path());
        WalkState::Continue
    }
}

impl Visitor<'_, '_> {
    fn search_file(&mut self, path: &Path) {
        let mut sink = Collect {
            shared: self.shared,
            lines: Vec::new(),
            count: 0,
            binary: false,
        };
        if let Err(e) = self.searcher.search_path(&self.matcher, path, &mut sink) {
            tracing::debug!(path = %path.display(), error = %e, "grep: cannot search file");
            self.shared.unreadable.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if sink.binary {
            self.shared.binary.fetch_add(1, Ordering::Relaxed);
            let kept = sink.lines.len();
            self.shared.stored.fetch_sub(kept, Ordering::Relaxed);
            return;
        }
        if sink.count > 0 {
            self.shared.total.fetch_add(sink.count, Ordering::Relaxed);
            self.local.push(FileMatches {
                path: path.to_path_buf(),
                lines: sink.lines,
                count: sink.count,
            });
        }
    }
}

impl Drop for Visitor<'_, '_> {
    fn drop(&mut self) {
        if !self.local.is_empty() {
            let mut all = self
                .shared
                .results
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            all.append(&mut self.local);
        }
    }
}

/// Collects the matching lines of one file.
struct Collect<'a, 's> {
    shared: &'a Shared<'s>,
    lines: Vec<GrepLine>,
    count: u64,
    binary: bool,
}

impl Sink for Collect<'_, '_> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.count += 1;
        if self.shared.stored.fetch_add(1, Ordering::Relaxed) < STORE_CAP {
            self.lines.push(GrepLine {
                line: mat.line_number().unwrap_or(0),
                text: clip_line(mat.bytes()),
            });
        } else {
            self.shared.stored.fetch_sub(1, Ordering::Relaxed);
            self.shared.capped.store(true, Ordering::Relaxed);
        }
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A matched line without its terminator, lossy UTF-8, cut at [`MAX_LINE_CHARS`].
fn clip_line(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((at, _)) => format!("{}… [line cut]", &text[..at]),
        None => text.into_owned(),
    }
}

/// Splits a `glob` argument into globs: separated by commas or whitespace outside braces.
pub fn split_globs(arg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in arg.chars() {
        match c {
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' | ' ' | '\t' | '\n' if depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn splits_globs_outside_braces() {
        assert_eq!(
            split_globs("*.rs, *.{ts,tsx} !vendor/**"),
            ["*.rs", "*.{ts,tsx}", "!vendor/**"]
        );
        assert!(split_globs("  ").is_empty());
    }

    #[test]
    fn clips_long_lines_and_terminators() {
        assert_eq!(clip_line(b"abc\r\n"), "abc");
        let long = "x".repeat(MAX_LINE_CHARS + 5);
        assert!(clip_line(long.as_bytes()).ends_with("[line cut]"));
    }

    #[test]
    fn bad_regex_is_a_clear_error() {
        let e = matcher("fn (", false).unwrap_err().to_string();
        assert!(e.contains("invalid regex `fn (`"), "{e}");
    }
}
