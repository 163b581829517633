//! File-system operations through directory handles opened without following links.
//!
//! The boundary ([`crate::paths`]) resolves a path argument once, following the symbolic links
//! that exist at that moment, to an absolute path with no link left in it. Every operation
//! here re-opens that path's folder from `/` refusing any link (one `openat2` with
//! `RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH` on Linux ≥ 5.6, an `O_NOFOLLOW` walk one component
//! at a time otherwise or when it fails) and then works relative to the folder handle
//! (`openat`, `mkdirat`, `renameat`, `unlinkat` on single names). A folder swapped for a link
//! after the check therefore makes the operation fail instead of redirecting it outside the
//! workspace or into `.git`; a write checks again, just before its rename, that the folder it
//! holds is still the one at that path.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use cairn_engine::ToolError;
use nix::errno::Errno;
use nix::fcntl::{self, AtFlags, OFlag};
use nix::sys::stat::{self, FileStat, Mode, SFlag};
use nix::unistd::{self, UnlinkatFlags};

/// Why an operation through a folder handle failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AtError {
    /// A component of a resolved path is a symbolic link now (it was not when it was checked).
    #[error(
        "`{0}` changed on disk after the path was checked: it is now a symbolic link, and file \
         tools never follow a link swapped in during a call, so nothing was done there"
    )]
    Swapped(PathBuf),
    /// The folder being written was moved or replaced while the file was written.
    #[error(
        "`{0}` was moved or replaced while the file in it was being written, so nothing was \
         written"
    )]
    Moved(PathBuf),
    /// Any other I/O failure.
    #[error(transparent)]
    Io(#[from] io::Error),
}

impl AtError {
    /// The tool error for this failure; `context` describes an I/O failure ("cannot read x").
    pub(crate) fn into_tool(self, context: impl Into<String>) -> ToolError {
        match self {
            AtError::Io(e) => ToolError::io(context, e),
            other => ToolError::Failed(other.to_string()),
        }
    }

    /// Whether this is a plain "no such file or folder".
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, AtError::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// How folder handles are opened: on Linux `O_PATH`, which needs only search (`x`) permission
/// along the way, like any path lookup; elsewhere for reading.
#[cfg(target_os = "linux")]
const DIR_FLAGS: OFlag = OFlag::O_PATH
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_CLOEXEC);
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_CLOEXEC);

fn io_err(e: Errno) -> AtError {
    AtError::Io(io::Error::from(e))
}

#[cfg(feature = "test-support")]
use crate::testing::FsOp;

/// A folder opened without following links, with the path it was opened at.
#[derive(Debug)]
pub(crate) struct DirHandle {
    fd: OwnedFd,
    path: PathBuf,
    id: (u64, u64),
}

impl DirHandle {
    /// Opens the resolved folder `path` refusing links; with `created`, missing folders are
    /// made (`mkdirat`, like `mkdir -p`) and their paths pushed there, outermost first.
    pub(crate) fn open(path: &Path, created: Option<&mut Vec<PathBuf>>) -> Result<Self, AtError> {
        let fd = match open_beneath(path) {
            Some(fd) => fd,
            None => walk(path, created)?,
        };
        let st = stat::fstat(&fd).map_err(io_err)?;
        Ok(DirHandle {
            fd,
            path: path.to_path_buf(),
            id: file_id(&st),
        })
    }

    /// The folder of the resolved file path `path`, and the file's name in it.
    pub(crate) fn parent_of(
        path: &Path,
        created: Option<&mut Vec<PathBuf>>,
    ) -> Result<(Self, OsString), AtError> {
        let (parent, name) = split(path)?;
        Ok((DirHandle::open(parent, created)?, name.to_os_string()))
    }

    /// Fails unless the folder at this handle's path is still the one it holds.
    pub(crate) fn still_there(&self) -> Result<(), AtError> {
        let again = DirHandle::open(&self.path, None).map_err(|e| match e {
            AtError::Io(_) => AtError::Moved(self.path.clone()),
            other => other,
        })?;
        if again.id == self.id {
            Ok(())
        } else {
            Err(AtError::Moved(self.path.clone()))
        }
    }

