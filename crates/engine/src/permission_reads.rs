//! The permission engine's view of where a command runs and what it names: its folder, and
//! the paths of a command line that a deny path rule keeps from being read.

use std::path::{Path, PathBuf};

use cairn_policy::paths::normalize_lexically;
use cairn_policy::ReadDenials;

/// Where a command runs: `cwd` (relative to `workspace`, or absolute) folded, or the
/// workspace itself.
pub(crate) fn run_dir(workspace: &Path, cwd: Option<&str>) -> PathBuf {
    match cwd {
        Some(c) => normalize_lexically(&workspace.join(c)),
        None => workspace.to_path_buf(),
    }
}

/// The first word of `command` that names a path `denials` deny (resolved from `dir`,
/// as written or through links), with the rule's text and source. A literal check: a command
/// built to hide the name is the sandbox's and the known-safe check's business.
pub(crate) fn mentioned_denied(
    denials: &ReadDenials,
    dir: &Path,
    command: &str,
) -> Option<(String, String)> {
    if denials.is_empty() {
        return None;
    }
    command
        .split(|c: char| c.is_whitespace() || ";&|<>()'\"`=,{}".contains(c))
        .filter(|t| !t.is_empty() && !t.starts_with('-'))
        .find_map(|token| {
            let path = normalize_lexically(&dir.join(token));
            denials
                .denied(&path)
                .map(|r| (token.to_string(), format!("`{}` ({})", r.text, r.source)))
        })
}
