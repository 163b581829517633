//! Atomic file replacement: a temp file in the same folder, then `rename`, all through a
//! handle on that folder opened without following links ([`crate::fsat`]).

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cairn_engine::ToolError;
use nix::fcntl::OFlag;

use crate::fsat::{self, AtError, DirHandle};

/// Writes `bytes` to `path` atomically, creating parent directories and keeping the
/// permissions of an existing file. Returns whether the file existed before.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<bool, ToolError> {
    write_atomic_mode(path, bytes, None)
}

/// Like [`write_atomic`], with explicit permissions (`None`: keep the existing file's).
/// `path` is a resolved path (no symbolic link in it): a link found along it now was swapped
/// in after the check, and the write is refused.
pub(crate) fn write_atomic_mode(
    path: &Path,
    bytes: &[u8],
    mode: Option<std::fs::Permissions>,
) -> Result<bool, ToolError> {
    #[cfg(feature = "test-support")]
    crate::testing::run(crate::testing::FsOp::Write, path);
    let parent = path.parent().unwrap_or(path);
    let mut created = Vec::new();
    let (dir, name) = DirHandle::parent_of(path, Some(&mut created))
        .map_err(|e| e.into_tool(format!("cannot create directory {}", parent.display())))?;
    let existing = match dir
        .stat(&name)
        .map_err(|e| e.into_tool(format!("cannot stat {}", path.display())))?
    {
        Some(st) if fsat::is_dir(&st) => {
            return Err(ToolError::Failed(format!(
                "`{}` is a directory, not a file",
                path.display()
            )))
        }
        Some(st) if fsat::is_link(&st) => {
            return Err(AtError::Swapped(path.to_path_buf()).into_tool(""));
        }
        Some(st) if fsat::permissions(&st).readonly() => {
            return Err(ToolError::Failed(format!(
                "`{}` is read-only (no write permission for anyone): make it writable first if \
                 it is meant to change",
                path.display()
            )))
        }
        Some(st) => Some(st),
        None => None,
    };
    let ctx = |what: &str| format!("cannot {what} {}", path.display());
    let (tmp_name, mut file) =
        create_temp_in(&dir, &name).map_err(|e| e.into_tool(ctx("create a temp file for")))?;
    let result = (|| -> Result<(), AtError> {
        file.write_all(bytes)?;
        let perms = existing.as_ref().map(fsat::permissions);
        if let Some(perms) = mode.as_ref().or(perms.as_ref()) {
            file.set_permissions(perms.clone())?;
        }
        // Keep the owner and group (a failure, e.g. not allowed to give the file away, leaves
        // the process's own).
        if let Some(st) = &existing {
            let _ = std::os::unix::fs::fchown(&file, Some(st.st_uid), Some(st.st_gid));
        }
        file.sync_all()?;
        drop(file);
        // The folder still is the one checked (not moved away and replaced meanwhile).
        dir.still_there()?;
        dir.rename(&tmp_name, &name)
    })();
    if let Err(e) = result {
        let _ = dir.unlink(&tmp_name);
        return Err(e.into_tool(ctx("write")));
    }
    Ok(existing.is_some())
}

/// Creates a fresh temp file beside `name` in `dir` (`O_CREAT | O_EXCL`, mode 0o666 minus the
/// umask, like `File::create`).
fn create_temp_in(dir: &DirHandle, name: &OsStr) -> Result<(OsString, std::fs::File), AtError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let shown = name.to_string_lossy();
    let mut last_err = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = OsString::from(format!(".{shown}.cairn-tmp-{}-{n}", std::process::id()));
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL;
        match dir.open_file(&tmp, flags, 0o666) {
            Ok(f) => return Ok((tmp, f)),
            Err(AtError::Io(e)) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                last_err = Some(e)
            }
            Err(e) => return Err(e),
        }
    }
    Err(AtError::Io(last_err.unwrap_or_else(|| {
        std::io::Error::other("no free temp file name")
    })))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn creates_parents_and_reports_creation() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/c.txt");
        assert!(!write_atomic(&p, b"hi").unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"hi");
        assert!(write_atomic(&p, b"again").unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"again");
    }

    #[test]
    fn keeps_existing_permissions_and_leaves_no_temp_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("run.sh");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o751)).unwrap();
        write_atomic(&p, b"new").unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o751);
        let names: Vec<_> = std::fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn refuses_directories() {
        let d = tempfile::tempdir().unwrap();
        assert!(matches!(
            write_atomic(d.path(), b"x"),
            Err(ToolError::Failed(_))
        ));
    }
}
