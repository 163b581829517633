//! Keeps what the conflict guard saw across processes: `cairn run --session` runs each turn
//! in a new process, and a file the agent read in one turn and the user edited before the
//! next must still be refused. Content hashes per path, in a small JSON file beside the
//! session (written atomically after each change).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::guard::ContentHash;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Saved {
    /// Absolute path → SHA-256 of the content the agent last saw, in hex.
    files: BTreeMap<String, String>,
}

/// The hashes saved at `file`; nothing when it is missing or unreadable (a damaged file only
/// costs the guard its memory of earlier turns).
pub(crate) fn load(file: &Path) -> Vec<(PathBuf, ContentHash)> {
    let Ok(bytes) = std::fs::read(file) else {
        return Vec::new();
    };
    let Ok(saved) = serde_json::from_slice::<Saved>(&bytes) else {
        tracing::warn!(file = %file.display(), "ignoring an unreadable conflict-guard file");
        return Vec::new();
    };
    saved
        .files
        .into_iter()
        .filter_map(|(p, h)| Some((PathBuf::from(p), from_hex(&h)?)))
        .collect()
}

/// Saves `entries` to `file` (temp file, then rename); failures are logged, not fatal.
pub(crate) fn save<'a>(file: &Path, entries: impl Iterator<Item = (&'a PathBuf, &'a ContentHash)>) {
    let saved = Saved {
        files: entries
            .map(|(p, h)| (p.display().to_string(), to_hex(h)))
            .collect(),
    };
    let result = serde_json::to_vec(&saved)
        .map_err(std::io::Error::other)
        .and_then(|bytes| {
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = file.with_extension(format!("tmp{}", std::process::id()));
            std::fs::write(&tmp, bytes)?;
            std::fs::rename(&tmp, file)
        });
    if let Err(e) = result {
        tracing::warn!(file = %file.display(), error = %e, "could not save the conflict guard");
    }
}

fn to_hex(h: &ContentHash) -> String {
    h.iter().map(|b| format!("{b:02x}")).collect()
}

fn from_hex(s: &str) -> Option<ContentHash> {
    let mut out = [0u8; 32];
    if s.len() != 64 || !s.is_ascii() {
        return None;
    }
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(s.get(i * 2..i * 2 + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn round_trip_and_damage() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("s/seen.json");
        let a = (PathBuf::from("/w/a.txt"), crate::guard::hash(b"a"));
        let b = (PathBuf::from("/w/b c.txt"), crate::guard::hash(b"b"));
        save(&file, [(&a.0, &a.1), (&b.0, &b.1)].into_iter());
        assert_eq!(load(&file), vec![a, b]);
        std::fs::write(&file, "{not json").unwrap();
        assert!(load(&file).is_empty());
        assert!(load(&tmp.path().join("missing.json")).is_empty());
        assert_eq!(from_hex("zz"), None);
    }
}
