//! The permission engine's view of where a command runs and what it names: `exec_command`'s
//! `cwd`, and the paths of a command line that a deny path rule keeps from being read.

use std::path::{Path, PathBuf};

use cairn_policy::paths::normalize_lexically;
use cairn_policy::ReadDenials;

/// The working folder a command-running call asks for (`exec_command`'s `cwd`), if any.
pub(crate) fn exec_cwd(args: &serde_json::Value) -> Option<&str> {
    args.get("cwd")
        .and_then(|c| c.as_str())
        .filter(|c| !c.trim().is_empty())
}

/// Where a call's command runs: `cwd` under `workspace`, or the workspace itself.
pub(crate) fn run_dir(workspace: &Path, args: &serde_json::Value) -> PathBuf {
    match exec_cwd(args) {
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
