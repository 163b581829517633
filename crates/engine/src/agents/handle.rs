//! A spawned child: a session that can run several turns (`input_subagent`) until disposed,
//! and the per-parent table of live children shared by `run_subagent` / `input_subagent`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use crate::locks::lock;
use crate::session::Session;
use crate::tool::{ToolContext, ToolError};

/// A child agent session (seed 000 `SubagentHandle`).
pub struct SubagentHandle {
    session_id: String,
    agent: String,
    model: String,
    session: Mutex<Option<Session>>,
    running: Arc<Semaphore>,
    max_concurrent: usize,
}

impl SubagentHandle {
    pub(crate) fn new(
        session: Session,
        agent: &str,
        running: Arc<Semaphore>,
        max_concurrent: usize,
    ) -> Self {
        SubagentHandle {
            session_id: session.id(),
            agent: agent.to_string(),
            model: session.model(),
            session: Mutex::new(Some(session)),
            running,
            max_concurrent,
        }
    }

    /// The child session's id (the origin of its forwarded events).
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The short id the model uses with `input_subagent` (the tail of the session id).
    pub fn subagent_id(&self) -> String {
        short_id(&self.session_id)
    }

    /// The child's role.
    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// The child's model id.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Whether [`SubagentHandle::dispose`] was called.
    pub fn is_disposed(&self) -> bool {
        lock(&self.session).is_none()
    }

    /// The child session while it is alive.
    pub fn session(&self) -> Option<Session> {
        lock(&self.session).clone()
    }

    /// Runs one turn of `prompt` on the child, forwarding its events into the parent's stream;
    /// returns the child's final answer. Refused when too many children run at once.
    pub async fn run(&self, prompt: String, ctx: &ToolContext) -> Result<String, ToolError> {
        let session = self.session().ok_or_else(|| {
            ToolError::Failed(format!(
                "subagent {} was closed; start a new one with run_subagent",
                self.subagent_id()
            ))
        })?;
        let _permit = self.running.clone().try_acquire_owned().map_err(|_| {
            ToolError::Failed(format!(
                "subagent concurrency limit reached: {} subagents are already running; wait for one to finish",
                self.max_concurrent
            ))
        })?;
        super::pump::run_child_turn(&session, prompt, ctx, &self.agent).await
    }

    /// Interrupts the child and releases what it holds (its tools, and with them its
    /// command sessions and background tasks). Idempotent.
    pub fn dispose(&self) {
        if let Some(s) = lock(&self.session).take() {
            s.interrupt();
            s.with_tools(|reg| *reg = crate::registry::ToolRegistry::new());
        }
    }
}

impl Drop for SubagentHandle {
    fn drop(&mut self) {
        self.dispose();
    }
}

/// The last 8 characters of a session id.
pub fn short_id(session_id: &str) -> String {
    let chars: Vec<char> = session_id.chars().collect();
    chars[chars.len().saturating_sub(8)..].iter().collect()
}

/// The live children of one parent session, by short id.
pub struct SubagentSessions {
    max_live: usize,
    live: Mutex<BTreeMap<String, Arc<SubagentHandle>>>,
}

impl SubagentSessions {
    /// A table holding at most `max_live` children at once.
    pub fn new(max_live: usize) -> Self {
        SubagentSessions {
            max_live: max_live.max(1),
            live: Mutex::new(BTreeMap::new()),
        }
    }

    /// Keeps a child; refused (and the child disposed) when the table is full.
    pub fn insert(&self, handle: Arc<SubagentHandle>) -> Result<(), ToolError> {
        let mut live = lock(&self.live);
        if live.len() >= self.max_live {
            drop(live);
            handle.dispose();
            return Err(ToolError::Failed(format!(
                "subagent limit reached: {} subagents are open; close one with input_subagent (close: true)",
                self.max_live
            )));
        }
        live.insert(handle.subagent_id(), handle);
        Ok(())
    }

    /// A live child by short id, or a clear error listing the open ones.
    pub fn get(&self, id: &str) -> Result<Arc<SubagentHandle>, ToolError> {
        let live = lock(&self.live);
        live.get(id.trim()).cloned().ok_or_else(|| {
            let open: Vec<&str> = live.keys().map(String::as_str).collect();
            ToolError::NotFound(format!(
                "no open subagent `{id}` (open: {})",
                if open.is_empty() {
                    "none".to_string()
                } else {
                    open.join(", ")
                }
            ))
        })
    }

    /// Disposes a child and forgets it; false when it was not open.
    pub fn close(&self, id: &str) -> bool {
        let h = lock(&self.live).remove(id.trim());
        match h {
            Some(h) => {
                h.dispose();
                true
            }
            None => false,
        }
    }

    /// Disposes every child (the parent session ends).
    pub fn dispose_all(&self) {
        let all = std::mem::take(&mut *lock(&self.live));
        for h in all.values() {
            h.dispose();
        }
    }

    /// Short ids of the open children.
    pub fn open(&self) -> Vec<String> {
        lock(&self.live).keys().cloned().collect()
    }
}

impl Drop for SubagentSessions {
    fn drop(&mut self) {
        self.dispose_all();
    }
}
