//! Where a path argument really lands: every symlink along the existing prefix followed (a
//! dangling last link too), with a missing tail appended as is. Two readings of `..`: the file
//! tools fold it lexically first ([`physical_path`], what they then open), a shell command's
//! kernel goes up from where a link points ([`kernel_path`]). The permission engine decides on this physical path, so a symlink inside the
//! workspace that points into `.git` or out of the workspace cannot carry a write past it.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution follows before giving up (like `ELOOP`).
const MAX_SYMLINKS: usize = 40;

/// Removes `.` and folds `..` without touching the file system (`/..` stays `/`): the
/// shared fold with [`Climb::Saturate`](crate::lexical::Climb::Saturate).
pub fn normalize_lexically(p: &Path) -> PathBuf {
    crate::lexical::fold_dots_saturating(p)
}

/// The canonical form of `workspace` (its own symlinks resolved), or its lexical form when it
/// cannot be canonicalised.
pub fn canonical_workspace(workspace: &Path) -> PathBuf {
    std::fs::canonicalize(workspace).unwrap_or_else(|_| normalize_lexically(workspace))
}

/// Where `input` (relative to `workspace`, or absolute) physically lands for the file tools,
/// which fold `.` and `..` before following links (as they then open it). `None` when the
/// symlinks loop or a link cannot be read: callers treat that as "not provably inside".
pub fn physical_path(workspace: &Path, input: &str) -> Option<PathBuf> {
    resolve_symlinks(&normalize_lexically(&joined(workspace, input)))
}

/// Where `input` lands when a program opens it: component by component as the kernel does,
/// so in `link/../x` the `..` goes up from where the link points. For shell commands.
pub fn kernel_path(workspace: &Path, input: &str) -> Option<PathBuf> {
    resolve_symlinks(&joined(workspace, input))
}

fn joined(workspace: &Path, input: &str) -> PathBuf {
    let given = Path::new(input);
    if given.is_absolute() {
        given.to_path_buf()
    } else {
        workspace.join(given)
    }
}

fn resolve_symlinks(path: &Path) -> Option<PathBuf> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    let mut resolved = PathBuf::from("/");
    queue(&mut pending, path);
    let mut followed = 0usize;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            resolved.pop();
            continue;
        }
        let candidate = resolved.join(&part);
        match std::fs::symlink_metadata(&candidate) {
            Ok(meta) if meta.file_type().is_symlink() => {
                followed += 1;
                if followed > MAX_SYMLINKS {
                    return None;
                }
                let target = std::fs::read_link(&candidate).ok()?;
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                let mut front = VecDeque::new();
                queue(&mut front, &target);
                front.append(&mut pending);
                pending = front;
            }
            _ => resolved = candidate,
        }
    }
    Some(resolved)
}

fn queue(q: &mut VecDeque<OsString>, p: &Path) {
    for c in p.components() {
        match c {
            Component::Normal(n) => q.push_back(n.to_os_string()),
            Component::ParentDir => q.push_back(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn follows_links_into_and_out_of_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::create_dir_all(base.join("out")).unwrap();
        symlink(".git/hooks", ws.join("h")).unwrap();
        symlink("../out", ws.join("o")).unwrap();
        symlink(ws.join(".git/hooks/pre-commit"), ws.join("dangling")).unwrap();
        assert_eq!(
            physical_path(&ws, "h/pre-commit").unwrap(),
            ws.join(".git/hooks/pre-commit")
        );
        assert_eq!(
            physical_path(&ws, "o/new/deeper").unwrap(),
            base.join("out/new/deeper")
        );
        assert_eq!(
            physical_path(&ws, "dangling").unwrap(),
            ws.join(".git/hooks/pre-commit")
        );
        assert_eq!(physical_path(&ws, "a/../b").unwrap(), ws.join("b"));
        // For a program, `..` after a link goes up from the link's target, as the kernel
        // does; the file tools fold it first.
        std::fs::create_dir_all(base.join("out/deep")).unwrap();
        symlink(base.join("out/deep"), ws.join("d")).unwrap();
        assert_eq!(
            kernel_path(&ws, "d/../secret").unwrap(),
            base.join("out/secret")
        );
        assert_eq!(
            kernel_path(&ws, "sub/../d/../x").unwrap(),
            base.join("out/x")
        );
        assert_eq!(
            physical_path(&ws, "d/../secret").unwrap(),
            ws.join("secret")
        );
        symlink("l2", ws.join("l1")).unwrap();
        symlink("l1", ws.join("l2")).unwrap();
        assert_eq!(physical_path(&ws, "l1/x"), None);
    }

    #[test]
    fn lexical_normalisation() {
        assert_eq!(
            normalize_lexically(Path::new("/a/./b/../c")),
            PathBuf::from("/a/c")
        );
        assert_eq!(normalize_lexically(Path::new("/../..")), PathBuf::from("/"));
    }
}