    /// What `name` in this folder is (a link is reported as a link); `None` when missing.
    pub(crate) fn stat(&self, name: &OsStr) -> Result<Option<FileStat>, AtError> {
        match stat::fstatat(&self.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(Errno::ENOENT) => Ok(None),
            Err(e) => Err(io_err(e)),
        }
    }

    /// Opens `name` in this folder with `flags` (plus `O_NOFOLLOW | O_CLOEXEC`).
    pub(crate) fn open_file(&self, name: &OsStr, flags: OFlag, mode: u32) -> Result<File, AtError> {
        let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        match fcntl::openat(&self.fd, name, flags, Mode::from_bits_truncate(mode as _)) {
            Ok(fd) => Ok(File::from(fd)),
            Err(e) => Err(self.classify(name, e)),
        }
    }

    /// Renames `from` to `to`, both in this folder (`to` is replaced, never followed).
    pub(crate) fn rename(&self, from: &OsStr, to: &OsStr) -> Result<(), AtError> {
        fcntl::renameat(&self.fd, from, &self.fd, to).map_err(io_err)
    }

    /// Removes the file (or link) `name` from this folder.
    pub(crate) fn unlink(&self, name: &OsStr) -> Result<(), AtError> {
        unistd::unlinkat(&self.fd, name, UnlinkatFlags::NoRemoveDir).map_err(io_err)
    }

    /// Removes the empty folder `name` from this folder.
    pub(crate) fn rmdir(&self, name: &OsStr) -> Result<(), AtError> {
        unistd::unlinkat(&self.fd, name, UnlinkatFlags::RemoveDir).map_err(io_err)
    }

    /// The path of `name` in this folder.
    pub(crate) fn join(&self, name: &OsStr) -> PathBuf {
        self.path.join(name)
    }

    fn classify(&self, name: &OsStr, e: Errno) -> AtError {
        classify(&self.fd, name, &self.join(name), e)
    }
}

/// Whether `st` is a symbolic link.
pub(crate) fn is_link(st: &FileStat) -> bool {
    kind(st) == SFlag::S_IFLNK
}

/// Whether `st` is a folder.
pub(crate) fn is_dir(st: &FileStat) -> bool {
    kind(st) == SFlag::S_IFDIR
}

/// Whether `st` is a regular file.
pub(crate) fn is_file(st: &FileStat) -> bool {
    kind(st) == SFlag::S_IFREG
}

/// The permission bits of `st` as `std` permissions (`st_mode` is narrower than `u32` on
/// some systems).
#[allow(clippy::useless_conversion)]
pub(crate) fn permissions(st: &FileStat) -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(u32::from(st.st_mode) & 0o7777)
}

