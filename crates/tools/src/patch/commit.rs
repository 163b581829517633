//! All or nothing: a patch is applied in memory to every file first; only when every hunk of
//! every file applies are the files written, and a failure while writing restores the files
//! already written.

use std::collections::BTreeMap;
use std::fs::Permissions;
use std::path::{Path, PathBuf};

use cairn_engine::{ToolContext, ToolError};

use super::apply::{apply_hunks, TextFile};
use super::model::FileOp;
use crate::guard::ConflictGuard;
use crate::paths::{self, Access};
use crate::{atomic, fsat, text};

/// The file-system operations of a commit (a seam for failure-injection tests).
pub(crate) trait CommitFs {
    /// Writes a whole file atomically (`mode`: permissions to set, else keep the existing).
    fn write(&self, path: &Path, bytes: &[u8], mode: Option<Permissions>) -> Result<(), ToolError>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> Result<(), ToolError>;
}

/// The real file system.
pub(crate) struct RealFs;

impl CommitFs for RealFs {
    fn write(&self, path: &Path, bytes: &[u8], mode: Option<Permissions>) -> Result<(), ToolError> {
        atomic::write_atomic_mode(path, bytes, mode).map(|_| ())
    }
    fn remove(&self, path: &Path) -> Result<(), ToolError> {
        fsat::remove_file(path)
            .map_err(|e| e.into_tool(format!("cannot delete {}", path.display())))
    }
}

/// How a file changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Added,
    Modified,
    Deleted,
}

/// One file's change, ready to commit.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub abs: PathBuf,
    pub shown: String,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
    before_mode: Option<Permissions>,
    after_mode: Option<Permissions>,
    /// Set on the destination of a move: where the content came from.
    pub moved_from: Option<String>,
}

impl Change {
    pub(crate) fn kind(&self) -> Kind {
        match (&self.before, &self.after) {
            (None, _) => Kind::Added,
            (Some(_), None) => Kind::Deleted,
            (Some(_), Some(_)) => Kind::Modified,
        }
    }
}

/// A file as the patch sees it while being applied.
struct VFile {
    shown: String,
    original: Option<Vec<u8>>,
    original_mode: Option<Permissions>,
    current: Option<Vec<u8>>,
    mode: Option<Permissions>,
    moved_from: Option<String>,
}

/// Applies `ops` in memory; fails (changing nothing) on the first problem.
pub(crate) fn plan(
    ctx: &ToolContext,
    guard: &ConflictGuard,
    ops: &[FileOp],
    tool: &str,
) -> Result<Vec<Change>, ToolError> {
    let mut files: BTreeMap<PathBuf, VFile> = BTreeMap::new();
    let mut order: Vec<PathBuf> = Vec::new();
    let total = ops.len();
    for (i, op) in ops.iter().enumerate() {
        let where_ = |what: &str| {
            if total > 1 {
                format!("{tool}: file section {} of {total} ({what})", i + 1)
            } else {
                format!("{tool}: {what}")
            }
        };
        match op {
            FileOp::Add { path, content } => {
                let abs = load(ctx, guard, &mut files, &mut order, path)?;
                let f = vfile(&mut files, &abs)?;
                if f.current.is_some() {
                    return Err(ToolError::Failed(format!(
                        "{}: `{}` already exists; to change it use an update (`*** Update File:` \
                         or a diff against its current content). Nothing was changed.",
                        where_(&format!("add {path}")),
                        f.shown
                    )));
                }
                f.current = Some(content.clone().into_bytes());
            }
            FileOp::Delete { path } => {
                if let Some(target) = names_a_link(ctx, path)? {
                    // Resolving the path would delete the file the link points to.
                    return Err(ToolError::Failed(format!(
                        "{}: `{path}` is a symbolic link (to {target}); a patch deletes files,                          not links, and leaves the file it points to alone. Remove the link                          with run_shell (`rm -- {path}`). Nothing was changed.",
                        where_(&format!("delete {path}"))
                    )));
                }
                let abs = load(ctx, guard, &mut files, &mut order, path)?;
                let f = vfile(&mut files, &abs)?;
                if f.current.is_none() {
                    return Err(ToolError::NotFound(format!(
                        "{}: `{}` does not exist. Nothing was changed.",
                        where_(&format!("delete {path}")),
                        f.shown
                    )));
                }
                f.current = None;
            }
            FileOp::Update {
                path,
                move_to,
                hunks,
            } => {
                let abs = load(ctx, guard, &mut files, &mut order, path)?;
                let f = vfile(&mut files, &abs)?;
                let shown = f.shown.clone();
                let Some(bytes) = f.current.clone() else {
                    return Err(ToolError::NotFound(format!(
                        "{}: `{shown}` does not exist; create it with `*** Add File:` (or a diff \
                         from /dev/null). Nothing was changed.",
                        where_(&format!("update {path}"))
                    )));
                };
                let new = if hunks.is_empty() {
                    bytes
                } else {
                    let text = text::decode_text(bytes, &shown, tool)?;
                    let mut file = TextFile::parse(&text);
                    apply_hunks(&mut file, hunks).map_err(|e| {
                        ToolError::Failed(format!(
                            "{}: {e}\nNothing was changed (the patch applies to all files or \
                             none). Read `{shown}` again and regenerate this hunk with exact \
                             context lines.",
                            where_(&format!("update {shown}"))
                        ))
                    })?;
                    file.render().into_bytes()
                };
                match move_to {
                    Some(dest) => {
                        let mode = f.mode.clone().or(f.original_mode.clone());
                        f.current = None;
                        let dest_abs = load(ctx, guard, &mut files, &mut order, dest)?;
                        let d = vfile(&mut files, &dest_abs)?;
                        if dest_abs != abs && d.current.is_some() {
                            return Err(ToolError::Failed(format!(
                                "{}: cannot move `{shown}` to `{}`: it already exists. Nothing \
                                 was changed.",
                                where_(&format!("move {path}")),
                                d.shown
                            )));
                        }
                        d.current = Some(new);
                        d.mode = mode;
                        d.moved_from = Some(shown);
                    }
                    None => f.current = Some(new),
                }
            }
        }
    }
    let changes = order
        .into_iter()
        .filter_map(|abs| {
            let f = files.remove(&abs)?;
            (f.current != f.original || f.moved_from.is_some()).then_some(Change {
                abs,
                shown: f.shown,
                before: f.original,
                after: f.current,
                before_mode: f.original_mode,
                after_mode: f.mode,
                moved_from: f.moved_from,
            })
        })
        .collect();
    Ok(changes)
}

