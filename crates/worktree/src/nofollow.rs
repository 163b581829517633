//! Reading and writing below a root folder (a worktree, the user's folder) without following
//! links: the root is opened once, then every folder on the way is opened relative to the one
//! before with `O_NOFOLLOW` (and made with `mkdirat` when missing), and the file is read,
//! written (temp file, `renameat`) or removed relative to its folder, as the file tools'
//! `fsat` does. A link anywhere on the way is refused and named, never followed.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{self, AtFlags, OFlag};
use nix::sys::stat::{self, FileStat, Mode, SFlag};
use nix::unistd::{self, UnlinkatFlags};

/// Why a no-follow operation failed.
#[derive(Debug, thiserror::Error)]
pub enum NoFollowError {
    /// `path` (relative to the root) is a link, or a file where a folder was needed.
    #[error("{0} is a link (or not a folder): not followed")]
    Link(String),
    /// The relative path climbs out (`..`) or is absolute.
    #[error("{0} is not a plain path below the folder")]
    Outside(String),
    /// Any other I/O failure.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What a file is: its bytes and unix permission bits, or a link's target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A regular file.
    File {
        /// Its bytes.
        bytes: Vec<u8>,
        /// Its permission bits (`0o644`, `0o600`, …).
        perms: u32,
    },
    /// A symbolic link (its target, not followed).
    Link(PathBuf),
}

fn errno(e: Errno) -> NoFollowError {
    NoFollowError::Io(std::io::Error::from(e))
}

fn names(rel: &Path) -> Result<Vec<&OsStr>, NoFollowError> {
    let mut out = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            _ => return Err(NoFollowError::Outside(rel.display().to_string())),
        }
    }
    if out.is_empty() {
        return Err(NoFollowError::Outside(rel.display().to_string()));
    }
    Ok(out)
}

const DIR: OFlag = OFlag::O_RDONLY
    .union(OFlag::O_DIRECTORY)
    .union(OFlag::O_NOFOLLOW)
    .union(OFlag::O_CLOEXEC);

/// The folder of `rel`'s last name below `root` (made when missing if `create`), and that name.
fn parent(root: &Path, rel: &Path, create: bool) -> Result<(OwnedFd, OsString), NoFollowError> {
    let parts = names(rel)?;
    let mut dir = fcntl::open(root, DIR, Mode::empty()).map_err(errno)?;
    let mut walked = PathBuf::new();
    let (last, folders) = match parts.split_last() {
        Some(x) => x,
        None => return Err(NoFollowError::Outside(rel.display().to_string())),
    };
    for name in folders {
        walked.push(name);
        let next = match fcntl::openat(&dir, *name, DIR, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) if create => {
                match stat::mkdirat(&dir, *name, Mode::from_bits_truncate(0o755)) {
                    Ok(()) | Err(Errno::EEXIST) => {}
                    Err(e) => return Err(errno(e)),
                }
                fcntl::openat(&dir, *name, DIR, Mode::empty()).map_err(|e| match e {
                    Errno::ELOOP | Errno::ENOTDIR => {
                        NoFollowError::Link(walked.display().to_string())
                    }
                    e => errno(e),
                })?
            }
            Err(Errno::ELOOP | Errno::ENOTDIR) => {
                return Err(NoFollowError::Link(walked.display().to_string()))
            }
            Err(e) => return Err(errno(e)),
        };
        dir = next;
    }
    Ok((dir, last.to_os_string()))
}