fn kind(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

#[allow(clippy::unnecessary_cast)]
fn file_id(st: &FileStat) -> (u64, u64) {
    (st.st_dev as u64, st.st_ino as u64)
}

/// What `path` (resolved) is, without following a final link; `None` when it or its folder is
/// missing.
pub(crate) fn lstat(path: &Path) -> Result<Option<FileStat>, AtError> {
    #[cfg(feature = "test-support")]
    crate::testing::run(FsOp::Look, path);
    match DirHandle::parent_of(path, None) {
        Ok((dir, name)) => dir.stat(&name),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Opens the resolved regular file `path` for reading, refusing links anywhere along it.
/// Returns the file and what it is (checked on the open handle: a FIFO never blocks it).
pub(crate) fn open_read(path: &Path) -> Result<(File, FileStat), AtError> {
    #[cfg(feature = "test-support")]
    crate::testing::run(FsOp::Look, path);
    let (dir, name) = DirHandle::parent_of(path, None)?;
    let file = dir.open_file(&name, OFlag::O_RDONLY | OFlag::O_NONBLOCK, 0)?;
    let st = stat::fstat(file.as_fd()).map_err(io_err)?;
    Ok((file, st))
}

/// Reads the regular file at the resolved path `path` (absolute, resolved once by the
/// caller, so no link is left in it) as UTF-8 text, at most `max` bytes: a link anywhere
/// along it — one swapped in since it was resolved — is refused, never followed, and so is
/// anything but a regular file. For reading paths outside the file tools (skills, commands,
/// project configuration files).
pub fn read_text_no_links(path: &Path, max: u64) -> Result<String, ToolError> {
    let bytes = read_bytes_no_links(path, max)?;
    String::from_utf8(bytes)
        .map_err(|_| ToolError::Failed(format!("cannot read {}: not UTF-8 text", path.display())))
}

/// [`read_text_no_links`] as bytes (`@path` mentions tell binary files themselves).
pub fn read_bytes_no_links(path: &Path, max: u64) -> Result<Vec<u8>, ToolError> {
    use std::io::Read;
    let context = || format!("cannot read {}", path.display());
    let (file, st) = open_read(path).map_err(|e| e.into_tool(context()))?;
    if kind(&st) != SFlag::S_IFREG {
        return Err(ToolError::Failed(format!(
            "{} is not a regular file; nothing was read",
            path.display()
        )));
    }
    let mut bytes = Vec::new();
    file.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(context(), e))?;
    Ok(bytes)
}

/// Removes the resolved file `path`, refusing links along it (and a link in its place).
pub(crate) fn remove_file(path: &Path) -> Result<(), AtError> {
    #[cfg(feature = "test-support")]
    crate::testing::run(FsOp::Remove, path);
    let (dir, name) = DirHandle::parent_of(path, None)?;
    if dir.stat(&name)?.is_some_and(|st| is_link(&st)) {
        return Err(AtError::Swapped(path.to_path_buf()));
    }
    dir.unlink(&name)
}

/// Removes the resolved empty folder `path`, refusing links along it.
pub(crate) fn remove_dir(path: &Path) -> Result<(), AtError> {
    #[cfg(feature = "test-support")]
    crate::testing::run(FsOp::Remove, path);
    let (dir, name) = DirHandle::parent_of(path, None)?;
    dir.rmdir(&name)
}

/// Splits an absolute path into its folder and final name.
fn split(path: &Path) -> Result<(&Path, &OsStr), AtError> {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) if path.is_absolute() => Ok((parent, name)),
        _ => Err(AtError::Io(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` is not a file path", path.display()),
        ))),
    }
}

/// One `openat2` from `/` refusing every link; `None` when it is unavailable or fails (the
/// walk then finds and names the reason, or creates what is missing).
#[cfg(target_os = "linux")]
fn open_beneath(path: &Path) -> Option<OwnedFd> {
    use nix::fcntl::{OpenHow, ResolveFlag};
    if path
        .components()
        .any(|c| !matches!(c, Component::RootDir | Component::Normal(_)))
    {
        return None;
    }
    let rel = path.strip_prefix("/").ok()?;
    let root = open_root().ok()?;
    if rel.as_os_str().is_empty() {
        return Some(root);
    }
    let how = OpenHow::new()
        .flags(DIR_FLAGS)
        .resolve(ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_BENEATH);
    fcntl::openat2(&root, rel, how).ok()
}

#[cfg(not(target_os = "linux"))]
fn open_beneath(_path: &Path) -> Option<OwnedFd> {
    None
}

fn open_root() -> Result<OwnedFd, AtError> {
    fcntl::open("/", DIR_FLAGS, Mode::empty()).map_err(io_err)
}

/// Opens `path` one component at a time with `O_NOFOLLOW`, creating missing folders when
/// `created` is given.
fn walk(path: &Path, mut created: Option<&mut Vec<PathBuf>>) -> Result<OwnedFd, AtError> {
    let mut fd = open_root()?;
    let mut at = PathBuf::from("/");
    for c in path.components() {
        let name = match c {
            Component::RootDir => continue,
            Component::Normal(name) => name,
            _ => {
                return Err(AtError::Io(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("`{}` is not a resolved path", path.display()),
                )))
            }
        };
        at.push(name);
        let next = match step(&fd, name) {
            Ok(next) => next,
            Err(Errno::ENOENT) if created.is_some() => {
                match stat::mkdirat(&fd, name, Mode::from_bits_truncate(0o777)) {
                    Ok(()) => {
                        if let Some(list) = created.as_deref_mut() {
                            list.push(at.clone());
                        }
                    }
                    Err(Errno::EEXIST) => {}
                    Err(e) => return Err(io_err(e)),
                }
                step(&fd, name).map_err(|e| classify(&fd, name, &at, e))?
            }
            Err(e) => return Err(classify(&fd, name, &at, e)),
        };
        fd = next;
    }
    Ok(fd)
}

fn step(dir: &OwnedFd, name: &OsStr) -> nix::Result<OwnedFd> {
    fcntl::openat(dir, name, DIR_FLAGS | OFlag::O_NOFOLLOW, Mode::empty())
}

/// A failed open of `name` in `dir`: a link there is a swap, anything else an I/O error.
fn classify(dir: &OwnedFd, name: &OsStr, at: &Path, e: Errno) -> AtError {
    if matches!(
        e,
        Errno::ELOOP | Errno::ENOTDIR | Errno::EMLINK | Errno::ENXIO
    ) {
        if let Ok(st) = stat::fstatat(dir, name, AtFlags::AT_SYMLINK_NOFOLLOW) {
            if is_link(&st) {
                return AtError::Swapped(at.to_path_buf());
            }
        }
    }
    io_err(e)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    fn base() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let p = std::fs::canonicalize(d.path()).unwrap();
        (d, p)
    }

    #[test]
    fn opens_and_creates_folders_without_links() {
        let (_d, p) = base();
        let mut created = Vec::new();
        let dir = DirHandle::open(&p.join("a/b"), Some(&mut created)).unwrap();
        assert_eq!(created, vec![p.join("a"), p.join("a/b")]);
        dir.still_there().unwrap();
        assert!(DirHandle::open(&p.join("a/b"), None).is_ok());
        assert!(DirHandle::open(&p.join("missing"), None)
            .unwrap_err()
            .is_not_found());
    }

    #[test]
    fn a_link_anywhere_along_the_path_is_a_swap() {
        let (_d, p) = base();
        std::fs::create_dir_all(p.join("real/inner")).unwrap();
        symlink(p.join("real"), p.join("link")).unwrap();
        for target in [p.join("link"), p.join("link/inner")] {
            let e = DirHandle::open(&target, None).unwrap_err();
            assert!(
                matches!(&e, AtError::Swapped(at) if *at == p.join("link")),
                "{e:?}"
            );
        }
        let mut created = Vec::new();
        let e = DirHandle::open(&p.join("link/new"), Some(&mut created)).unwrap_err();
        assert!(matches!(e, AtError::Swapped(_)), "{e:?}");
        assert!(created.is_empty() && !p.join("real/new").exists());
        std::fs::write(p.join("real/f"), "x").unwrap();
        symlink(p.join("real/f"), p.join("flink")).unwrap();
        assert!(matches!(
            open_read(&p.join("flink")).unwrap_err(),
            AtError::Swapped(_)
        ));
        assert!(matches!(
            remove_file(&p.join("flink")).unwrap_err(),
            AtError::Swapped(_)
        ));
        assert!(p.join("real/f").exists());
        // The component walk (used where openat2 is unavailable) decides the same way.
        assert!(walk(&p.join("real/inner"), None).is_ok());
        assert!(matches!(
            walk(&p.join("link/inner"), None).unwrap_err(),
            AtError::Swapped(at) if at == p.join("link")
        ));
    }

    #[test]
    fn a_moved_folder_is_noticed_before_the_rename() {
        let (_d, p) = base();
        std::fs::create_dir_all(p.join("d")).unwrap();
        let dir = DirHandle::open(&p.join("d"), None).unwrap();
        std::fs::rename(p.join("d"), p.join("elsewhere")).unwrap();
        std::fs::create_dir_all(p.join("d")).unwrap();
        assert!(matches!(dir.still_there(), Err(AtError::Moved(_))));
    }
}
