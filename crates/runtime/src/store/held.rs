//! The session state a persister holds and hands to its writer: the checkpoint's fields, and
//! its messages one shared copy each, so the next state reuses every message that did not
//! change instead of copying the whole history at each iteration.

use std::sync::Arc;

use cairn_protocol::Message;

use crate::store::SavedSession;

/// A session's checkpoint with its messages shared between successive states.
#[derive(Debug, Clone)]
pub struct HeldState {
    /// Every field but the messages (its `messages` stay empty).
    pub meta: SavedSession,
    /// The history.
    pub messages: Vec<Arc<Message>>,
}

impl HeldState {
    /// Holds `saved`.
    pub fn new(mut saved: SavedSession) -> Self {
        let messages = std::mem::take(&mut saved.messages)
            .into_iter()
            .map(Arc::new)
            .collect();
        HeldState {
            meta: saved,
            messages,
        }
    }

    /// The whole checkpoint, copied out.
    pub fn to_saved(&self) -> SavedSession {
        SavedSession {
            messages: self.messages.iter().map(|m| Message::clone(m)).collect(),
            ..self.meta.clone()
        }
    }

    /// `history` as shared messages: those equal to this state's at the same place are
    /// shared with it (a comparison, no copy), the others copied.
    pub fn share(&self, history: &[Message]) -> Vec<Arc<Message>> {
        history
            .iter()
            .enumerate()
            .map(|(i, m)| match self.messages.get(i) {
                Some(held) if **held == *m => held.clone(),
                _ => Arc::new(m.clone()),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn unchanged_messages_are_shared_and_changed_ones_copied() {
        let saved = SavedSession {
            name: "n".into(),
            messages: vec![Message::user("a"), Message::user("b")],
            turns: 1,
            protocol_version: 1,
            ..SavedSession::new("h", "/w", "m", "", "")
        };
        let held = HeldState::new(saved.clone());
        assert!(held.meta.messages.is_empty());
        assert_eq!(held.to_saved(), saved);
        let next = held.share(&[Message::user("a"), Message::user("B"), Message::user("c")]);
        assert!(Arc::ptr_eq(&next[0], &held.messages[0]));
        assert!(!Arc::ptr_eq(&next[1], &held.messages[1]));
        assert_eq!(next[1].text(), "B");
        assert_eq!(next[2].text(), "c");
        // A shorter history (a rewind) keeps its prefix shared.
        let cut = held.share(&[Message::user("a")]);
        assert_eq!(cut.len(), 1);
        assert!(Arc::ptr_eq(&cut[0], &held.messages[0]));
    }
}
