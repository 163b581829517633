//! The workspace boundary: every path argument resolves here or is refused.
//!
//! A path is joined to the workspace (when relative), normalised lexically (`.`/`..`), then
//! resolved physically: every symlink along the existing prefix is followed (including a
//! dangling symlink as the last component), and the remainder that does not exist yet is
//! appended as is. The result must lie inside the canonical workspace.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use cairn_engine::ToolError;

/// How many symlinks one resolution may follow before giving up (like `ELOOP`).
const MAX_SYMLINKS: usize = 40;

/// A path argument resolved inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspacePath {
    /// Absolute path with every existing symlink resolved; operate on this.
    pub abs: PathBuf,
    /// Path relative to the workspace root, `/`-separated; `.` for the root itself.
    pub rel: String,
}

/// Resolves a path argument against `workspace`, refusing anything that lands outside it.
pub fn resolve(workspace: &Path, input: &str) -> Result<WorkspacePath, ToolError> {
    if input.contains('\0') {
        return Err(ToolError::InvalidArguments(format!(
            "the path `{}` contains a NUL byte; no file name can",
            input.escape_default()
        )));
    }
    let ws_lexical = normalize(&absolute(workspace));
    let ws = std::fs::canonicalize(&ws_lexical).unwrap_or_else(|_| ws_lexical.clone());
    let outside = || {
        ToolError::OutsideWorkspace(format!(
            "`{input}` (the workspace is {}; only paths inside it are allowed)",
            ws.display()
        ))
    };

    let given = Path::new(input);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        ws_lexical.join(given)
    };
    let lexical = normalize(&joined);
    if !lexical.starts_with(&ws_lexical) && !lexical.starts_with(&ws) {
        return Err(outside());
    }
    let real = resolve_symlinks(&lexical)
        .map_err(|e| ToolError::Failed(format!("cannot resolve `{input}`: {e}")))?;
    let rel = real.strip_prefix(&ws).map_err(|_| outside())?;
    Ok(WorkspacePath {
        rel: rel_string(rel),
        abs: real,
    })
}

/// What a resolved path will be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reading or listing.
    Read,
    /// Creating, changing or deleting.
    Write,
}

