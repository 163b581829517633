//! Protected folders below the workspace root: a nested repository's `.git` (its hooks run
//! when the user works in it), a subproject's `.agent` or `.cairn`. The sandbox mounts each
//! existing one read-only, as it does the root's. Found by a bounded walk per command:
//! symbolic links are not followed, protected folders and dependency or build folders are
//! not entered.

use std::path::{Path, PathBuf};

/// Folders the walk does not enter (dependency caches and build outputs: huge, and no place
/// for a repository the user works in).
const SKIPPED: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__"];
/// At most this many folders are read per walk (a huge tree keeps its root protections).
const MAX_DIRS: usize = 20_000;
/// Deepest folder level the walk reads.
const MAX_DEPTH: usize = 12;

/// Existing protected entries (`names`: `.git`, `.agent`, `.cairn`) anywhere below the
/// workspace root, not the root's own.
pub fn nested_protected(workspace: &Path, names: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(workspace.to_path_buf(), 0usize)];
    let mut visited = 0;
    while let Some((dir, depth)) = stack.pop() {
        visited += 1;
        if visited > MAX_DIRS {
            tracing::debug!(workspace = %workspace.display(), "nested protected folder walk stopped at its limit");
            break;
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                continue;
            };
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if names.iter().any(|n| n == name) {
                // A `.git` file (worktree, submodule) points elsewhere; only folders mount.
                if depth > 0 && kind.is_dir() {
                    out.push(entry.path());
                }
                continue;
            }
            if kind.is_dir() && depth < MAX_DEPTH && !SKIPPED.contains(&name) {
                stack.push((entry.path(), depth + 1));
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn finds_nested_protected_folders_but_not_the_roots_or_skipped_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path();
        for d in [
            ".git/hooks",
            "docs/sub/.git/hooks",
            "a/b/c/.agent",
            "lib/.cairn",
            "node_modules/pkg/.git",
            "docs/sub/.git/modules/x/.git",
        ] {
            std::fs::create_dir_all(ws.join(d)).unwrap();
        }
        std::fs::write(ws.join("vendor-file"), "").unwrap();
        std::fs::create_dir_all(ws.join("wt")).unwrap();
        std::fs::write(ws.join("wt/.git"), "gitdir: ../.git/worktrees/wt\n").unwrap();
        let names: Vec<String> = [".git", ".agent", ".cairn"].map(String::from).to_vec();
        let found: Vec<String> = nested_protected(ws, &names)
            .iter()
            .map(|p| p.strip_prefix(ws).unwrap().display().to_string())
            .collect();
        assert_eq!(found, vec!["a/b/c/.agent", "docs/sub/.git", "lib/.cairn"]);
    }
}
