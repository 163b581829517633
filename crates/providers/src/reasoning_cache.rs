//! Provider-side memory of reasoning the engine's history cannot carry (Anthropic thinking
//! signatures and redacted blocks, Responses `encrypted_content`), keyed by a hash of the
//! assistant message it belongs to.
//!
//! The engine stores a reply as its reasoning text, visible text and tool calls. A client
//! hashes exactly what it streamed out (see [`anchor`]); when that message comes back in a
//! later request's history, the same hash finds the opaque data to send with it. A miss
//! (another process, a compacted history) just sends the message without it.

use std::collections::hash_map::DefaultHasher;
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, PoisonError};

use cairn_protocol::{Message, ToolCall};

/// Entries kept per client; the oldest are dropped first.
const CAPACITY: usize = 1024;

/// The key of an assistant message: its reasoning, text and tool calls (names and
/// arguments; ids are left out because they may be rewritten for uniqueness).
pub(crate) fn anchor<'a>(
    reasoning: &str,
    text: &str,
    calls: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> u64 {
    let mut h = DefaultHasher::new();
    reasoning.hash(&mut h);
    0xffu8.hash(&mut h);
    text.hash(&mut h);
    for (name, args) in calls {
        0xfeu8.hash(&mut h);
        name.hash(&mut h);
        args.hash(&mut h);
    }
    h.finish()
}

/// The anchor of a history message (`None` for non-assistant messages).
pub(crate) fn message_anchor(m: &Message) -> Option<u64> {
    match m {
        Message::Assistant { tool_calls, .. } => Some(anchor(
            &m.reasoning(),
            &m.text(),
            tool_calls.iter().map(call_pair),
        )),
        _ => None,
    }
}

/// A tool call as (name, arguments).
pub(crate) fn call_pair(c: &ToolCall) -> (&str, &str) {
    (c.name.as_str(), c.arguments.as_str())
}

struct Inner<T> {
    map: HashMap<u64, T>,
    order: VecDeque<u64>,
}

/// A bounded map from message anchors to provider data.
pub(crate) struct ReasoningCache<T> {
    inner: Mutex<Inner<T>>,
}

impl<T: Clone> Default for ReasoningCache<T> {
    fn default() -> Self {
        ReasoningCache {
            inner: Mutex::new(Inner {
                map: HashMap::new(),
                order: VecDeque::new(),
            }),
        }
    }
}

impl<T: Clone> ReasoningCache<T> {
    /// Remembers `value` for `key`.
    pub(crate) fn put(&self, key: u64, value: T) {
        let mut g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if g.map.insert(key, value).is_none() {
            g.order.push_back(key);
        }
        while g.order.len() > CAPACITY {
            if let Some(old) = g.order.pop_front() {
                g.map.remove(&old);
            }
        }
    }

    /// The value remembered for `key`.
    pub(crate) fn get(&self, key: u64) -> Option<T> {
        let g = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        g.map.get(&key).cloned()
    }

    /// Number of entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_protocol::ContentPart;

    #[test]
    fn history_message_matches_what_was_streamed() {
        let call = ToolCall {
            id: "rewritten_7".into(),
            name: "ls".into(),
            arguments: "{}".into(),
        };
        let streamed = anchor("think", "answer", [("ls", "{}")]);
        let m = Message::Assistant {
            content: vec![
                ContentPart::Reasoning {
                    text: "think".into(),
                },
                ContentPart::Text {
                    text: "answer".into(),
                },
            ],
            tool_calls: vec![call],
            usage: None,
        };
        assert_eq!(message_anchor(&m), Some(streamed));
        assert_ne!(anchor("think", "answer", []), streamed);
        assert_ne!(anchor("thinkanswer", "", [("ls", "{}")]), streamed);
        assert_eq!(message_anchor(&Message::user("x")), None);
    }

    #[test]
    fn bounded() {
        let c: ReasoningCache<u32> = ReasoningCache::default();
        for i in 0..(CAPACITY as u64 + 10) {
            c.put(i, i as u32);
        }
        assert_eq!(c.len(), CAPACITY);
        assert_eq!(c.get(0), None);
        assert_eq!(c.get(CAPACITY as u64 + 9), Some(CAPACITY as u32 + 9));
    }
}
