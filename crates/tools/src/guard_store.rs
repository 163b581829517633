//! Keeps what the conflict guard saw across processes: `cairn run --session` runs each turn
//! in a new process, and a file the agent read in one turn and the user edited before the
//! next must still be refused. An append-only JSON-lines file beside the session, one line per
//! change (`{"p": path, "h": sha256 hex}`, `"h": null` when forgotten): a read costs one
//! small append, however many files the session has seen. Loading keeps the last line of
//! each path and rewrites the file compactly when it has grown mostly stale.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::guard::ContentHash;

#[derive(Debug, Serialize, Deserialize)]
struct Line {
    /// Absolute path.
    p: String,
    /// SHA-256 of the content the agent last saw, in hex; `None`: forgotten.
    h: Option<String>,
}

/// The hashes saved at `file`; nothing when it is missing. Unreadable lines (a process
/// killed mid-append) are skipped: a damaged line only costs the guard one memory.
pub(crate) fn load(file: &Path) -> Vec<(PathBuf, ContentHash)> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let mut lines = 0usize;
    let mut last: HashMap<String, Option<ContentHash>> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    for raw in text.lines().filter(|l| !l.trim().is_empty()) {
        lines += 1;
        let Ok(line) = serde_json::from_str::<Line>(raw) else {
            continue;
        };
        let hash = line.h.as_deref().and_then(from_hex);
        if last.insert(line.p.clone(), hash).is_none() {
            order.push(line.p);
        }
    }
    let entries: Vec<(PathBuf, ContentHash)> = order
        .into_iter()
        .filter_map(|p| {
            let h = last.get(&p).copied().flatten()?;
            Some((PathBuf::from(p), h))
        })
        .collect();
    if lines > 2 * entries.len() + 64 {
        rewrite(file, &entries);
    }
    entries
}

/// Records that the agent saw `hash` at `path` (`None`: it forgot the file).
pub(crate) fn append(file: &Path, path: &Path, hash: Option<&ContentHash>) {
    let line = Line {
        p: path.display().to_string(),
        h: hash.map(to_hex),
    };
    let result = serde_json::to_string(&line)
        .map_err(std::io::Error::other)
        .and_then(|json| {
            // Each record starts on a new line: one torn by a killed process (no newline at
            // its end) never swallows the next.
            let text = format!("\n{json}\n");
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)?
                .write_all(text.as_bytes())
        });
    if let Err(e) = result {
        tracing::warn!(file = %file.display(), error = %e, "could not save the conflict guard");
    }
}

/// Replaces `file` with one line per entry (temp file, then rename).
fn rewrite(file: &Path, entries: &[(PathBuf, ContentHash)]) {
    let mut text = String::new();
    for (p, h) in entries {
        let line = Line {
            p: p.display().to_string(),
            h: Some(to_hex(h)),
        };
        if let Ok(l) = serde_json::to_string(&line) {
            text.push_str(&l);
            text.push('\n');
        }
    }
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    if let Err(e) = std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, file)) {
        let _ = std::fs::remove_file(&tmp);
        tracing::warn!(file = %file.display(), error = %e, "could not compact the conflict guard");
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
    fn appends_load_back_last_wins_and_damage_is_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("s/seen.jsonl");
        let a = PathBuf::from("/w/a.txt");
        let b = PathBuf::from("/w/b c.txt");
        append(&file, &a, Some(&crate::guard::hash(b"a1")));
        append(&file, &b, Some(&crate::guard::hash(b"b")));
        append(&file, &a, Some(&crate::guard::hash(b"a2")));
        // A process killed mid-append leaves a torn line.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap()
            .write_all(b"{\"p\": \"/w/torn")
            .unwrap();
        assert_eq!(
            load(&file),
            vec![
                (a.clone(), crate::guard::hash(b"a2")),
                (b.clone(), crate::guard::hash(b"b"))
            ]
        );
        append(&file, &b, None);
        assert_eq!(load(&file), vec![(a, crate::guard::hash(b"a2"))]);
        assert!(load(&tmp.path().join("missing")).is_empty());
        assert_eq!(from_hex("zz"), None);
    }

    #[test]
    fn a_mostly_stale_file_is_compacted_on_load() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("seen.jsonl");
        let a = PathBuf::from("/w/a.txt");
        for i in 0..200u32 {
            append(&file, &a, Some(&crate::guard::hash(&i.to_le_bytes())));
        }
        let loaded = load(&file);
        assert_eq!(loaded, vec![(a, crate::guard::hash(&199u32.to_le_bytes()))]);
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
        assert_eq!(load(&file), loaded);
    }
}
