//! Makes a restored history valid for the next request.

use std::collections::BTreeSet;

use cairn_protocol::{Message, ToolResult, ToolStatus};

/// Closes tool calls that have no result (the process died mid-tool) with an `interrupted`
/// result right after their assistant message, and drops results whose call is unknown.
/// Returns how many messages were added or removed.
pub fn repair_history(messages: &mut Vec<Message>) -> usize {
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut changes = 0;
    let mut i = 0;
    let mut known_calls: BTreeSet<String> = BTreeSet::new();
    while i < messages.len() {
        let m = messages[i].clone();
        i += 1;
        match &m {
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => {
                out.push(m.clone());
                // Collect the results that follow this message.
                let mut answered = BTreeSet::new();
                while i < messages.len() {
                    match &messages[i] {
                        Message::Tool(r) if tool_calls.iter().any(|c| c.id == r.call_id) => {
                            if answered.insert(r.call_id.clone()) {
                                out.push(messages[i].clone());
                            } else {
                                changes += 1;
                            }
                            i += 1;
                        }
                        _ => break,
                    }
                }
                for c in tool_calls {
                    known_calls.insert(c.id.clone());
                    if !answered.contains(&c.id) {
                        changes += 1;
                        out.push(Message::Tool(ToolResult {
                            call_id: c.id.clone(),
                            name: c.name.clone(),
                            content: serde_json::json!({
                                "error": "interrupted: the session ended before this call finished",
                                "error_type": "interrupted"
                            })
                            .to_string(),
                            status: ToolStatus::Interrupted,
                            images: Vec::new(),
                        }));
                    }
                }
            }
            Message::Tool(r) if !known_calls.contains(&r.call_id) => {
                changes += 1; // orphan result: its call is not in the history
            }
            Message::Tool(_) => {
                changes += 1; // a duplicate or out-of-place result
            }
            _ => out.push(m),
        }
    }
    *messages = out;
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::testing::{calls_message as call, ok_result as result};

    #[test]
    fn dangling_calls_are_closed_as_interrupted() {
        let mut h = vec![Message::user("u"), call(&["a", "b"]), result("a")];
        assert_eq!(repair_history(&mut h), 1);
        assert_eq!(h.len(), 4);
        assert!(
            matches!(&h[3], Message::Tool(r) if r.call_id == "b" && r.status == ToolStatus::Interrupted)
        );
    }

    #[test]
    fn valid_history_is_untouched_and_orphans_are_dropped() {
        let mut h = vec![
            Message::user("u"),
            call(&["a"]),
            result("a"),
            Message::assistant_text("x"),
        ];
        let before = h.clone();
        assert_eq!(repair_history(&mut h), 0);
        assert_eq!(h, before);
        let mut h = vec![
            Message::user("u"),
            result("zz"),
            call(&["a"]),
            result("a"),
            result("a"),
        ];
        assert_eq!(repair_history(&mut h), 2);
        assert_eq!(h.len(), 3);
    }
}
