//! Worktree names: 1–64 characters of `[A-Za-z0-9._-]`, not starting with `-` or `.`.

use crate::error::{Result, WorktreeError};

/// Checks a worktree NAME as the CLI contract defines it.
pub fn validate(name: &str) -> Result<()> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let ok = !name.is_empty()
        && name.len() <= 64
        && ok_chars
        && !name.starts_with('-')
        && !name.starts_with('.')
        && !name.ends_with(".lock")
        && !name.contains("..");
    if ok {
        Ok(())
    } else {
        Err(WorktreeError::Usage(format!(
            "invalid worktree name `{name}`: use 1–64 letters, digits, `.`, `_` or `-`, not \
             starting with `-` or `.`"
        )))
    }
}

/// The branch of worktree `name`.
pub fn branch(name: &str) -> String {
    format!("cairn/{name}")
}

/// The id of worktree `name` in the repository's `.git/worktrees/`.
pub fn admin_id(name: &str) -> String {
    format!("cairn-{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_contract() {
        for ok in ["a", "feature-1", "fix_2.b", "A.b-c_d", &"x".repeat(64)] {
            assert!(validate(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-a",
            ".a",
            "a/b",
            "a b",
            "é",
            &"x".repeat(65),
            "a..b",
            "x.lock",
        ] {
            assert!(validate(bad).is_err(), "{bad}");
        }
    }
}
