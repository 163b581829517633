//! Writes file contents as blobs into the store, on several threads for big batches.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::{Oid, Repository};

use crate::cache::MODE_LINK;
use crate::error::{Result, VcsError};
use crate::pack::pack_blobs;
use crate::walk::rel_path;

/// Files up to this size are read whole; bigger ones are streamed by libgit2.
const READ_WHOLE: u64 = 8 * 1024 * 1024;
/// Batches smaller than this are hashed on the calling thread.
const PARALLEL_MIN: usize = 256;

/// Stores every `(rel, mode)` under `root` as a blob; `None` for entries that vanished or
/// cannot be read (they are left out of the snapshot). Big batches go into packfiles, one per
/// thread.
pub(crate) fn hash_all(
    repo: &Repository,
    repo_dir: &Path,
    root: &Path,
    items: &[(&[u8], u32)],
) -> Result<Vec<Option<Oid>>> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(4);
    if items.len() < PARALLEL_MIN {
        return items
            .iter()
            .map(|(r, m)| hash_one(repo, root, r, *m))
            .collect();
    }
    let chunk = items.len().div_ceil(threads.max(1));
    let results: Vec<Result<Vec<Option<Oid>>>> = std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || pack_part(repo_dir, root, part)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(VcsError::Io {
                        context: "hashing files".into(),
                        source: std::io::Error::other("a hashing thread panicked"),
                    })
                })
            })
            .collect()
    });
    let mut out = Vec::with_capacity(items.len());
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

fn pack_part(repo_dir: &Path, root: &Path, part: &[(&[u8], u32)]) -> Result<Vec<Option<Oid>>> {
    let repo = Repository::open_bare(repo_dir)?;
    let odb = repo.odb()?;
    let (mut ids, big) = pack_blobs(&odb, root, part)?;
    for i in big {
        let (rel, mode) = part[i];
        ids[i] = hash_one(&repo, root, rel, mode)?;
    }
    Ok(ids)
}

/// Stores one entry as a blob.
pub(crate) fn hash_one(
    repo: &Repository,
    root: &Path,
    rel: &[u8],
    mode: u32,
) -> Result<Option<Oid>> {
    let abs = root.join(rel_path(rel));
    if mode == MODE_LINK {
        return match fs::read_link(&abs) {
            Ok(target) => Ok(Some(repo.blob(target.as_os_str().as_bytes())?)),
            Err(_) => Ok(None),
        };
    }
    let len = match fs::symlink_metadata(&abs) {
        Ok(m) if m.is_file() => m.len(),
        _ => return Ok(None),
    };
    if len <= READ_WHOLE {
        return match fs::read(&abs) {
            Ok(data) => Ok(Some(repo.blob(&data)?)),
            Err(e) => {
                tracing::debug!(path = %abs.display(), error = %e, "cannot read file");
                Ok(None)
            }
        };
    }
    match repo.blob_path(&abs) {
        Ok(id) => Ok(Some(id)),
        Err(e) => match fs::File::open(&abs) {
            Ok(_) => Err(e.into()),
            Err(_) => Ok(None),
        },
    }
}
