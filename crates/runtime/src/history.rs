//! A session's history in pages of whole turns, newest first: what a face shows when it opens
//! a long session (the app's transcript, a server's messages route, an editor's session load)
//! without taking every event at once. A turn is the events from its `turn_start` up to the
//! next one; events before the first `turn_start` form turn group 0 of their own.

use cairn_protocol::Event;
use serde::Serialize;

use crate::store::{SessionStore, StoreError};

/// The most turns one page holds.
pub const MAX_PAGE_TURNS: usize = 500;

/// One page of a session's history.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct HistoryPage {
    /// The events of the page's turns, oldest first, as the live stream sent them.
    pub events: Vec<Event>,
    /// The position of the page's first turn group among all of them (0 = the oldest);
    /// pass it as `before` for the page before this one.
    #[ts(type = "number")]
    pub first: usize,
    /// The position just after the page's last turn group (`total` when it ends with the
    /// newest); pass it as `from` for the page after this one.
    #[ts(type = "number")]
    pub end: usize,
    /// How many turn groups the session has.
    #[ts(type = "number")]
    pub total: usize,
}

impl HistoryPage {
    /// Whether older turns exist than this page holds.
    pub fn has_older(&self) -> bool {
        self.first > 0
    }
}

/// The positions in `events` where each turn group starts.
fn group_starts(events: &[Event]) -> Vec<usize> {
    let mut starts = Vec::new();
    for (i, e) in events.iter().enumerate() {
        if i == 0 || matches!(e, Event::TurnStart(_)) {
            starts.push(i);
        }
    }
    starts
}

/// The page of at most `limit` turn groups (1 to [`MAX_PAGE_TURNS`]) that ends just before
/// group `before` (`None`: the newest).
pub fn page(events: Vec<Event>, before: Option<usize>, limit: usize) -> HistoryPage {
    let starts = group_starts(&events);
    let total = starts.len();
    let end_group = before.map_or(total, |b| b.min(total));
    let limit = limit.clamp(1, MAX_PAGE_TURNS);
    let first = end_group.saturating_sub(limit);
    let from = starts.get(first).copied().unwrap_or(events.len());
    let to = starts.get(end_group).copied().unwrap_or(events.len());
    let events = if from < to {
        events.into_iter().skip(from).take(to - from).collect()
    } else {
        Vec::new()
    };
    HistoryPage {
        events,
        first,
        end: end_group.max(first),
        total,
    }
}

/// The page of at most `limit` turn groups (1 to [`MAX_PAGE_TURNS`]) that starts at group
/// `from` (0: the session's first turn; past the end: an empty page at the end).
pub fn page_from(events: Vec<Event>, from: usize, limit: usize) -> HistoryPage {
    let total = group_starts(&events).len();
    let first = from.min(total);
    let end = first
        .saturating_add(limit.clamp(1, MAX_PAGE_TURNS))
        .min(total);
    if end == first {
        return HistoryPage {
            events: Vec::new(),
            first,
            end,
            total,
        };
    }
    page(events, Some(end), end - first)
}

/// The page of at most `limit` turn groups that holds group `group` near its middle (a jump
/// to a search match or a checkpoint's turn): the turns around it come with it.
pub fn page_around(events: Vec<Event>, group: usize, limit: usize) -> HistoryPage {
    let limit = limit.clamp(1, MAX_PAGE_TURNS);
    page_from(events, group.saturating_sub(limit / 2), limit)
}

/// The turn group of chat turn `turn` (the last `turn_start` of that number: a rewound
/// turn's number is used again), or `None` when the log has no such turn.
pub fn group_of_turn(events: &[Event], turn: u32) -> Option<usize> {
    let starts = group_starts(events);
    starts
        .iter()
        .enumerate()
        .rev()
        .find(|(_, &at)| matches!(&events[at], Event::TurnStart(t) if t.turn == turn))
        .map(|(g, _)| g)
}

/// The newest page of at most `limit` turn groups of `events`, and the events before it.
pub fn newest(mut events: Vec<Event>, limit: usize) -> (HistoryPage, Vec<Event>) {
    let starts = group_starts(&events);
    let total = starts.len();
    let first = total.saturating_sub(limit.clamp(1, MAX_PAGE_TURNS));
    let from = starts.get(first).copied().unwrap_or(events.len());
    let page = events.split_off(from);
    (
        HistoryPage {
            events: page,
            first,
            end: total,
            total,
        },
        events,
    )
}

impl SessionStore {
    /// The page of session `id`'s history ending before turn group `before` (`None`: the
    /// newest), at most `limit` turns.
    pub fn history(
        &self,
        id: &str,
        before: Option<usize>,
        limit: usize,
    ) -> Result<HistoryPage, StoreError> {
        Ok(page(self.read_events(id)?, before, limit))
    }

    /// The page of session `id`'s history starting at turn group `from` (0: the first
    /// turn), at most `limit` turns: Home's page, and the way down from an older page.
    pub fn history_from(
        &self,
        id: &str,
        from: usize,
        limit: usize,
    ) -> Result<HistoryPage, StoreError> {
        Ok(page_from(self.read_events(id)?, from, limit))
    }