fn vfile<'a>(
    files: &'a mut BTreeMap<PathBuf, VFile>,
    abs: &Path,
) -> Result<&'a mut VFile, ToolError> {
    files
        .get_mut(abs)
        .ok_or_else(|| ToolError::Failed(format!("internal: {} not loaded", abs.display())))
}

/// Resolves `path` and reads its current state once (checked against the conflict guard).
/// Where the symbolic link `path` points, when its last component is one (inside the
/// workspace); `None` for anything else.
fn names_a_link(ctx: &ToolContext, path: &str) -> Result<Option<String>, ToolError> {
    let given = Path::new(path);
    let Some(name) = given.file_name() else {
        return Ok(None);
    };
    let parent = given
        .parent()
        .map(|d| d.to_string_lossy().into_owned())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| ".".to_string());
    let dir = paths::resolve_for(ctx, &parent, Access::Write)?;
    let at = dir.abs.join(name);
    match std::fs::symlink_metadata(&at) {
        Ok(m) if m.file_type().is_symlink() => Ok(Some(
            std::fs::read_link(&at)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "an unreadable target".to_string()),
        )),
        _ => Ok(None),
    }
}

fn load(
    ctx: &ToolContext,
    guard: &ConflictGuard,
    files: &mut BTreeMap<PathBuf, VFile>,
    order: &mut Vec<PathBuf>,
    path: &str,
) -> Result<PathBuf, ToolError> {
    let target = paths::resolve_for(ctx, path, Access::Write)?;
    if files.contains_key(&target.abs) {
        return Ok(target.abs);
    }
    let shown = target.rel.clone();
    if shown == "." {
        return Err(ToolError::Failed(format!(
            "`{path}` is the workspace root, not a file"
        )));
    }
    // Read through the folder's handle, never following a link swapped in since the check.
    let (original, mode) = match fsat::open_read(&target.abs) {
        Ok((_, st)) if fsat::is_dir(&st) => {
            return Err(ToolError::Failed(format!(
                "`{shown}` is a directory, not a file. Nothing was changed."
            )))
        }
        Ok((_, st)) if !fsat::is_file(&st) => {
            return Err(ToolError::Failed(format!(
                "`{shown}` is not a regular file (device, socket or pipe). Nothing was changed."
            )))
        }
        Ok((mut file, st)) => {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut file, &mut bytes)
                .map_err(|e| ToolError::io(format!("cannot read {shown}"), e))?;
            guard.check(&target.abs, &shown, Some(&bytes))?;
            (Some(bytes), Some(fsat::permissions(&st)))
        }
        Err(e) if e.is_not_found() => {
            guard.check(&target.abs, &shown, None)?;
            (None, None)
        }
        Err(e) => return Err(e.into_tool(format!("cannot read {shown}"))),
    };
    files.insert(
        target.abs.clone(),
        VFile {
            shown,
            current: original.clone(),
            original,
            original_mode: mode,
            mode: None,
            moved_from: None,
        },
    );
    order.push(target.abs.clone());
    Ok(target.abs)
}

