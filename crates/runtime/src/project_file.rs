//! Reading a project's own configuration files (hook files, Claude Code's settings, the
//! project rules file): the workspace is resolved once, and the file below it is opened
//! refusing any link along the way (`cairn_tools::read_text_no_links`), so a file a command
//! or the repository replaced by a link to something of the user's is never read as the
//! project's.

use std::path::Path;

/// Largest project configuration file read.
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// The text of `path` (a file under `workspace`); `NotFound` when it does not exist, an
/// error naming the link when one is along the path below the workspace.
pub fn read(workspace: &Path, path: &Path) -> std::io::Result<String> {
    let root = std::fs::canonicalize(workspace)?;
    let rel = path.strip_prefix(workspace).map_err(|_| {
        std::io::Error::other(format!(
            "{} is not inside {}",
            path.display(),
            workspace.display()
        ))
    })?;
    let abs = root.join(rel);
    std::fs::symlink_metadata(&abs)?;
    cairn_tools::read_text_no_links(&abs, MAX_BYTES)
        .map_err(|e| std::io::Error::other(e.to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_linked_project_file_is_refused_a_missing_one_is_not_found() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join(".agent")).unwrap();
        std::fs::write(ws.path().join(".agent/hooks.json"), "{}").unwrap();
        assert_eq!(
            read(ws.path(), &ws.path().join(".agent/hooks.json")).unwrap(),
            "{}"
        );
        let missing = read(ws.path(), &ws.path().join(".agent/none.json")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        std::fs::write(outside.path().join("mine.toml"), "user's").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("mine.toml"),
            ws.path().join(".agent/permissions.toml"),
        )
        .unwrap();
        let linked = read(ws.path(), &ws.path().join(".agent/permissions.toml")).unwrap_err();
        assert_ne!(linked.kind(), std::io::ErrorKind::NotFound);
        std::os::unix::fs::symlink(outside.path(), ws.path().join(".claude")).unwrap();
        assert!(read(ws.path(), &ws.path().join(".claude/mine.toml")).is_err());
    }
}