    /// The page of session `id`'s history around chat turn `turn` (see [`page_around`]);
    /// `None` when the log has no such turn.
    pub fn history_at_turn(
        &self,
        id: &str,
        turn: u32,
        limit: usize,
    ) -> Result<Option<HistoryPage>, StoreError> {
        let events = self.read_events(id)?;
        Ok(group_of_turn(&events, turn).map(|g| page_around(events, g, limit)))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_protocol::{AssistantMessage, TurnEnd, TurnStart, TurnStatus};

    fn turn(n: u32) -> Vec<Event> {
        vec![
            Event::TurnStart(TurnStart {
                task_id: format!("t{n}"),
                input: format!("question {n}"),
                attachment_count: None,
                attachments: None,
                session_id: "s".into(),
                turn: n,
                source: Default::default(),
                worktree: None,
                sandbox: None,
            }),
            Event::AssistantMessage(AssistantMessage {
                text: format!("answer {n}"),
                reasoning: String::new(),
                tool_calls: Vec::new(),
                usage: None,
                cost_usd: None,
                req_id: format!("r{n}"),
                task_id: format!("t{n}"),
                log_time: String::new(),
            }),
            Event::TurnEnd(TurnEnd {
                status: TurnStatus::Completed,
                iterations: 1,
                produced_files: Vec::new(),
                task_id: format!("t{n}"),
                usage: None,
                cost_usd: None,
            }),
        ]
    }

    fn inputs(p: &HistoryPage) -> Vec<String> {
        p.events
            .iter()
            .filter_map(|e| match e {
                Event::TurnStart(t) => Some(t.input.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_two_thousand_turn_session_pages_from_the_newest_to_the_oldest() {
        let events: Vec<Event> = (1..=2000).flat_map(turn).collect();
        let newest = page(events.clone(), None, 50);
        assert_eq!(newest.total, 2000);
        assert_eq!(newest.first, 1950);
        assert_eq!(newest.events.len(), 150);
        assert_eq!(inputs(&newest)[0], "question 1951");
        assert_eq!(inputs(&newest)[49], "question 2000");
        // Walking back page by page visits every turn once, in order, and ends.
        let mut seen = Vec::new();
        let mut before = None;
        loop {
            let p = page(events.clone(), before, 300);
            let mut batch = inputs(&p);
            batch.extend(seen);
            seen = batch;
            if !p.has_older() {
                break;
            }
            before = Some(p.first);
        }
        let expected: Vec<String> = (1..=2000).map(|n| format!("question {n}")).collect();
        assert_eq!(seen, expected);
        // Out of range and degenerate requests stay whole pages.
        assert_eq!(page(events.clone(), Some(5000), 1).first, 1999);
        assert!(page(events.clone(), Some(0), 10).events.is_empty());
        assert_eq!(page(events, None, 0).events.len(), 3);
        assert_eq!(page(Vec::new(), None, 10).total, 0);
    }

    #[test]
    fn pages_from_the_start_walk_forward_and_a_turn_is_found_in_its_page() {
        let events: Vec<Event> = (1..=2000).flat_map(turn).collect();
        let home = page_from(events.clone(), 0, 100);
        assert_eq!((home.first, home.end, home.total), (0, 100, 2000));
        assert_eq!(inputs(&home)[0], "question 1");
        assert!(!home.has_older());
        // Walking forward from the start visits every turn once and ends at the newest.
        let mut seen = Vec::new();
        let mut from = 0;
        loop {
            let p = page_from(events.clone(), from, 300);
            seen.extend(inputs(&p));
            if p.end == p.total {
                break;
            }
            assert_eq!(p.end, from + 300);
            from = p.end;
        }
        let expected: Vec<String> = (1..=2000).map(|n| format!("question {n}")).collect();
        assert_eq!(seen, expected);
        // A page from past the end is empty and says where the end is.
        let past = page_from(events.clone(), 5000, 10);
        assert_eq!((past.first, past.end, past.events.len()), (2000, 2000, 0));
        // Turn 7 is group 6 (no events before the first turn) and sits mid-page.
        assert_eq!(group_of_turn(&events, 7), Some(6));
        assert_eq!(group_of_turn(&events, 2001), None);
        let around = page_around(events.clone(), 1500, 100);
        assert_eq!((around.first, around.end), (1450, 1550));
        assert!(inputs(&around).contains(&"question 1501".to_string()));
        let start = page_around(events.clone(), 3, 100);
        assert_eq!((start.first, start.end), (0, 100));
        // `end` of the backward pages is where they stop.
        let back = page(events, Some(1200), 100);
        assert_eq!((back.first, back.end), (1100, 1200));
    }

    #[test]
    fn the_newest_page_is_the_suffix_and_the_rest_comes_back() {
        let events: Vec<Event> = (1..=30).flat_map(turn).collect();
        let (p, before) = newest(events.clone(), 10);
        assert_eq!((p.first, p.total), (20, 30));
        assert_eq!(inputs(&p)[0], "question 21");
        assert_eq!(before.len() + p.events.len(), events.len());
        assert_eq!(before[..], events[..before.len()]);
        assert_eq!(p, page(events.clone(), None, 10));
        let (all, none) = newest(events.clone(), 100);
        assert_eq!(
            (all.first, all.events.len(), none.len()),
            (0, events.len(), 0)
        );
    }
}
