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
        total,
    }
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
