//! Writes many new objects as packfiles instead of one loose file each (a first snapshot of a
//! big tree would otherwise create hundreds of thousands of small files in the store). Each
//! pack (about 64 MiB compressed) and its version-2 index are written directly: the objects'
//! ids, CRCs and offsets are known as they are added, so nothing is decompressed or hashed a
//! second time. An object appears at most once per pack; the `.idx` is renamed into place
//! last, so readers never see a pack without its index.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::{Compress, Compression, Crc, FlushCompress, Status};
use git2::{ObjectType, Oid};
use sha1::{Digest, Sha1};

use crate::error::{io, Result, VcsError};

/// Files bigger than this are not read into memory for a pack (stored loose, streamed).
pub(crate) const PACK_MAX_FILE: u64 = 8 * 1024 * 1024;
/// A pack is finished once this many bytes were written to it.
const PACK_BYTES: u64 = 64 << 20;
/// Compressed bytes are appended to the pack file in pieces of about this size.
const FLUSH_AT: usize = 1 << 20;

/// The git id of an object (SHA-1 of `<kind> <len>\0<data>`), without libgit2's slower
/// collision-detecting hash (the content is the user's own files, not adversarial input).
pub(crate) fn object_id(kind: ObjectType, data: &[u8]) -> Result<Oid> {
    let mut h = Sha1::new();
    h.update(kind.str().as_bytes());
    h.update(b" ");
    h.update(data.len().to_string().as_bytes());
    h.update([0u8]);
    h.update(data);
    Ok(Oid::from_bytes(&h.finalize())?)
}

/// One object's entry in the pack index.
struct Entry {
    id: [u8; 20],
    crc: u32,
    offset: u32,
}

/// Writes objects into packs of the store, streaming each pack's data to its temp file as
/// objects are added (so the disk writes overlap the hashing), until it reaches
/// [`PACK_BYTES`]; then it is finished and a new one begun.
pub(crate) struct PackBatch {
    dir: PathBuf,
    /// The pack being written: its temp file and bytes written to it.
    file: Option<(PathBuf, File)>,
    written: u64,
    /// Compressed objects not yet written to the file.
    bytes: Vec<u8>,
    entries: Vec<Entry>,
    seen: HashSet<Oid>,
    z: Compress,
    /// Where one object is compressed (initialised once, so no backend zeroes it again).
    zbuf: Vec<u8>,
}

fn type_code(kind: ObjectType) -> u8 {
    match kind {
        ObjectType::Commit => 1,
        ObjectType::Tree => 2,
        ObjectType::Tag => 4,
        _ => 3,
    }
}

fn compress_error(e: flate2::CompressError) -> VcsError {
    VcsError::Io {
        context: "compressing an object".into(),
        source: std::io::Error::other(e),
    }
}

fn compress_error_msg(msg: &str) -> VcsError {
    VcsError::Io {
        context: "compressing an object".into(),
        source: std::io::Error::other(msg.to_string()),
    }
}

/// The 12-byte pack header for `count` objects.
fn header(count: u32) -> [u8; 12] {
    let mut h = [0u8; 12];
    h[..4].copy_from_slice(b"PACK");
    h[4..8].copy_from_slice(&2u32.to_be_bytes());
    h[8..].copy_from_slice(&count.to_be_bytes());
    h
}

impl PackBatch {
    /// A batch writing packs into the store at `repo_dir`.
    pub fn new(repo_dir: &Path) -> PackBatch {
        PackBatch {
            dir: repo_dir.join("objects").join("pack"),
            file: None,
            written: 0,
            bytes: Vec::new(),
            entries: Vec::new(),
            seen: HashSet::new(),
            z: Compress::new(Compression::fast(), true),
            zbuf: Vec::new(),
        }
    }

    /// Whether this batch (or a pack it already wrote) holds `id`.
    pub fn has(&self, id: &Oid) -> bool {
        self.seen.contains(id)
    }

