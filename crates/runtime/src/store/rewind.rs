//! Keeping what a conversation rewind removes: before the engine truncates the history, the
//! removed messages and event-log lines are written to `rewind-<time>.json` in the session
//! dir (atomically: temp file, fsync, rename), then `events.jsonl` is cut back to the end of
//! the kept turn so the transcript shown on reopening matches the history.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use cairn_engine::rewind::RewindSnapshot;
use cairn_protocol::Event;

/// Byte offset in an event log where the turns after `turn` begin (the first `turn_start`
/// of a later turn), or the log's length when none follows.
pub fn cut_offset(log: &str, turn: u32) -> usize {
    let mut offset = 0;
    for line in log.split_inclusive('\n') {
        if let Ok(Event::TurnStart(t)) = serde_json::from_str::<Event>(line.trim_end()) {
            if t.turn > turn {
                return offset;
            }
        }
        offset += line.len();
    }
    log.len()
}

/// The archive files rewinds left in a session dir, oldest first.
pub fn archives(session_dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(session_dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("rewind-") && n.ends_with(".json"))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Archives what `rewind` removes (messages and the log lines of the removed turns) next to
/// the log at `path`, then truncates the log (`out`, opened for appending) to the kept turns.
pub fn rewind_log(path: &Path, out: &mut File, rewind: &RewindSnapshot<'_>) -> std::io::Result<()> {
    let log = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    let cut = cut_offset(&log, rewind.turn);
    let events: Vec<serde_json::Value> = log[cut..]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|_| serde_json::Value::from(l)))
        .collect();
    let at = crate::store::now();
    let archive = serde_json::json!({
        "rewoundToTurn": rewind.turn,
        "at": at,
        "removedTurns": rewind.removed_turns,
        "messages": rewind.removed,
        "events": events,
    });
    let dir = path.parent().unwrap_or(Path::new("."));
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let target = dir.join(format!("rewind-{stamp}-turn{}.json", rewind.turn));
    let tmp = dir.join(format!(".rewind.{}.tmp", std::process::id()));
    {
        let mut f = File::create(&tmp)?;
        let bytes = serde_json::to_vec_pretty(&archive).map_err(std::io::Error::other)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, &target)?;
    if cut < log.len() {
        out.set_len(cut as u64)?;
        out.sync_all()?;
    }
    tracing::info!(turn = rewind.turn, archive = %target.display(), "conversation rewound");
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn start(turn: u32) -> String {
        let e = Event::TurnStart(cairn_protocol::TurnStart {
            task_id: "t".into(),
            input: format!("input {turn}"),
            attachment_count: None,
            attachments: None,
            session_id: "s".into(),
            turn,
            source: Default::default(),
            worktree: None,
            sandbox: None,
        });
        format!("{}\n", serde_json::to_string(&e).unwrap())
    }

    #[test]
    fn the_cut_falls_on_the_first_later_turn_start() {
        let log = format!("{}x\n{}y\n{}z\n", start(1), start(2), start(3));
        let cut = cut_offset(&log, 1);
        assert_eq!(&log[..cut], format!("{}x\n", start(1)));
        assert_eq!(cut_offset(&log, 3), log.len());
        // A retry repeats turn 2's start: still the same turn.
        let retried = format!("{}{}{}", start(1), start(1), start(2));
        assert_eq!(cut_offset(&retried, 1), 2 * start(1).len());
    }
}