fn kind(st: &FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

/// What `rel` below `root` is, links not followed: `None` when it (or a folder on the way)
/// is missing or is not a file or a link.
pub fn read(root: &Path, rel: &Path) -> Result<Option<Content>, NoFollowError> {
    let (dir, name) = match parent(root, rel, false) {
        Ok(x) => x,
        Err(NoFollowError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let st = match stat::fstatat(&dir, name.as_os_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        Err(Errno::ENOENT) => return Ok(None),
        Err(e) => return Err(errno(e)),
    };
    match kind(&st) {
        SFlag::S_IFLNK => {
            let target = fcntl::readlinkat(&dir, name.as_os_str()).map_err(errno)?;
            Ok(Some(Content::Link(PathBuf::from(target))))
        }
        SFlag::S_IFREG => {
            let fd = fcntl::openat(
                &dir,
                name.as_os_str(),
                OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK,
                Mode::empty(),
            )
            .map_err(errno)?;
            let mut bytes = Vec::new();
            File::from(fd).read_to_end(&mut bytes)?;
            #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
            let perms = u32::from(st.st_mode) & 0o7777;
            Ok(Some(Content::File { bytes, perms }))
        }
        _ => Ok(None),
    }
}

/// Writes `content` at `rel` below `root` (folders made as needed, a file or link there
/// replaced, never followed): a temp file beside it, then a rename.
pub fn write(root: &Path, rel: &Path, content: &Content) -> Result<(), NoFollowError> {
    let (dir, name) = parent(root, rel, true)?;
    let mut tmp = OsString::from(".");
    tmp.push(&name);
    tmp.push(".cairn-tmp");
    let _ = unistd::unlinkat(&dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
    match content {
        Content::Link(target) => {
            unistd::symlinkat(target.as_path(), &dir, tmp.as_os_str()).map_err(errno)?
        }
        Content::File { bytes, perms } => {
            let fd = fcntl::openat(
                &dir,
                tmp.as_os_str(),
                OFlag::O_WRONLY
                    | OFlag::O_CREAT
                    | OFlag::O_EXCL
                    | OFlag::O_NOFOLLOW
                    | OFlag::O_CLOEXEC,
                Mode::from_bits_truncate(0o600),
            )
            .map_err(errno)?;
            let mut f = File::from(fd);
            let written = f
                .write_all(bytes)
                .and_then(|()| {
                    use std::os::unix::fs::PermissionsExt;
                    f.set_permissions(std::fs::Permissions::from_mode(*perms))
                })
                .and_then(|()| f.sync_all());
            if let Err(e) = written {
                let _ = unistd::unlinkat(&dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
                return Err(e.into());
            }
        }
    }
    if let Err(e) = fcntl::renameat(&dir, tmp.as_os_str(), &dir, name.as_os_str()) {
        let _ = unistd::unlinkat(&dir, tmp.as_os_str(), UnlinkatFlags::NoRemoveDir);
        return Err(errno(e));
    }
    Ok(())
}

/// Makes the folder `rel` below `root` (and the ones on the way), links refused.
pub fn make_dir(root: &Path, rel: &Path) -> Result<(), NoFollowError> {
    let mut with_child = rel.to_path_buf();
    with_child.push("x");
    let (dir, _) = parent(root, &with_child, true)?;
    drop(dir);
    Ok(())
}

/// Removes the file or link `rel` below `root` (nothing when it is missing), links on the way
/// refused.
pub fn remove(root: &Path, rel: &Path) -> Result<(), NoFollowError> {
    let (dir, name) = match parent(root, rel, false) {
        Ok(x) => x,
        Err(NoFollowError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    match unistd::unlinkat(&dir, name.as_os_str(), UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(e) => Err(errno(e)),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn links_on_the_way_are_refused_and_files_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        let c = Content::File {
            bytes: b"secret\n".to_vec(),
            perms: 0o600,
        };
        let err = write(&root, Path::new("link/a.env"), &c).unwrap_err();
        assert!(
            matches!(err, NoFollowError::Link(ref p) if p == "link"),
            "{err}"
        );
        assert!(!outside.join("a.env").exists());
        assert!(matches!(
            read(&root, Path::new("link/x")),
            Err(NoFollowError::Link(_))
        ));
        write(&root, Path::new("d/e/a.env"), &c).unwrap();
        assert_eq!(read(&root, Path::new("d/e/a.env")).unwrap(), Some(c));
        let l = Content::Link(PathBuf::from("../x"));
        write(&root, Path::new("d/l"), &l).unwrap();
        assert_eq!(read(&root, Path::new("d/l")).unwrap(), Some(l));
        assert!(matches!(
            write(&root, Path::new("../x"), &Content::Link("y".into())),
            Err(NoFollowError::Outside(_))
        ));
        remove(&root, Path::new("d/l")).unwrap();
        assert_eq!(read(&root, Path::new("d/l")).unwrap(), None);
    }
}
