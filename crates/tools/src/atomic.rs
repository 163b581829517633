//! Atomic file replacement: a temp file in the same directory, then `rename`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cairn_engine::ToolError;

/// Writes `bytes` to `path` atomically, creating parent directories and keeping the
/// permissions of an existing file. Returns whether the file existed before.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<bool, ToolError> {
    write_atomic_mode(path, bytes, None)
}

/// Like [`write_atomic`], with explicit permissions (`None`: keep the existing file's).
pub(crate) fn write_atomic_mode(
    path: &Path,
    bytes: &[u8],
    mode: Option<std::fs::Permissions>,
) -> Result<bool, ToolError> {
    let parent = path.parent().ok_or_else(|| {
        ToolError::Failed(format!("`{}` has no parent directory", path.display()))
    })?;
    std::fs::create_dir_all(parent)
        .map_err(|e| ToolError::io(format!("cannot create directory {}", parent.display()), e))?;
    let existing = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(ToolError::Failed(format!(
                "`{}` is a directory, not a file",
                path.display()
            )))
        }
        Ok(m) if m.permissions().readonly() => {
            return Err(ToolError::Failed(format!(
                "`{}` is read-only (no write permission for anyone): make it writable first if \
                 it is meant to change",
                path.display()
            )))
        }
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(ToolError::io(format!("cannot stat {}", path.display()), e)),
    };
    let ctx = |what: &str| format!("cannot {what} {}", path.display());
    let (tmp_path, mut file) =
        create_temp_beside(path).map_err(|e| ToolError::io(ctx("create a temp file for"), e))?;
    let result = (|| {
        file.write_all(bytes)?;
        let perms = existing.as_ref().map(|m| m.permissions());
        if let Some(perms) = mode.as_ref().or(perms.as_ref()) {
            file.set_permissions(perms.clone())?;
        }
        // Keep the owner and group (a failure, e.g. not allowed to give the file away, leaves
        // the process's own).
        if let Some(m) = &existing {
            use std::os::unix::fs::MetadataExt;
            let _ = std::os::unix::fs::fchown(&file, Some(m.uid()), Some(m.gid()));
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&tmp_path, path)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp_path);
        return Err(ToolError::io(ctx("write"), e));
    }
    Ok(existing.is_some())
}

/// Creates a fresh temp file next to `path` (mode 0o666 minus the umask, like `File::create`).
fn create_temp_beside(path: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut last_err = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = path.with_file_name(format!(".{name}.cairn-tmp-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| std::io::Error::other("no free temp file name")))
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
