//! Tool-call ids unique across a whole session (seed 000 `ToolCallIdAllocator`).
//!
//! Some servers omit ids or send `call_0` on every reply. [`UniqueToolCallIds`] wraps any
//! client: an id the session has already seen (or an empty one) is rewritten to a fresh
//! one, and the rewrite is remembered so that, when the history goes back to the provider,
//! the call and its result carry the provider's own id again — whenever that id is
//! unambiguous in the request (after compaction dropped the older call, say). When it is
//! not, both keep the rewritten id, which still pairs them consistently.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use cairn_engine::{LlmChunk, LlmClient, LlmRequest};
use cairn_protocol::Message;
use futures::stream::BoxStream;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct State {
    seen: HashSet<String>,
    /// Our id → the id the provider sent.
    provider_id: HashMap<String, String>,
    counter: u64,
}

/// The session-wide registry of tool-call ids. Share one instance across clients rebuilt
/// for the same session (model switch, compaction) to keep the scope the whole session.
#[derive(Default)]
pub struct ToolCallIds {
    state: Mutex<State>,
}

impl std::fmt::Debug for ToolCallIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("ToolCallIds")
            .field("seen", &s.seen.len())
            .field("rewritten", &s.provider_id.len())
            .finish()
    }
}

/// Characters kept from a provider id when deriving a new one (safe for every provider).
fn sanitize(id: &str) -> String {
    let s: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(40)
        .collect();
    if s.is_empty() {
        "call".to_string()
    } else {
        s
    }
}

impl ToolCallIds {
    /// A fresh registry.
    pub fn new() -> Arc<ToolCallIds> {
        Arc::new(ToolCallIds::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records every id of a history (a restored session's ids count as used).
    pub fn observe(&self, messages: &[Message]) {
        let mut s = self.lock();
        for m in messages {
            match m {
                Message::Assistant { tool_calls, .. } => {
                    for c in tool_calls {
                        s.seen.insert(c.id.clone());
                    }
                }
                Message::Tool(r) => {
                    s.seen.insert(r.call_id.clone());
                }
                _ => {}
            }
        }
    }

    /// The session id for a call the provider sent with `provider_id` (maybe empty): the
    /// same id when it is new, else a fresh one (the rewrite is remembered).
    pub fn allocate(&self, provider_id: &str) -> String {
        let mut s = self.lock();
        if !provider_id.is_empty() && s.seen.insert(provider_id.to_string()) {
            return provider_id.to_string();
        }
        let base = sanitize(provider_id);
        let id = loop {
            s.counter += 1;
            let candidate = format!("{base}_{}", s.counter);
            if s.seen.insert(candidate.clone()) {
                break candidate;
            }
        };
        if !provider_id.is_empty() {
            s.provider_id.insert(id.clone(), provider_id.to_string());
        }
        tracing::debug!(provider_id, id = %id, "tool call id rewritten for uniqueness");
        id
    }

    /// `messages` with each rewritten id mapped back to the provider's, where unambiguous.
    pub fn to_provider(&self, messages: &[Message]) -> Vec<Message> {
        let s = self.lock();
        if s.provider_id.is_empty() {
            return messages.to_vec();
        }
        let ids: HashSet<&str> = messages
            .iter()
            .flat_map(|m| match m {
                Message::Assistant { tool_calls, .. } => {
                    tool_calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>()
                }
                Message::Tool(r) => vec![r.call_id.as_str()],
                _ => Vec::new(),
            })
            .collect();
        // How many distinct ids of this request would end up as each provider id.
        let mut uses: HashMap<&str, usize> = HashMap::new();
        for id in &ids {
            let target = s.provider_id.get(*id).map_or(*id, String::as_str);
            *uses.entry(target).or_default() += 1;
        }
        let map = |id: &str| -> String {
            match s.provider_id.get(id) {
                Some(orig) if uses.get(orig.as_str()) == Some(&1) => orig.clone(),
                _ => id.to_string(),
            }
        };
        messages
            .iter()
            .map(|m| match m {
                Message::Assistant {
                    content,
                    tool_calls,
                    usage,
                } => Message::Assistant {
                    content: content.clone(),
                    tool_calls: tool_calls
                        .iter()
                        .map(|c| {
                            let mut c = c.clone();
                            c.id = map(&c.id);
                            c
                        })
                        .collect(),
                    usage: *usage,
                },
                Message::Tool(r) => {
                    let mut r = r.clone();
                    r.call_id = map(&r.call_id);
                    Message::Tool(r)
                }
                other => other.clone(),
            })
            .collect()
    }
}

/// A client whose tool-call ids are unique across the session (see the module docs).
pub struct UniqueToolCallIds {
    inner: Arc<dyn LlmClient>,
    ids: Arc<ToolCallIds>,
}

impl UniqueToolCallIds {
    /// Wraps `inner`, allocating ids from `ids`.
    pub fn new(inner: Arc<dyn LlmClient>, ids: Arc<ToolCallIds>) -> UniqueToolCallIds {
        UniqueToolCallIds { inner, ids }
    }

    /// The registry in use.
    pub fn ids(&self) -> &Arc<ToolCallIds> {
        &self.ids
    }
}

impl LlmClient for UniqueToolCallIds {
    fn secrets(&self) -> Vec<String> {
        self.inner.secrets()
    }

    fn stream(
        &self,
        mut request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxStream<'static, LlmChunk> {
        self.ids.observe(&request.messages);
        request.messages = self.ids.to_provider(&request.messages);
        let ids = self.ids.clone();
        self.inner
            .stream(request, cancel)
            .map(move |chunk| match chunk {
                LlmChunk::ToolCall(mut c) => {
                    c.id = ids.allocate(&c.id);
                    LlmChunk::ToolCall(c)
                }
                other => other,
            })
            .boxed()
    }
}

#[cfg(test)]
#[path = "ids_tests.rs"]
mod tests;
