//! Space kept in reserve in the state dir, so the end of a turn can still
//! be recorded when the disk is full: one file of incompressible bytes (zeros would be
//! compressed or left sparse by some file systems), shared by every session and process of
//! the state dir, sized to twice the biggest checkpoint saved (capped). When a save of a turn
//! failed, that turn's final flush claims it (an atomic rename: one process wins), deletes it
//! and writes the turn's record into the room it made; the next successful save re-creates
//! it.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File name of the reserve inside the state dir.
pub const RESERVE_FILE: &str = ".space-reserve";

/// Granularity (and minimum) of the reserve: room for the event log lines of a turn's end.
const STEP: u64 = 1 << 20;

/// The most kept in reserve: a checkpoint bigger than half of it may not fit.
const CAP: u64 = 64 << 20;

/// The reserve of one state dir.
#[derive(Debug)]
pub struct Reserve {
    path: PathBuf,
    /// Serialises this process's growing and releasing.
    busy: Mutex<()>,
}

impl Reserve {
    /// The reserve of `state_dir` (nothing is written until [`Reserve::ensure`]).
    pub fn new(state_dir: &Path) -> Self {
        Reserve {
            path: state_dir.join(RESERVE_FILE),
            busy: Mutex::new(()),
        }
    }

    /// Bytes to keep for a checkpoint of `state_len` bytes: the new copy written beside the
    /// old one (with room for the turn's growth: twice its size, in whole steps) plus one
    /// step for the event log; at most 64 MiB.
    pub fn wanted(state_len: u64) -> u64 {
        state_len
            .saturating_mul(2)
            .div_ceil(STEP)
            .saturating_mul(STEP)
            .saturating_add(STEP)
            .min(CAP)
    }

    /// Grows the file to [`Reserve::wanted`]`(state_len)` bytes (never shrinks it); an error
    /// when the disk has no room (what was written stays reserved).
    pub fn ensure(&self, state_len: u64) -> io::Result<()> {
        let want = Self::wanted(state_len);
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        // Looked at each time: another process may have used it.
        let have = match fs::metadata(&self.path) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e),
        };
        if have >= want {
            return Ok(());
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        let mut rng = Noise::seeded(have ^ u64::from(std::process::id()));
        let mut buf = vec![0u8; 64 * 1024];
        let mut left = want - have;
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            rng.fill(&mut buf[..n]);
            file.write_all(&buf[..n])?;
            left -= n as u64;
        }
        Ok(())
    }

    /// Claims the reserve (one process wins) and deletes it to make room; the bytes freed
    /// (0 when another process took it first or there was none).
    pub fn release(&self) -> u64 {
        let _busy = self.busy.lock().unwrap_or_else(|e| e.into_inner());
        let mut name = self.path.as_os_str().to_os_string();
        name.push(format!(".{}.claimed", std::process::id()));
        let claimed = PathBuf::from(name);
        if fs::rename(&self.path, &claimed).is_err() {
            return 0;
        }
        let held = fs::metadata(&claimed).map(|m| m.len()).unwrap_or(0);
        match fs::remove_file(&claimed) {
            Ok(()) => held,
            Err(e) => {
                tracing::warn!(error = %e, path = %claimed.display(), "could not release the space reserve");
                0
            }
        }
    }
}

/// xorshift64*: cheap bytes no file system can compress away.
struct Noise(u64);

impl Noise {
    fn seeded(seed: u64) -> Self {
        Noise(seed | 1)
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_reserve_grows_with_the_checkpoint_and_is_released_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let r = Reserve::new(tmp.path());
        r.ensure(10).unwrap();
        let file = tmp.path().join(RESERVE_FILE);
        assert_eq!(fs::metadata(&file).unwrap().len(), 2 * STEP);
        r.ensure(STEP).unwrap();
        assert_eq!(fs::metadata(&file).unwrap().len(), 3 * STEP);
        // Never shrinks.
        r.ensure(0).unwrap();
        assert_eq!(fs::metadata(&file).unwrap().len(), 3 * STEP);
        assert_eq!(r.release(), 3 * STEP);
        assert!(!file.exists());
        assert_eq!(r.release(), 0, "nothing left to claim");
        assert_eq!(Reserve::wanted(1 << 40), CAP);
        // Incompressible: not a run of one byte.
        r.ensure(0).unwrap();
        let bytes = fs::read(&file).unwrap();
        assert!(bytes.windows(2).filter(|w| w[0] == w[1]).count() < bytes.len() / 64);
    }
}