    /// Adds an object (`id` must be its id) unless already added.
    pub fn add(&mut self, kind: ObjectType, id: Oid, data: &[u8]) -> Result<()> {
        if !self.seen.insert(id) {
            return Ok(());
        }
        let start = self.bytes.len();
        // Below 2 GiB (no 64-bit offsets needed): a pack is finished at `PACK_BYTES` and
        // one object is at most a compressed `PACK_MAX_FILE`.
        let offset = 12 + self.written + start as u64;
        self.push_object(kind, data)?;
        let mut crc = Crc::new();
        crc.update(&self.bytes[start..]);
        let mut raw = [0u8; 20];
        raw.copy_from_slice(id.as_bytes());
        self.entries.push(Entry {
            id: raw,
            crc: crc.sum(),
            offset: offset as u32,
        });
        if self.bytes.len() >= FLUSH_AT {
            self.flush()?;
            if self.written >= PACK_BYTES {
                self.write()?;
            }
        }
        Ok(())
    }

    /// Appends the pack entry header (type and size) and the zlib stream of `data`.
    fn push_object(&mut self, kind: ObjectType, data: &[u8]) -> Result<()> {
        let mut size = data.len() as u64;
        let mut c = (type_code(kind) << 4) | (size & 0x0f) as u8;
        size >>= 4;
        while size != 0 {
            self.bytes.push(c | 0x80);
            c = (size & 0x7f) as u8;
            size >>= 7;
        }
        self.bytes.push(c);
        self.z.reset();
        let need = data.len() + data.len() / 8 + 64;
        if self.zbuf.len() < need {
            self.zbuf.resize(need, 0);
        }
        loop {
            let (was_in, was_out) = (self.z.total_in(), self.z.total_out());
            let rest = data.get(was_in as usize..).unwrap_or_default();
            let status = self
                .z
                .compress(rest, &mut self.zbuf, FlushCompress::Finish)
                .map_err(compress_error)?;
            let written = (self.z.total_out() - was_out) as usize;
            self.bytes
                .extend_from_slice(self.zbuf.get(..written).unwrap_or_default());
            match status {
                Status::StreamEnd => return Ok(()),
                _ if written == 0 && self.z.total_in() == was_in => {
                    return Err(compress_error_msg("the compressor made no progress"));
                }
                _ => {}
            }
        }
    }

    /// Appends the waiting bytes to the pack's temp file (made, with a provisional header,
    /// on first use).
    fn flush(&mut self) -> Result<()> {
        if self.file.is_none() {
            fs::create_dir_all(&self.dir)
                .map_err(io(format!("creating {}", self.dir.display())))?;
            let (path, mut f) = temp_file(&self.dir, "pack")?;
            f.write_all(&header(0))
                .map_err(io(format!("writing {}", path.display())))?;
            self.file = Some((path, f));
        }
        if let Some((path, f)) = self.file.as_mut() {
            f.write_all(&self.bytes)
                .map_err(io(format!("writing {}", path.display())))?;
        }
        self.written += self.bytes.len() as u64;
        self.bytes.clear();
        Ok(())
    }

    /// Finishes the pack being written and places it with its index (nothing when empty).
    pub fn write(&mut self) -> Result<()> {
        if self.entries.is_empty() {
            return Ok(());
        }
        let started = std::time::Instant::now();
        let count = self.entries.len() as u32;
        self.flush()?;
        let Some((tmp_pack, mut f)) = self.file.take() else {
            return Ok(());
        };
        let written = self.written;
        self.written = 0;
        let placed = self
            .seal(&mut f, &tmp_pack, count)
            .and_then(|digest| self.place(&tmp_pack, &digest));
        if placed.is_err() {
            let _ = fs::remove_file(&tmp_pack);
        }
        self.entries.clear();
        placed?;
        tracing::debug!(
            objects = count,
            bytes = written,
            ms = started.elapsed().as_millis() as u64,
            "wrote a snapshot pack"
        );
        Ok(())
    }

