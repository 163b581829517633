//! Search within one session's whole log (the app's Ctrl+F in a chat): every user prompt and
//! assistant answer is matched case-insensitively, wherever its turn is (the face only holds
//! a page of turns), and each hit names its turn group, so the face loads the page that
//! holds it ([`crate::history`]).

use cairn_protocol::Event;
use serde::Serialize;

use crate::store::{SessionStore, StoreError};

/// The most hits one search returns (the count of matches goes on past it).
pub const MAX_HITS: usize = 1000;

/// Characters of context kept before a match in a hit's snippet.
const BEFORE_CHARS: usize = 40;
/// Characters kept from the match on.
const AFTER_CHARS: usize = 100;

/// Whose words a hit is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum HitRole {
    /// The user's prompt (`turn_start`).
    User,
    /// An assistant answer (`assistant_message`).
    Assistant,
}

/// One message holding the words searched for.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SearchHit {
    /// The turn group it is in ([`crate::history::HistoryPage::first`]'s numbering).
    #[ts(type = "number")]
    pub group: usize,
    /// The chat turn (from 1) it is in; 0 before the first turn.
    pub turn: u32,
    /// Whose words they are.
    pub role: HitRole,
    /// The message's id in the stream: the turn's task id for a prompt, the request id of
    /// an answer.
    pub id: String,
    /// The text around the first match, on one line.
    pub snippet: String,
    /// How many times the words occur in the message.
    #[ts(type = "number")]
    pub count: usize,
}

/// What a search of a session's log found.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SessionSearch {
    /// The words searched for, trimmed.
    pub query: String,
    /// The messages holding them, oldest first (at most [`MAX_HITS`]).
    pub hits: Vec<SearchHit>,
    /// How many matches there are in all (every message, past [`MAX_HITS`] too).
    #[ts(type = "number")]
    pub matches: usize,
    /// More messages matched than `hits` holds.
    pub truncated: bool,
    /// Unreadable log lines left out of the search.
    #[ts(type = "number")]
    pub skipped_lines: usize,
}

/// Lower-cased `text` and, for each of its bytes, where the character it came from starts
/// in `text` (lower-casing may change a character's length).
fn folded(text: &str) -> (String, Vec<usize>) {
    let mut lower = String::with_capacity(text.len());
    let mut at = Vec::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        for l in c.to_lowercase() {
            let before = lower.len();
            lower.push(l);
            at.extend(std::iter::repeat_n(i, lower.len() - before));
        }
    }
    (lower, at)
}

/// Where `needle` (lower case) occurs in `text`: the count and the first match's start.
fn find_all(text: &str, needle: &str) -> Option<(usize, usize)> {
    let (lower, at) = folded(text);
    let mut found = lower.match_indices(needle);
    let (first, _) = found.next()?;
    Some((1 + found.count(), at.get(first).copied().unwrap_or(0)))
}

/// The text around byte `at` of `text`, on one line, "…" where it was cut.
fn snippet(text: &str, at: usize) -> String {
    let head: Vec<char> = text[..at].chars().collect();
    let from = head.len().saturating_sub(BEFORE_CHARS);
    let mut out = String::new();
    if from > 0 {
        out.push('…');
    }
    out.extend(head[from..].iter());
    let mut tail = text[at..].chars();
    out.extend(tail.by_ref().take(AFTER_CHARS));
    if tail.next().is_some() {
        out.push('…');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Searches `events` (a session's log, oldest first) for `query`, case-insensitively, in the
/// user's prompts and the assistant's answers. An empty query finds nothing.
pub fn search(events: &[Event], query: &str) -> SessionSearch {
    let query = query.trim().to_string();
    let mut out = SessionSearch {
        query: query.clone(),
        hits: Vec::new(),
        matches: 0,
        truncated: false,
        skipped_lines: 0,
    };
    if query.is_empty() {
        return out;
    }
    let needle = query.to_lowercase();
    let mut group = 0;
    let mut turn = 0;
    for (i, event) in events.iter().enumerate() {
        let (role, id, text) = match event {
            Event::TurnStart(t) => {
                if i > 0 {
                    group += 1;
                }
                turn = t.turn;
                (HitRole::User, &t.task_id, &t.input)
            }
            Event::AssistantMessage(a) => (HitRole::Assistant, &a.req_id, &a.text),
            _ => continue,
        };
        let Some((count, at)) = find_all(text, &needle) else {
            continue;
        };
        out.matches += count;
        if out.hits.len() == MAX_HITS {
            out.truncated = true;
            continue;
        }
        out.hits.push(SearchHit {
            group,
            turn,
            role,
            id: id.clone(),
            snippet: snippet(text, at),
            count,
        });
    }
    out
}

impl SessionStore {
    /// Searches session `id`'s whole log for `query` ([`search`]); unreadable lines are
    /// skipped and counted.
    pub fn search_log(&self, id: &str, query: &str) -> Result<SessionSearch, StoreError> {
        let (events, skipped) = self.read_events_counted(id)?;
        let mut found = search(&events, query);
        found.skipped_lines = skipped;
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn folding_keeps_the_original_positions() {
        let (lower, at) = folded("Aİb");
        assert_eq!(lower, "ai\u{307}b");
        assert_eq!(at, vec![0, 1, 1, 1, 3]);
        assert_eq!(find_all("xx ÄPFEL äpfel", "äpfel"), Some((2, 3)));
        assert_eq!(find_all("nothing", "zebra"), None);
    }

    #[test]
    fn a_snippet_is_one_line_around_the_match() {
        let text = format!("{}\nthe zebra\n{}", "a".repeat(60), "b".repeat(200));
        let s = snippet(&text, text.find("zebra").unwrap());
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("the zebra b"), "{s}");
        assert_eq!(snippet("zebra", 0), "zebra");
    }
}
