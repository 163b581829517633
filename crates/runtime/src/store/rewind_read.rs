//! Reading back what conversation rewinds kept (`rewind-*.json` in a session dir): per
//! archive, the turns it removed with their input and the answers' text, so the user can see
//! and copy what a rewind took out of the conversation.

use std::path::Path;

use cairn_protocol::Event;
use serde::Deserialize;

/// Longest answer text kept per removed turn (characters); longer ones end with "…".
const REPLY_CHARS: usize = 4_000;

/// One removed turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedTurn {
    /// The session turn number it had.
    pub turn: u32,
    /// What the user sent.
    pub input: String,
    /// The assistant's visible text (all iterations), possibly shortened.
    pub reply: String,
}

/// One rewind archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RewindArchive {
    /// The archive's file name in the session dir.
    pub file: String,
    /// The turn the conversation went back to.
    pub rewound_to_turn: u32,
    /// When (RFC 3339).
    pub at: String,
    /// The removed turns, in order.
    pub turns: Vec<ArchivedTurn>,
}

/// The rewind archives of a session dir, newest first. Unreadable ones are skipped (logged).
pub fn read_archives(session_dir: &Path) -> Vec<RewindArchive> {
    let mut out: Vec<RewindArchive> = crate::store::rewind::archives(session_dir)
        .into_iter()
        .filter_map(|p| match read_archive(&p) {
            Ok(a) => Some(a),
            Err(e) => {
                tracing::warn!(file = %p.display(), error = %e, "unreadable rewind archive");
                None
            }
        })
        .collect();
    out.reverse();
    out
}

/// The parts of an archive file read back (the removed messages are skipped unparsed).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ArchiveFile {
    rewound_to_turn: u32,
    #[serde(default)]
    at: String,
    /// Event-log lines; a line that was not valid JSON was kept as a string.
    #[serde(default)]
    events: Vec<serde_json::Value>,
}

/// One archive file.
pub fn read_archive(path: &Path) -> Result<RewindArchive, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let file: ArchiveFile = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let mut turns: Vec<ArchivedTurn> = Vec::new();
    for e in &file.events {
        match Event::deserialize(e) {
            // A retried turn starts again with the same number: one entry.
            Ok(Event::TurnStart(t)) if turns.last().is_none_or(|last| last.turn != t.turn) => {
                turns.push(ArchivedTurn {
                    turn: t.turn,
                    input: t.input,
                    reply: String::new(),
                });
            }
            // The log keeps whole replies (`assistant_message`), not their deltas.
            Ok(Event::AssistantMessage(m)) if !m.text.is_empty() => {
                if let Some(last) = turns.last_mut() {
                    if !last.reply.is_empty() {
                        last.reply.push_str("\n\n");
                    }
                    last.reply.push_str(&m.text);
                }
            }
            _ => {}
        }
    }
    for t in &mut turns {
        if t.reply.chars().count() > REPLY_CHARS {
            t.reply = t.reply.chars().take(REPLY_CHARS).collect::<String>() + "…";
        }
    }
    Ok(RewindArchive {
        file: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        rewound_to_turn: file.rewound_to_turn,
        at: file.at,
        turns,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn start(turn: u32, input: &str) -> serde_json::Value {
        json!({"type": "turn_start", "data": {"taskId": "t", "input": input, "sessionId": "s", "turn": turn}})
    }
    fn text(t: &str) -> serde_json::Value {
        serde_json::to_value(Event::AssistantMessage(cairn_protocol::AssistantMessage {
            text: t.into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            usage: None,
            cost_usd: None,
            req_id: "r".into(),
            task_id: "t".into(),
            log_time: "now".into(),
        }))
        .unwrap()
    }

    #[test]
    fn removed_turns_come_back_with_their_input_and_answer() {
        let dir = tempfile::tempdir().unwrap();
        let archive = json!({
            "rewoundToTurn": 1, "at": "2026-12-01T07:00:00Z", "removedTurns": [2, 3],
            "messages": [],
            "events": [start(2, "second"), text("two "), text("parts"), "not an event",
                       start(2, "second"), text(" again"), start(3, "third"),
                       text(&"x".repeat(REPLY_CHARS + 5))],
        });
        std::fs::write(
            dir.path().join("rewind-20261201T070000.000Z-turn1.json"),
            archive.to_string(),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("rewind-20261201T080000.000Z-turn0.json"),
            "{oops",
        )
        .unwrap();
        let all = read_archives(dir.path());
        assert_eq!(all.len(), 1, "the corrupt archive is skipped");
        let a = &all[0];
        assert_eq!(
            (a.rewound_to_turn, a.at.as_str()),
            (1, "2026-12-01T07:00:00Z")
        );
        assert_eq!(a.turns.len(), 2);
        assert_eq!(a.turns[0].input, "second");
        assert_eq!(a.turns[0].reply, "two \n\nparts\n\n again");
        assert_eq!(a.turns[1].turn, 3);
        assert_eq!(a.turns[1].reply.chars().count(), REPLY_CHARS + 1);
        assert!(a.turns[1].reply.ends_with('…'));
    }

    #[test]
    fn newest_first_and_none_for_a_missing_dir() {
        let dir = tempfile::tempdir().unwrap();
        for (stamp, to) in [("20261201T070000.000Z", 2), ("20261201T090000.000Z", 1)] {
            let a = json!({"rewoundToTurn": to, "at": stamp, "events": [start(to + 1, "x")]});
            std::fs::write(
                dir.path().join(format!("rewind-{stamp}-turn{to}.json")),
                a.to_string(),
            )
            .unwrap();
        }
        let all = read_archives(dir.path());
        assert_eq!(
            all.iter().map(|a| a.rewound_to_turn).collect::<Vec<_>>(),
            [1, 2]
        );
        assert!(read_archives(&dir.path().join("missing")).is_empty());
    }
}