    /// Writes the real header and the trailing checksum (read back from the file: the
    /// header, first in the checksum, is only known now); returns the checksum.
    fn seal(&self, f: &mut File, path: &Path, count: u32) -> Result<[u8; 20]> {
        let err = || io(format!("writing {}", path.display()));
        f.write_all_at(&header(count), 0).map_err(err())?;
        let mut sha = Sha1::new();
        let mut buf = vec![0u8; FLUSH_AT];
        let mut at = 0u64;
        loop {
            let n = f.read_at(&mut buf, at).map_err(err())?;
            if n == 0 {
                break;
            }
            sha.update(&buf[..n]);
            at += n as u64;
        }
        let digest: [u8; 20] = sha.finalize().into();
        f.seek(SeekFrom::End(0)).map_err(err())?;
        f.write_all(&digest).map_err(err())?;
        Ok(digest)
    }

    /// Writes the index and renames both files into place, the index last.
    fn place(&mut self, tmp_pack: &Path, digest: &[u8; 20]) -> Result<()> {
        let name = Oid::from_bytes(digest)?.to_string();
        let idx = self.index_bytes(digest);
        let pack_path = self.dir.join(format!("pack-{name}.pack"));
        let idx_path = self.dir.join(format!("pack-{name}.idx"));
        let (tmp_idx, mut f) = temp_file(&self.dir, "idx")?;
        let r = f
            .write_all(&idx)
            .map_err(io(format!("writing {}", tmp_idx.display())))
            .and_then(|_| {
                fs::rename(tmp_pack, &pack_path)
                    .map_err(io(format!("placing {}", pack_path.display())))
            })
            .and_then(|_| {
                fs::rename(&tmp_idx, &idx_path)
                    .map_err(io(format!("placing {}", idx_path.display())))
            });
        if r.is_err() {
            let _ = fs::remove_file(&tmp_idx);
        }
        r
    }

    /// The version-2 pack index of the waiting objects.
    fn index_bytes(&mut self, pack_digest: &[u8; 20]) -> Vec<u8> {
        self.entries.sort_unstable_by_key(|e| e.id);
        let n = self.entries.len();
        let mut out = Vec::with_capacity(8 + 256 * 4 + n * 28 + 40);
        out.extend_from_slice(&[0xff, b't', b'O', b'c']);
        out.extend_from_slice(&2u32.to_be_bytes());
        let mut fanout = [0u32; 256];
        for e in &self.entries {
            fanout[e.id[0] as usize] += 1;
        }
        let mut total = 0u32;
        for f in fanout {
            total += f;
            out.extend_from_slice(&total.to_be_bytes());
        }
        for e in &self.entries {
            out.extend_from_slice(&e.id);
        }
        for e in &self.entries {
            out.extend_from_slice(&e.crc.to_be_bytes());
        }
        for e in &self.entries {
            out.extend_from_slice(&e.offset.to_be_bytes());
        }
        out.extend_from_slice(pack_digest);
        let digest: [u8; 20] = Sha1::digest(&out).into();
        out.extend_from_slice(&digest);
        out
    }
}

impl Drop for PackBatch {
    /// A pack left unfinished (an error stopped its writer) is removed.
    fn drop(&mut self) {
        if let Some((path, _)) = self.file.take() {
            let _ = fs::remove_file(path);
        }
    }
}

/// A new read-only temp file in `dir` (git's `tmp_<kind>_` prefix), open for writing and
/// reading back.
fn temp_file(dir: &Path, kind: &str) -> Result<(PathBuf, File)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("tmp_{kind}_cairn_{}_{seq}", std::process::id()));
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o444)
        .open(&path)
        .map_err(io(format!("creating {}", path.display())))?;
    Ok((path, f))
}
