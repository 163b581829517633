//! Writes many new blobs as packfiles instead of one loose file each (a first snapshot of a
//! big tree would otherwise create hundreds of thousands of small files in the store). Each
//! pack (up to 64 MiB compressed) is streamed through libgit2's pack writer, which indexes and
//! verifies it; an object appears at most once per pack.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use git2::{ObjectType, Odb, OdbLookupFlags, OdbPackwriter, Oid};
use sha1::{Digest, Sha1};

use crate::cache::MODE_LINK;
use crate::error::{io, Result};
use crate::walk::rel_path;

/// Files bigger than this are not read into memory for a pack (stored loose, streamed).
pub(crate) const PACK_MAX_FILE: u64 = 8 * 1024 * 1024;
const FLUSH_AT: usize = 1 << 20;
/// A pack is written once this many compressed bytes are waiting.
const BATCH_BYTES: usize = 64 << 20;

/// What reading an entry gave.
enum Read {
    Data(Vec<u8>),
    Gone,
    TooBig,
}

fn read_entry(root: &Path, rel: &[u8], mode: u32) -> Read {
    let abs = root.join(rel_path(rel));
    if mode == MODE_LINK {
        return match std::fs::read_link(&abs) {
            Ok(t) => Read::Data(t.as_os_str().as_bytes().to_vec()),
            Err(_) => Read::Gone,
        };
    }
    match std::fs::symlink_metadata(&abs) {
        Ok(m) if m.is_file() && m.len() > PACK_MAX_FILE => Read::TooBig,
        Ok(m) if m.is_file() => std::fs::read(&abs).map(Read::Data).unwrap_or(Read::Gone),
        _ => Read::Gone,
    }
}

/// Compressed objects waiting to be written as one pack.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    count: u32,
}

impl Batch {
    fn add(&mut self, data: &[u8]) -> Result<()> {
        let mut size = data.len() as u64;
        let mut c = (3u8 << 4) | (size & 0x0f) as u8;
        size >>= 4;
        while size != 0 {
            self.bytes.push(c | 0x80);
            c = (size & 0x7f) as u8;
            size >>= 7;
        }
        self.bytes.push(c);
        let mut z = ZlibEncoder::new(&mut self.bytes, Compression::fast());
        z.write_all(data).map_err(io("compressing a blob"))?;
        z.finish().map_err(io("compressing a blob"))?;
        self.count += 1;
        Ok(())
    }

    /// Streams the batch as a pack through libgit2's pack writer (which indexes it).
    fn write(&mut self, odb: &Odb<'_>) -> Result<()> {
        if self.count == 0 {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let mut header = Vec::with_capacity(12);
        header.extend_from_slice(b"PACK");
        header.extend_from_slice(&2u32.to_be_bytes());
        header.extend_from_slice(&self.count.to_be_bytes());
        let mut sha = Sha1::new();
        sha.update(&header);
        sha.update(&self.bytes);
        let digest = sha.finalize();
        let mut w: OdbPackwriter<'_> = odb.packwriter()?;
        for part in [&header[..], &self.bytes[..], &digest[..]] {
            for chunk in part.chunks(FLUSH_AT) {
                w.write_all(chunk).map_err(io("writing a snapshot pack"))?;
            }
        }
        w.commit()?;
        tracing::debug!(
            objects = self.count,
            bytes = self.bytes.len(),
            ms = started.elapsed().as_millis() as u64,
            "wrote a snapshot pack"
        );
        self.bytes.clear();
        self.count = 0;
        Ok(())
    }
}

/// Stores `items` as blobs in new packs (each object once, none the store already has);
/// returns their ids (`None` = vanished or unreadable) and the indices of files too big for a
/// pack, which the caller stores loose.
pub(crate) fn pack_blobs(
    odb: &Odb<'_>,
    root: &Path,
    items: &[(&[u8], u32)],
) -> Result<(Vec<Option<Oid>>, Vec<usize>)> {
    let mut batch = Batch::default();
    let mut seen: HashSet<Oid> = HashSet::new();
    let mut ids = Vec::with_capacity(items.len());
    let mut big = Vec::new();
    for (i, (rel, mode)) in items.iter().enumerate() {
        match read_entry(root, rel, *mode) {
            Read::Data(data) => {
                let id = Oid::hash_object(ObjectType::Blob, &data)?;
                ids.push(Some(id));
                if seen.insert(id) && !odb.exists_ext(id, OdbLookupFlags::NO_REFRESH) {
                    batch.add(&data)?;
                    if batch.bytes.len() >= BATCH_BYTES {
                        batch.write(odb)?;
                    }
                }
            }
            Read::Gone => ids.push(None),
            Read::TooBig => {
                ids.push(None);
                big.push(i);
            }
        }
    }
    batch.write(odb)?;
    Ok((ids, big))
}
