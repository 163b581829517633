//! Tool result budget: oversized results are saved to disk and the model gets head, tail and path.

use std::path::{Path, PathBuf};

/// Limits for what a tool result may put into the context.
#[derive(Debug, Clone)]
pub struct ResultBudget {
    /// Results longer than this (chars) are saved to disk.
    pub save_threshold: usize,
    /// At most this many chars of a saved result go to the model (half head, half tail).
    pub max_chars: usize,
    /// Where saved results go; `None` = `<state_dir>/tool-results`.
    pub dir: Option<PathBuf>,
}

impl Default for ResultBudget {
    fn default() -> Self {
        ResultBudget {
            save_threshold: 32_000,
            max_chars: 16_000,
            dir: None,
        }
    }
}

impl ResultBudget {
    /// Defaults overridden by `TOOL_RESULT_SAVE_THRESHOLD`, `TOOL_RESULT_MAX_CHARS`, `TOOL_RESULT_DIR`.
    pub fn from_env() -> Self {
        let mut b = ResultBudget::default();
        if let Some(v) = env_usize("TOOL_RESULT_SAVE_THRESHOLD") {
            b.save_threshold = v.max(1);
        }
        if let Some(v) = env_usize("TOOL_RESULT_MAX_CHARS") {
            b.max_chars = v.max(2);
        }
        if let Ok(d) = std::env::var("TOOL_RESULT_DIR") {
            if !d.is_empty() {
                b.dir = Some(PathBuf::from(d));
            }
        }
        b
    }

    /// The folder saved results go to for a session whose state lives in `state_dir`.
    pub fn dir_for(&self, state_dir: &Path) -> PathBuf {
        self.dir
            .clone()
            .unwrap_or_else(|| state_dir.join("tool-results"))
    }

    /// Applies the budget to one result; a result within budget is returned unchanged.
    pub fn apply(&self, content: String, state_dir: &Path, call_id: &str) -> String {
        let len = content.chars().count();
        if len <= self.save_threshold {
            return content;
        }
        let dir = self.dir_for(state_dir);
        let file = dir.join(format!("{}.txt", sanitize(call_id)));
        let saved =
            std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, content.as_bytes()));
        let half = (self.max_chars / 2).max(1);
        let head: String = content.chars().take(half).collect();
        let tail: String = {
            let skip = len.saturating_sub(half);
            content.chars().skip(skip).collect()
        };
        let omitted = len.saturating_sub(2 * half);
        let location = match saved {
            Ok(()) => format!(
                "The full output ({len} chars) was saved to {}; read it with read_file (offset/limit) or grep if you need the middle.",
                file.display()
            ),
            Err(e) => {
                tracing::warn!(error = %e, "could not save oversized tool result");
                format!("The full output ({len} chars) could not be saved ({e}).")
            }
        };
        format!("{head}\n\n[... {omitted} chars omitted ...]\n\n{tail}\n\n[{location}]")
    }
}

fn env_usize(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// A call id made safe as a file name.
pub(crate) fn sanitize(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if s.is_empty() {
        "result".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn small_results_pass_through() {
        let b = ResultBudget::default();
        let dir = std::env::temp_dir();
        assert_eq!(b.apply("hello".into(), &dir, "c1"), "hello");
    }

    #[test]
    fn large_results_are_saved_with_head_and_tail() {
        let tmp = tempdir();
        let b = ResultBudget {
            save_threshold: 100,
            max_chars: 20,
            dir: None,
        };
        let content: String = (0..500)
            .map(|i| char::from(b'a' + (i % 26) as u8))
            .collect();
        let out = b.apply(content.clone(), &tmp, "call/1");
        assert!(out.starts_with(&content[..10]));
        assert!(out.contains(&content[490..]));
        assert!(out.contains("480 chars omitted"));
        let saved = tmp.join("tool-results").join("call_1.txt");
        assert_eq!(std::fs::read_to_string(&saved).unwrap(), content);
        assert!(out.contains(&saved.display().to_string()));
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("cairn-budget-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
