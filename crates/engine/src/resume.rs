//! Resuming a restored session whose history ends with tool calls that never got a result
//! (seed §12.4): typically an approval that was open when the process died.
//!
//! A restored session built with [`crate::SessionBuilder::resume_pending`] keeps those calls
//! open. [`crate::Session::resume`] then runs the ones that had not started (their approval
//! is asked again), closes the ones that had started as `interrupted` (re-running a
//! half-finished side effect is never safe), and continues the turn. New input instead closes
//! every open call as `interrupted`, so the history is always valid for the next request.

use std::collections::BTreeSet;

use cairn_protocol::{Message, ToolCall, ToolResult, ToolStatus};

/// The open tail of a restored history: an assistant message with tool calls, the results
/// that were recorded, and the calls still waiting for one.
pub(crate) struct PendingTail {
    assistant: Message,
    answered: Vec<Message>,
    pending: Vec<ToolCall>,
}

/// Whether a history ends with tool calls that have no result.
pub fn has_pending_calls(messages: &[Message]) -> bool {
    let Some(idx) = messages
        .iter()
        .rposition(|m| !matches!(m, Message::Tool(_)))
    else {
        return false;
    };
    let Message::Assistant { tool_calls, .. } = &messages[idx] else {
        return false;
    };
    tool_calls.iter().any(|c| {
        !messages[idx + 1..]
            .iter()
            .any(|m| matches!(m, Message::Tool(r) if r.call_id == c.id))
    })
}

/// Detaches the open tail (if any) so the rest can be repaired on its own.
pub(crate) fn take_pending(messages: &mut Vec<Message>) -> Option<PendingTail> {
    let idx = messages
        .iter()
        .rposition(|m| !matches!(m, Message::Tool(_)))?;
    let Message::Assistant { tool_calls, .. } = &messages[idx] else {
        return None;
    };
    let calls = tool_calls.clone();
    let mut seen = BTreeSet::new();
    let mut answered = Vec::new();
    for m in &messages[idx + 1..] {
        if let Message::Tool(r) = m {
            if calls.iter().any(|c| c.id == r.call_id) && seen.insert(r.call_id.clone()) {
                answered.push(m.clone());
            }
        }
    }
    let pending: Vec<ToolCall> = calls
        .into_iter()
        .filter(|c| !seen.contains(&c.id))
        .collect();
    if pending.is_empty() {
        return None;
    }
    let mut tail = messages.split_off(idx);
    let assistant = tail.remove(0);
    Some(PendingTail {
        assistant,
        answered,
        pending,
    })
}

impl PendingTail {
    /// Puts the tail back after the (repaired) history; returns the calls still open.
    pub(crate) fn restore(self, messages: &mut Vec<Message>) -> Vec<ToolCall> {
        messages.push(self.assistant);
        messages.extend(self.answered);
        self.pending
    }
}

/// How running the open calls ended.
pub(crate) enum PendingOutcome {
    /// All calls have results: continue the turn with the next LLM request.
    Continue,
    /// Interrupted while running them.
    Interrupted,
    /// An approval could not be obtained; the turn ends with this error.
    Fatal(String),
}

/// Why a call left open is closed when new input arrives.
pub(crate) const CLOSED: &str = "interrupted: the session ended before this call finished";
/// Why a call that had started when the session ended is closed on resume.
pub(crate) const NOT_RUN_AGAIN: &str =
    "interrupted: the session ended while this call was running; it was not run again";

/// The `interrupted` result that closes `call`, saying why.
pub(crate) fn interrupted_result(call: &ToolCall, why: &str) -> Message {
    Message::Tool(ToolResult {
        call_id: call.id.clone(),
        name: call.name.clone(),
        content: serde_json::json!({ "error": why, "error_type": "interrupted" }).to_string(),
        status: ToolStatus::Interrupted,
        images: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::{calls_message as call, ok_result as result};

    #[test]
    fn only_a_trailing_block_with_unanswered_calls_is_open() {
        let mut h = vec![Message::user("u"), call(&["a", "b"]), result("a")];
        assert!(has_pending_calls(&h));
        let tail = take_pending(&mut h);
        assert!(tail.is_some());
        assert_eq!(h, vec![Message::user("u")]);
        let pending = tail.map(|t| t.restore(&mut h)).unwrap_or_default();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].id, "b");
        assert_eq!(h.len(), 3);

        let done = vec![Message::user("u"), call(&["a"]), result("a")];
        assert!(!has_pending_calls(&done));
        let earlier = vec![call(&["a"]), Message::user("u")];
        assert!(!has_pending_calls(&earlier));
        assert!(!has_pending_calls(&[]));
    }
}
