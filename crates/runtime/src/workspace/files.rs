//! The files panel's view of a workspace: one folder at a time (the tree expands lazily) and
//! the list of every file for `@path` completion. Both honour `.gitignore`, `.ignore` and
//! `.git/info/exclude` (the `ignore` crate, the rules `grep` and `list_files` use), never show
//! `.git`, and refuse paths outside the workspace (`..`, absolute paths, symlink escapes).

use std::cmp::Ordering;
use std::path::Path;

use ignore::WalkBuilder;

use super::types::{DirListing, FileEntry, FileIndex};

/// Entries one folder listing returns at most.
pub const MAX_DIR_ENTRIES: usize = 2000;
/// Files the completion index holds at most.
pub const MAX_INDEX_FILES: usize = 20_000;

/// A walker over `root` with the workspace's ignore rules; hidden files are shown.
fn walker(root: &Path) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git");
    b
}

pub use crate::mentions::{check_relative, resolve_path as resolve};

fn rel_of(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

fn by_kind_then_name(a: &FileEntry, b: &FileEntry) -> Ordering {
    b.dir
        .cmp(&a.dir)
        .then_with(|| a.name.to_lowercase().cmp(&b.name.to_lowercase()))
        .then_with(|| a.name.cmp(&b.name))
}

/// Whether `abs`, named `name` at the workspace root, is an empty protected folder (`.agent`,
/// `.claude`, …): the sandbox mounts a read-only placeholder there while a command runs, and
/// it is nothing the user made (checkpoints skip it likewise).
fn is_sandbox_mount_point(abs: &Path, name: &str) -> bool {
    cairn_policy::PROTECTED_FOLDERS.contains(&name)
        && std::fs::symlink_metadata(abs).is_ok_and(|m| m.is_dir())
        && std::fs::read_dir(abs).is_ok_and(|mut d| d.next().is_none())
}

/// The entries of folder `rel` ("" = the root): folders first, then files, by name; empty
/// sandbox mount points at the root are left out.
pub fn list_dir(workspace: &Path, rel: &str) -> Result<DirListing, String> {
    let (abs, canon_rel) = resolve(workspace, rel)?;
    if !abs.is_dir() {
        return Err(format!("`{rel}` is not a folder of the workspace"));
    }
    let root = cairn_tools::paths::resolve(workspace, ".")
        .map(|p| p.abs)
        .map_err(|e| e.to_string())?;
    let mut entries = Vec::new();
    let mut truncated = false;
    for item in walker(&abs).max_depth(Some(1)).build() {
        let Ok(item) = item else { continue };
        if item.depth() == 0 {
            continue;
        }
        if entries.len() >= MAX_DIR_ENTRIES {
            truncated = true;
            break;
        }
        let Some(path) = rel_of(&root, item.path()) else {
            continue;
        };
        let kind = item.file_type();
        if canon_rel == "."
            && is_sandbox_mount_point(item.path(), &item.file_name().to_string_lossy())
        {
            continue;
        }
        entries.push(FileEntry {
            name: item.file_name().to_string_lossy().into_owned(),
            path,
            dir: kind.is_some_and(|k| k.is_dir()),
            link: kind.is_some_and(|k| k.is_symlink()),
        });
    }
    entries.sort_by(by_kind_then_name);
    Ok(DirListing {
        path: if canon_rel == "." {
            String::new()
        } else {
            canon_rel
        },
        entries,
        truncated,
    })
}

/// Every file of the workspace (relative paths, sorted), for `@path` completion.
pub fn index(workspace: &Path) -> Result<FileIndex, String> {
    let (root, _) = resolve(workspace, "")?;
    let mut files = Vec::new();
    let mut truncated = false;
    for item in walker(&root).build() {
        let Ok(item) = item else { continue };
        if !item.file_type().is_some_and(|k| k.is_file()) {
            continue;
        }
        if files.len() >= MAX_INDEX_FILES {
            truncated = true;
            break;
        }
        if let Some(rel) = rel_of(&root, item.path()) {
            files.push(rel);
        }
    }
    files.sort();
    Ok(FileIndex { files, truncated })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn names(l: &DirListing) -> Vec<String> {
        l.entries
            .iter()
            .map(|e| format!("{}{}", e.path, if e.dir { "/" } else { "" }))
            .collect()
    }

    fn workspace() -> tempfile::TempDir {
        let ws = tempfile::tempdir().unwrap();
        let p = ws.path();
        std::fs::write(p.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::create_dir_all(p.join("src/deep")).unwrap();
        std::fs::create_dir_all(p.join("target/debug")).unwrap();
        std::fs::create_dir_all(p.join(".git")).unwrap();
        std::fs::write(p.join(".git/HEAD"), "ref").unwrap();
        std::fs::write(p.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(p.join("src/deep/x.rs"), "").unwrap();
        std::fs::write(p.join("target/debug/app"), "bin").unwrap();
        std::fs::write(p.join("build.log"), "log").unwrap();
        std::fs::write(p.join("README.md"), "# hi").unwrap();
        ws
    }

    #[test]
    fn a_listing_honours_gitignore_and_puts_folders_first() {
        let ws = workspace();
        let root = list_dir(ws.path(), "").unwrap();
        assert_eq!(root.path, "");
        assert_eq!(names(&root), ["src/", ".gitignore", "README.md"]);
        let src = list_dir(ws.path(), "src").unwrap();
        assert_eq!(src.path, "src");
        assert_eq!(names(&src), ["src/deep/", "src/main.rs"]);
        assert!(!root.truncated);
    }

    #[test]
    fn empty_sandbox_mount_points_at_the_root_are_not_listed() {
        let ws = workspace();
        for d in [".agent", ".claude", ".cairn"] {
            std::fs::create_dir(ws.path().join(d)).unwrap();
        }
        std::fs::create_dir_all(ws.path().join("src/.agent")).unwrap();
        std::fs::create_dir(ws.path().join(".agents")).unwrap();
        std::fs::write(ws.path().join(".agents/skill.md"), "x").unwrap();
        let root = list_dir(ws.path(), "").unwrap();
        assert_eq!(
            names(&root),
            [".agents/", "src/", ".gitignore", "README.md"]
        );
        let src = list_dir(ws.path(), "src").unwrap();
        assert_eq!(names(&src), ["src/.agent/", "src/deep/", "src/main.rs"]);
    }

    #[test]
    fn the_index_lists_every_file_not_ignored() {
        let ws = workspace();
        let idx = index(ws.path()).unwrap();
        assert_eq!(
            idx.files,
            [".gitignore", "README.md", "src/deep/x.rs", "src/main.rs"]
        );
    }

    #[test]
    fn paths_outside_the_workspace_are_refused() {
        let ws = workspace();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("escape")).unwrap();
        for bad in ["..", "../x", "src/../..", "/etc", "~/x"] {
            let err = list_dir(ws.path(), bad).unwrap_err();
            assert!(err.contains("inside"), "{bad}: {err}");
        }
        let err = list_dir(ws.path(), "escape").unwrap_err();
        assert!(err.contains("outside the workspace"), "{err}");
        let err = list_dir(ws.path(), "README.md").unwrap_err();
        assert!(err.contains("not a folder"), "{err}");
        // The link itself is listed (as a link, not followed).
        let root = list_dir(ws.path(), "").unwrap();
        let link = root.entries.iter().find(|e| e.name == "escape").unwrap();
        assert!(link.link && !link.dir);
    }
}
