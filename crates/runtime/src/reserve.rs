//! Space kept in reserve in a session's folder, so the end of a turn can still be recorded
//! when the disk is full: a file of incompressible bytes (zeros would be compressed or left
//! sparse by some file systems) sized to the session's checkpoint. When a save of the turn
//! failed, the final flush deletes it and writes the turn's record into the room it made.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File name of the reserve inside a session's folder.
pub const RESERVE_FILE: &str = "space-reserve";

/// Granularity (and minimum) of the reserve: room for the event log lines of a turn's end.
const STEP: u64 = 1 << 20;

/// The reserve of one session's folder.
#[derive(Debug)]
pub struct Reserve {
    path: PathBuf,
    /// Bytes known to be in the file (`None` until first looked at).
    size: Mutex<Option<u64>>,
}

impl Reserve {
    /// The reserve in `session_dir` (nothing is written until [`Reserve::ensure`]).
    pub fn new(session_dir: &Path) -> Self {
        Reserve {
            path: session_dir.join(RESERVE_FILE),
            size: Mutex::new(None),
        }
    }

    /// Bytes to keep for a checkpoint of `state_len` bytes: the new copy written beside the
    /// old one (with room for the turn's growth: twice its size) plus one step for the
    /// event log, rounded up to whole steps.
    pub fn wanted(state_len: u64) -> u64 {
        state_len
            .saturating_mul(2)
            .saturating_add(STEP)
            .div_ceil(STEP)
            .saturating_mul(STEP)
    }

    /// Grows the file to [`Reserve::wanted`]`(state_len)` bytes (never shrinks it); an error
    /// when the disk has no room (what was written stays reserved).
    pub fn ensure(&self, state_len: u64) -> io::Result<()> {
        let want = Self::wanted(state_len);
        let mut size = self.size.lock().unwrap_or_else(|e| e.into_inner());
        let have = match *size {
            Some(n) => n,
            None => match fs::metadata(&self.path) {
                Ok(m) => m.len(),
                Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
                Err(e) => return Err(e),
            },
        };
        *size = Some(have);
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
            if let Err(e) = file.write_all(&buf[..n]) {
                *size = file.metadata().ok().map(|m| m.len());
                return Err(e);
            }
            left -= n as u64;
            *size = Some(want - left);
        }
        Ok(())
    }

    /// Deletes the reserve to make room; the bytes it held.
    pub fn release(&self) -> u64 {
        let mut size = self.size.lock().unwrap_or_else(|e| e.into_inner());
        let held = fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0);
        match fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(error = %e, path = %self.path.display(), "could not release the space reserve");
                return 0;
            }
        }
        *size = Some(0);
        held
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
        assert_eq!(fs::metadata(&file).unwrap().len(), STEP);
        r.ensure(STEP).unwrap();
        assert_eq!(fs::metadata(&file).unwrap().len(), 3 * STEP);
        // Never shrinks.
        r.ensure(0).unwrap();
        assert_eq!(fs::metadata(&file).unwrap().len(), 3 * STEP);
        assert_eq!(r.release(), 3 * STEP);
        assert!(!file.exists());
        // Incompressible: not a run of one byte.
        r.ensure(0).unwrap();
        let bytes = fs::read(&file).unwrap();
        assert!(bytes.windows(2).filter(|w| w[0] == w[1]).count() < bytes.len() / 64);
    }
}