/// Resolves a path argument inside the workspace or, failing that, inside a directory the
/// user granted for this session (`granted`: absolute path, writable). Writes need a writable
/// grant. Paths outside the workspace keep their absolute form in `rel`.
pub fn resolve_granted(
    workspace: &Path,
    granted: &[(String, bool)],
    input: &str,
    access: Access,
) -> Result<WorkspacePath, ToolError> {
    let first = match resolve(workspace, input) {
        Err(ToolError::OutsideWorkspace(m)) => m,
        Ok(p) if access == Access::Write => {
            return refuse_protected_through_link(workspace, input, p)
        }
        other => return other,
    };
    let ws_lexical = normalize(&absolute(workspace));
    let given = Path::new(input);
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        ws_lexical.join(given)
    };
    let lexical = normalize(&joined);
    let Some(wanted) = lexical.to_str() else {
        return Err(ToolError::OutsideWorkspace(first));
    };
    let mut read_only_hit = None;
    for (dir, writable) in granted {
        let Ok(p) = resolve(Path::new(dir), wanted) else {
            continue;
        };
        if access == Access::Write && !writable {
            read_only_hit = Some(dir.clone());
            continue;
        }
        return Ok(WorkspacePath {
            rel: p.abs.to_string_lossy().into_owned(),
            abs: p.abs,
        });
    }
    match read_only_hit {
        Some(dir) => Err(ToolError::OutsideWorkspace(format!(
            "`{input}` is in {dir}, which was granted read-only; ask for writable access with \
             request_directory (writable: true) first"
        ))),
        None if granted.is_empty() => Err(ToolError::OutsideWorkspace(format!(
            "{first}; to work outside it, ask the user with request_directory"
        ))),
        None => Err(ToolError::OutsideWorkspace(format!(
            "{first}, nor inside a granted directory ({}); to work elsewhere, ask the user \
             with request_directory",
            granted
                .iter()
                .map(|(d, _)| d.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Refuses a write that reaches a protected folder (`.git`, `.agent`, `.cairn`, nested ones
/// too) only through a symbolic link. The permission check asks the user for any path that
/// names one; a link can be swapped in between that check and this resolution, so the file
/// tools write into a protected folder only by a path that names it.
fn refuse_protected_through_link(
    workspace: &Path,
    input: &str,
    resolved: WorkspacePath,
) -> Result<WorkspacePath, ToolError> {
    let protected = |rel: &Path| {
        rel.components().find_map(|c| match c {
            Component::Normal(s) => {
                let s = s.to_string_lossy().to_lowercase();
                cairn_engine::permission::PROTECTED
                    .iter()
                    .copied()
                    .find(|p| s == *p)
            }
            _ => None,
        })
    };
    let Some(folder) = protected(Path::new(&resolved.rel)) else {
        return Ok(resolved);
    };
    let ws_lexical = normalize(&absolute(workspace));
    let lexical = normalize(&ws_lexical.join(input));
    let ws = std::fs::canonicalize(&ws_lexical).unwrap_or_else(|_| ws_lexical.clone());
    let as_written = lexical
        .strip_prefix(&ws_lexical)
        .or_else(|_| lexical.strip_prefix(&ws))
        .ok();
    if as_written.and_then(protected).is_some() {
        return Ok(resolved);
    }
    Err(ToolError::Failed(format!(
        "`{input}` leads through a symbolic link into the protected `{folder}` folder (to \
         `{}`); file tools write there only by a path that names it, which the user is asked \
         about. Nothing was written.",
        resolved.rel
    )))
}

/// Resolves a path argument for a tool call: the workspace, then the session's granted
/// directories.
pub fn resolve_for(
    ctx: &cairn_engine::ToolContext,
    input: &str,
    access: Access,
) -> Result<WorkspacePath, ToolError> {
    resolve_granted(
        &ctx.workspace,
        &ctx.host.granted_directories(),
        input,
        access,
    )
}

/// Formats a workspace-relative path with `/` separators (`.` when empty).
fn rel_string(rel: &Path) -> String {
    let parts: Vec<_> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|cwd| cwd.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Removes `.` and folds `..` without touching the file system (`/..` stays `/`).
pub fn normalize(p: &Path) -> PathBuf {
    cairn_policy::paths::normalize_lexically(p)
}

/// Like `realpath`, but tolerates a missing tail: components that do not exist are appended.
fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut pending: VecDeque<OsString> = VecDeque::new();
    let mut resolved = PathBuf::from("/");
    push_components(&mut pending, path, &mut resolved, true);
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
                    return Err(io::Error::other("too many levels of symbolic links"));
                }
                let target = std::fs::read_link(&candidate)?;
                let mut front = VecDeque::new();
                push_components(&mut front, &target, &mut resolved, target.is_absolute());
                front.append(&mut pending);
                pending = front;
            }
            // Existing non-link, or missing (then everything below is appended as is), or
            // unreadable (the operation itself will report the real error).
            _ => resolved = candidate,
        }
    }
    Ok(resolved)
}

/// Queues `p`'s components; an absolute `p` restarts resolution at `/`.
fn push_components(
    queue: &mut VecDeque<OsString>,
    p: &Path,
    resolved: &mut PathBuf,
    absolute: bool,
) {
    if absolute {
        *resolved = PathBuf::from("/");
    }
    for c in p.components() {
        match c {
            Component::Normal(n) => queue.push_back(n.to_os_string()),
            Component::ParentDir => queue.push_back(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    struct Fixture {
        _root: tempfile::TempDir,
        ws: PathBuf,
        outside: PathBuf,
    }

    fn fixture() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(root.path()).unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(ws.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        Fixture {
            _root: root,
            ws,
            outside,
        }
    }

    fn is_outside(r: Result<WorkspacePath, ToolError>) -> bool {
        matches!(r, Err(ToolError::OutsideWorkspace(_)))
    }

    #[test]
    fn relative_paths_resolve_inside() {
        let f = fixture();
        let p = resolve(&f.ws, "src/main.rs").unwrap();
        assert_eq!(p.abs, f.ws.join("src/main.rs"));
        assert_eq!(p.rel, "src/main.rs");
        let p = resolve(&f.ws, "./src/../src/./main.rs").unwrap();
        assert_eq!(p.rel, "src/main.rs");
    }

    #[test]
    fn workspace_root_itself_is_dot() {
        let f = fixture();
        assert_eq!(resolve(&f.ws, ".").unwrap().rel, ".");
        assert_eq!(resolve(&f.ws, "").unwrap().rel, ".");
        assert_eq!(resolve(&f.ws, f.ws.to_str().unwrap()).unwrap().rel, ".");
    }

    #[test]
    fn absolute_path_inside_is_fine() {
        let f = fixture();
        let abs = f.ws.join("src/main.rs");
        let p = resolve(&f.ws, abs.to_str().unwrap()).unwrap();
        assert_eq!(p.rel, "src/main.rs");
    }

    #[test]
    fn absolute_path_outside_is_refused() {
        let f = fixture();
        assert!(is_outside(resolve(&f.ws, "/etc/passwd")));
        assert!(is_outside(resolve(&f.ws, "/")));
        assert!(is_outside(resolve(
            &f.ws,
            f.outside.join("secret").to_str().unwrap()
        )));
    }

    #[test]
    fn dotdot_escapes_are_refused() {
        let f = fixture();
        assert!(is_outside(resolve(&f.ws, "../../etc")));
        assert!(is_outside(resolve(&f.ws, "..")));
        assert!(is_outside(resolve(&f.ws, "src/../../outside/secret")));
        assert!(is_outside(resolve(&f.ws, "../ws-sibling")));
        // `..` that stays inside is fine.
        assert_eq!(resolve(&f.ws, "src/../x").unwrap().rel, "x");
    }

    #[test]
    fn prefix_sibling_is_not_inside() {
        let f = fixture();
        let sibling = f.ws.with_file_name("ws2");
        std::fs::create_dir_all(&sibling).unwrap();
        assert!(is_outside(resolve(
            &f.ws,
            sibling.join("a").to_str().unwrap()
        )));
    }

    #[test]
    fn symlink_escape_is_refused() {
        let f = fixture();
        symlink(&f.outside, f.ws.join("link_dir")).unwrap();
        symlink(f.outside.join("secret"), f.ws.join("link_file")).unwrap();
        assert!(is_outside(resolve(&f.ws, "link_dir/secret")));
        assert!(is_outside(resolve(&f.ws, "link_dir/new/nested.txt")));
        assert!(is_outside(resolve(&f.ws, "link_file")));
    }

    #[test]
    fn dangling_symlink_pointing_outside_is_refused() {
        let f = fixture();
        symlink(f.outside.join("not-yet"), f.ws.join("dangling")).unwrap();
        assert!(is_outside(resolve(&f.ws, "dangling")));
    }

    #[test]
    fn relative_symlink_escape_is_refused() {
        let f = fixture();
        symlink("../../outside", f.ws.join("src/up")).unwrap();
        assert!(is_outside(resolve(&f.ws, "src/up/secret")));
    }

    #[test]
    fn symlink_loop_is_an_error_not_a_hang() {
        let f = fixture();
        symlink("b", f.ws.join("a")).unwrap();
        symlink("a", f.ws.join("b")).unwrap();
        let r = resolve(&f.ws, "a/x");
        assert!(matches!(r, Err(ToolError::Failed(m)) if m.contains("symbolic links")));
    }

    #[test]
    fn not_yet_existing_nested_path_is_inside() {
        let f = fixture();
        let p = resolve(&f.ws, "new/deeper/file.txt").unwrap();
        assert_eq!(p.abs, f.ws.join("new/deeper/file.txt"));
        assert_eq!(p.rel, "new/deeper/file.txt");
    }

    #[test]
    fn symlinked_dir_that_stays_inside_is_fine() {
        let f = fixture();
        symlink(f.ws.join("src"), f.ws.join("alias")).unwrap();
        let p = resolve(&f.ws, "alias/main.rs").unwrap();
        assert_eq!(p.abs, f.ws.join("src/main.rs"));
        assert_eq!(p.rel, "src/main.rs");
        symlink("src", f.ws.join("rel_alias")).unwrap();
        assert_eq!(resolve(&f.ws, "rel_alias/x/y").unwrap().rel, "src/x/y");
    }

    #[test]
    fn symlinked_workspace_root_is_resolved() {
        let f = fixture();
        let link = f.ws.with_file_name("ws_link");
        symlink(&f.ws, &link).unwrap();
        let p = resolve(&link, "src/main.rs").unwrap();
        assert_eq!(p.abs, f.ws.join("src/main.rs"));
        let abs = link.join("src/main.rs");
        assert_eq!(
            resolve(&link, abs.to_str().unwrap()).unwrap().rel,
            "src/main.rs"
        );
    }

    #[test]
    fn granted_directories_widen_the_boundary() {
        let f = fixture();
        let secret = f.outside.join("secret");
        let secret = secret.to_str().unwrap();
        let ro = vec![(f.outside.to_string_lossy().into_owned(), false)];
        let rw = vec![(f.outside.to_string_lossy().into_owned(), true)];
        let p = resolve_granted(&f.ws, &ro, secret, Access::Read).unwrap();
        assert_eq!(p.abs, f.outside.join("secret"));
        assert_eq!(p.rel, secret);
        let e = resolve_granted(&f.ws, &ro, secret, Access::Write).unwrap_err();
        assert!(e.to_string().contains("read-only"), "{e}");
        assert!(resolve_granted(&f.ws, &rw, secret, Access::Write).is_ok());
        // Relative escapes resolve against the workspace first.
        assert!(resolve_granted(&f.ws, &ro, "../outside/secret", Access::Read).is_ok());
        let e = resolve_granted(&f.ws, &[], secret, Access::Read).unwrap_err();
        assert!(e.to_string().contains("request_directory"), "{e}");
        let e = resolve_granted(&f.ws, &ro, "/etc/passwd", Access::Read).unwrap_err();
        assert!(matches!(e, ToolError::OutsideWorkspace(_)), "{e}");
        // Inside the workspace nothing changes.
        assert_eq!(
            resolve_granted(&f.ws, &ro, "src/main.rs", Access::Write)
                .unwrap()
                .rel,
            "src/main.rs"
        );
    }

    #[test]
    fn normalize_folds_dots() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../..")), PathBuf::from("/"));
    }
}
