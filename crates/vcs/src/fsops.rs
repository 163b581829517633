//! The side effects of a restore on the work tree, behind a trait so tests can inject a crash.

use std::fs;
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes restored content into the work tree.
pub trait TreeWriter: Send + Sync {
    /// Replaces `path` with a regular file (atomically: temp file + rename). Not fsynced one
    /// by one: the restore journal (fsynced first) lets an interrupted restore be redone.
    fn write_file(&self, path: &Path, data: &[u8], executable: bool) -> io::Result<()>;
    /// Replaces `path` with a symlink to `target`.
    fn write_symlink(&self, path: &Path, target: &[u8]) -> io::Result<()>;
    /// Removes a file or symlink.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Creates a folder and its parents.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// Removes an empty folder.
    fn remove_dir(&self, path: &Path) -> io::Result<()>;
}

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct FsWriter;

/// The temp file a restore writes before renaming it over `path`.
pub(crate) fn temp_path(path: &Path) -> std::path::PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.cairn-restore"))
}

impl TreeWriter for FsWriter {
    fn write_file(&self, path: &Path, data: &[u8], executable: bool) -> io::Result<()> {
        let tmp = temp_path(path);
        let written = fs::File::create(&tmp).and_then(|mut f| {
            f.write_all(data)?;
            f.set_permissions(fs::Permissions::from_mode(if executable {
                0o755
            } else {
                0o644
            }))
        });
        if let Err(e) = written {
            // A full disk leaves no half-written temp file behind.
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        if let Ok(m) = fs::symlink_metadata(path) {
            if m.is_dir() {
                fs::remove_dir(path)?;
            }
        }
        fs::rename(&tmp, path).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    }

    fn write_symlink(&self, path: &Path, target: &[u8]) -> io::Result<()> {
        match fs::symlink_metadata(path) {
            Ok(m) if m.is_dir() => fs::remove_dir(path)?,
            Ok(_) => fs::remove_file(path)?,
            Err(_) => {}
        }
        std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(target), path)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        match fs::remove_file(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            r => r,
        }
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        fs::create_dir_all(path)
    }

    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        fs::remove_dir(path)
    }
}