/// Writes every change; if one fails, restores those already written and reports the failure.
pub(crate) fn commit(fs: &dyn CommitFs, changes: &[Change]) -> Result<(), ToolError> {
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        if c.after.is_some() && c.before.is_none() {
            created_dirs.extend(missing_ancestors(&c.abs));
        }
        let result = match &c.after {
            Some(bytes) => fs.write(&c.abs, bytes, c.after_mode.clone()),
            None => fs.remove(&c.abs),
        };
        if let Err(e) = result {
            let restore_errors = rollback(fs, &changes[..i], &created_dirs);
            let mut msg = format!(
                "writing `{}` failed ({e}); the {} file(s) already written were restored, so \
                 nothing was changed.",
                c.shown, i
            );
            if !restore_errors.is_empty() {
                msg = format!(
                    "writing `{}` failed ({e}), and restoring the files already written failed \
                     too: {}. Check these files.",
                    c.shown,
                    restore_errors.join("; ")
                );
            }
            return Err(ToolError::Failed(msg));
        }
    }
    Ok(())
}

fn rollback(fs: &dyn CommitFs, done: &[Change], created_dirs: &[PathBuf]) -> Vec<String> {
    let mut errors = Vec::new();
    for c in done.iter().rev() {
        let r = match &c.before {
            Some(bytes) => fs.write(&c.abs, bytes, c.before_mode.clone()),
            None => fs.remove(&c.abs),
        };
        if let Err(e) = r {
            errors.push(format!("{}: {e}", c.shown));
        }
    }
    for d in created_dirs.iter().rev() {
        let _ = fsat::remove_dir(d);
    }
    errors
}

/// Ancestors of `path` that do not exist yet, outermost first.
fn missing_ancestors(path: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|p| !p.as_os_str().is_empty() && matches!(fsat::lstat(p), Ok(None)))
        .map(Path::to_path_buf)
        .collect();
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::cell::Cell;

    /// Fails the n-th operation (0-based), passing the others to the real file system.
    struct FailNth {
        n: usize,
        seen: Cell<usize>,
    }

    impl CommitFs for FailNth {
        fn write(&self, p: &Path, b: &[u8], m: Option<Permissions>) -> Result<(), ToolError> {
            let i = self.seen.get();
            self.seen.set(i + 1);
            if i == self.n {
                return Err(ToolError::Failed("disk full (injected)".into()));
            }
            RealFs.write(p, b, m)
        }
        fn remove(&self, p: &Path) -> Result<(), ToolError> {
            let i = self.seen.get();
            self.seen.set(i + 1);
            if i == self.n {
                return Err(ToolError::Failed("injected".into()));
            }
            RealFs.remove(p)
        }
    }

    fn change(abs: PathBuf, before: Option<&str>, after: Option<&str>) -> Change {
        Change {
            shown: abs.file_name().unwrap().to_string_lossy().into_owned(),
            abs,
            before: before.map(|s| s.as_bytes().to_vec()),
            after: after.map(|s| s.as_bytes().to_vec()),
            before_mode: None,
            after_mode: None,
            moved_from: None,
        }
    }

    #[test]
    fn a_failed_write_restores_everything_already_written() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.txt");
        let b = d.path().join("b.txt");
        let gone = d.path().join("gone.txt");
        std::fs::write(&a, "old a").unwrap();
        std::fs::write(&gone, "keep me").unwrap();
        let changes = vec![
            change(a.clone(), Some("old a"), Some("new a")),
            change(d.path().join("sub/new.txt"), None, Some("new")),
            change(gone.clone(), Some("keep me"), None),
            change(b.clone(), None, Some("b")),
        ];
        let fs = FailNth {
            n: 3,
            seen: Cell::new(0),
        };
        let e = commit(&fs, &changes).unwrap_err().to_string();
        assert!(e.contains("injected") && e.contains("restored"), "{e}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(std::fs::read_to_string(&gone).unwrap(), "keep me");
        assert!(!d.path().join("sub").exists());
        assert!(!b.exists());
    }
}
