//! Conversation rewind (the chat half of Claude Code's rewind): the engine remembers where
//! the history stood right after each turn ([`TurnMark`]) and can truncate it back to that
//! point. Turn numbers are never reused: after rewinding to turn 1 of 3, the next turn is 4,
//! so checkpoints and event-log entries keep naming one turn each.

use cairn_protocol::Message;
use serde::{Deserialize, Serialize};

/// Where the history stood right after one turn: its length then.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnMark {
    /// The session turn number.
    pub turn: u32,
    /// History length (messages, system prompt included) when the turn ended.
    pub messages: usize,
}

/// Why a rewind was refused (nothing changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RewindError {
    /// A turn is running or queued.
    #[error("a turn is running: stop it or wait for it to end before rewinding the conversation")]
    Busy,
    /// No such turn in this session.
    #[error("there is no turn {turn} to rewind to: this session has run turns 1 to {turns}")]
    UnknownTurn {
        /// The turn asked for.
        turn: u32,
        /// Turns the session has run.
        turns: u32,
    },
    /// The turn existed but the history right after it is gone.
    #[error(
        "the conversation right after turn {turn} can no longer be restored (it was \
         compacted, removed by an earlier rewind, or saved by an older Cairn)"
    )]
    Unavailable {
        /// The turn asked for.
        turn: u32,
    },
    /// A persistence hook could not keep the removed turns; the history was left as it was.
    #[error("could not keep the removed turns, nothing was rewound: {0}")]
    Hook(String),
}

/// What a rewind is about to remove, handed to hooks before the history is truncated.
#[derive(Debug, Clone, Copy)]
pub struct RewindSnapshot<'a> {
    /// The turn the conversation goes back to (kept).
    pub turn: u32,
    /// The messages removed, in order.
    pub removed: &'a [Message],
    /// The turns removed (those with a recorded end).
    pub removed_turns: &'a [u32],
}

/// What a rewind removed.
#[derive(Debug, Clone, PartialEq)]
pub struct Rewound {
    /// The turn the conversation went back to.
    pub turn: u32,
    /// The removed messages, in order.
    pub removed: Vec<Message>,
    /// The removed turns (those with a recorded end).
    pub removed_turns: Vec<u32>,
}

/// Records (or, after a retry or resume, moves) the end of `turn`.
pub(crate) fn record(marks: &mut Vec<TurnMark>, turn: u32, messages: usize) {
    if turn == 0 {
        return;
    }
    marks.retain(|m| m.turn != turn);
    marks.push(TurnMark { turn, messages });
    marks.sort_by_key(|m| m.turn);
}

/// Shifts every mark after a message was inserted at the front of the history.
pub(crate) fn shift(marks: &mut [TurnMark], by: usize) {
    for m in marks {
        m.messages += by;
    }
}

/// Where the history must be cut to go back to right after `turn`, and the turns that go.
pub(crate) fn plan(
    marks: &[TurnMark],
    messages: &[Message],
    turns: u32,
    turn: u32,
) -> Result<(usize, Vec<u32>), RewindError> {
    if turn == 0 || turn > turns {
        return Err(RewindError::UnknownTurn { turn, turns });
    }
    let mark = marks
        .iter()
        .find(|m| m.turn == turn)
        .ok_or(RewindError::Unavailable { turn })?;
    let cut = mark.messages;
    // Right after a turn's end comes the next turn's input: anything else means the history
    // was rewritten since the mark was taken.
    let sane = cut > 0
        && cut <= messages.len()
        && (cut == messages.len() || matches!(messages[cut], Message::User { .. }));
    if !sane {
        return Err(RewindError::Unavailable { turn });
    }
    let removed_turns = marks
        .iter()
        .filter(|m| m.turn > turn)
        .map(|m| m.turn)
        .collect();
    Ok((cut, removed_turns))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn history() -> Vec<Message> {
        vec![
            Message::system("sys"),
            Message::user("one"),
            Message::assistant_text("r1"),
            Message::user("two"),
            Message::assistant_text("r2"),
        ]
    }

    #[test]
    fn marks_are_kept_in_turn_order_and_moved_by_a_retry() {
        let mut m = Vec::new();
        record(&mut m, 2, 5);
        record(&mut m, 1, 3);
        record(&mut m, 2, 6);
        record(&mut m, 0, 1);
        assert_eq!(
            m,
            vec![
                TurnMark {
                    turn: 1,
                    messages: 3
                },
                TurnMark {
                    turn: 2,
                    messages: 6
                }
            ]
        );
        shift(&mut m, 1);
        assert_eq!(m[0].messages, 4);
    }

    #[test]
    fn plan_cuts_after_the_turn_and_names_the_later_turns() {
        let marks = [
            TurnMark {
                turn: 1,
                messages: 3,
            },
            TurnMark {
                turn: 2,
                messages: 5,
            },
        ];
        assert_eq!(plan(&marks, &history(), 2, 1).unwrap(), (3, vec![2]));
        assert_eq!(plan(&marks, &history(), 2, 2).unwrap(), (5, vec![]));
        assert_eq!(
            plan(&marks, &history(), 2, 3),
            Err(RewindError::UnknownTurn { turn: 3, turns: 2 })
        );
        assert_eq!(
            plan(&marks, &history(), 2, 0),
            Err(RewindError::UnknownTurn { turn: 0, turns: 2 })
        );
    }

    #[test]
    fn plan_refuses_a_stale_or_missing_mark() {
        let stale = [TurnMark {
            turn: 1,
            messages: 2,
        }];
        assert_eq!(
            plan(&stale, &history(), 2, 1),
            Err(RewindError::Unavailable { turn: 1 })
        );
        let past_end = [TurnMark {
            turn: 1,
            messages: 9,
        }];
        assert_eq!(
            plan(&past_end, &history(), 2, 1),
            Err(RewindError::Unavailable { turn: 1 })
        );
        assert_eq!(
            plan(&[], &history(), 2, 1),
            Err(RewindError::Unavailable { turn: 1 })
        );
    }
}
