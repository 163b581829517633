//! Rebuilding a session whose checkpoint (`state.json`) and its previous copy are both
//! unreadable from its event log (`events.jsonl`): the conversation (user inputs, the
//! assistant's replies, tool calls with their arguments and the start of each result), the
//! turn count, todos, usage and model. Never its permission mode or grants: those cannot be
//! verified from the log, so a rebuilt session starts `interactive` with no grants.

use std::collections::BTreeMap;

use cairn_engine::{PermissionState, TurnMark};
use cairn_protocol::{ContentPart, Event, Message, ToolCall, ToolResult, ToolStatus};

use crate::store::{derive_name, now, SavedSession, SessionStore, StoreError};

/// What a caller tells the user about a session rebuilt from its event log.
pub fn rebuilt_note(id: &str) -> String {
    format!(
        "session {id}: both copies of its checkpoint were unreadable; the conversation was \
         rebuilt from its event log (tool results only as far as the log kept them). Its \
         permission mode and grants could not be verified: it continues in `interactive` \
         mode with no session grants. The damaged files are kept beside it as *.corrupt"
    )
}

impl SessionStore {
    /// Loads a session like [`SessionStore::load`]; when both checkpoint copies are corrupt
    /// and the event log holds at least one turn, the session rebuilt from that log, with
    /// the note to show (see [`rebuilt_note`]). Nothing is written.
    pub fn load_or_rebuild(&self, id: &str) -> Result<(SavedSession, Option<String>), StoreError> {
        match self.load(id) {
            Ok(s) => Ok((s, None)),
            Err(e @ StoreError::Corrupt { .. }) => {
                let events = self.read_events(id)?;
                match rebuild(self, id, &events) {
                    Some(s) => {
                        tracing::warn!(error = %e, "session rebuilt from its event log");
                        Ok((s, Some(rebuilt_note(id))))
                    }
                    None => Err(e),
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Keeps the damaged checkpoint copies of a rebuilt session as `<name>.corrupt` (once:
    /// an existing copy is not replaced), before a save replaces them.
    pub fn keep_corrupt(&self, id: &str) -> Result<(), StoreError> {
        let dir = self.session_dir(id)?;
        for name in ["state.json", "state.json.bak"] {
            let (from, to) = (dir.join(name), dir.join(format!("{name}.corrupt")));
            if from.exists() && !to.exists() {
                std::fs::copy(&from, &to).map_err(|e| {
                    StoreError::from_io(
                        format!("keeping {} as {}", from.display(), to.display()),
                        e,
                    )
                })?;
            }
        }
        Ok(())
    }
}

/// The session as its event log tells it; `None` when the log has no turn.
pub fn rebuild(store: &SessionStore, id: &str, events: &[Event]) -> Option<SavedSession> {
    let mut b = Builder::default();
    for e in events {
        b.event(e);
    }
    b.flush();
    if b.turns == 0 {
        return None;
    }
    let log = store.session_dir(id).ok()?.join("events.jsonl");
    let updated = std::fs::metadata(&log)
        .and_then(|m| m.modified())
        .map(|t| {
            chrono::DateTime::<chrono::Utc>::from(t)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        })
        .unwrap_or_else(|_| now());
    let state_dir = store.root().parent().unwrap_or(store.root());
    let workspace = cairn_vcs::workspace_of_session(state_dir, id)
        .map(|w| w.display().to_string())
        .unwrap_or_default();
    Some(SavedSession {
        session_id: id.to_string(),
        name: derive_name(&b.messages),
        name_source: String::new(),
        workspace,
        model: b.model,
        provider: String::new(),
        permissions: PermissionState::default(),
        turns: b.turns,
        todos: b.todos,
        usage: b.usage,
        cost_usd: b.cost,
        created_at: b.first_time.unwrap_or_else(|| updated.clone()),
        updated_at: updated,
        protocol_version: cairn_protocol::PROTOCOL_VERSION,
        turn_marks: b.marks,
        worktree: b.worktree,
        messages: b.messages,
    })
}

/// Folds events into a history.
#[derive(Default)]
struct Builder {
    messages: Vec<Message>,
    /// Results of the last assistant message's calls, by call id, until the next message.
    results: BTreeMap<String, Message>,
    turns: u32,
    model: String,
    todos: Vec<cairn_protocol::TodoItem>,
    usage: cairn_protocol::TokenUsage,
    cost: f64,
    first_time: Option<String>,
    marks: Vec<TurnMark>,
    /// The worktree its turns ran in (from `turn_start`).
    worktree: Option<String>,
}

impl Builder {
    fn event(&mut self, e: &Event) {
        match e {
            Event::TurnStart(t) => {
                self.flush();
                if let Some(w) = &t.worktree {
                    self.worktree = Some(w.name.clone());
                }
                self.turns = self.turns.max(t.turn);
                self.messages.push(Message::user(t.input.clone()));
            }
            Event::QueueSteering(q) => {
                self.flush();
                self.messages.push(Message::user(q.text.clone()));
            }
            Event::LlmRequest(r) => {
                self.model = r.model.clone();
                self.first_time.get_or_insert_with(|| r.log_time.clone());
            }
            Event::AssistantMessage(a) => {
                self.flush();
                let content = if a.text.is_empty() {
                    Vec::new()
                } else {
                    vec![ContentPart::Text {
                        text: a.text.clone(),
                    }]
                };
                self.messages.push(Message::Assistant {
                    content,
                    tool_calls: Vec::new(),
                    usage: None,
                });
            }
            Event::ToolProposed(p) => {
                if let Some(Message::Assistant { tool_calls, .. }) = self.messages.last_mut() {
                    if !tool_calls.iter().any(|c| c.id == p.req_id) {
                        tool_calls.push(ToolCall {
                            id: p.req_id.clone(),
                            name: p.name.clone(),
                            arguments: p.arguments.to_string(),
                        });
                    }
                }
            }
            Event::ToolFinished(f) => {
                let content = match (&f.result_preview, &f.reason) {
                    (Some(p), _) if f.status == ToolStatus::Ok => p.clone(),
                    (p, r) => serde_json::json!({
                        "error": r.clone().or_else(|| p.clone()).unwrap_or_default(),
                    })
                    .to_string(),
                };
                self.results.insert(
                    f.req_id.clone(),
                    Message::Tool(ToolResult {
                        call_id: f.req_id.clone(),
                        name: f.name.clone(),
                        content,
                        status: f.status,
                        images: Vec::new(),
                    }),
                );
            }
            Event::TodosUpdated(t) => self.todos = t.todos.clone(),
            Event::TurnEnd(t) => {
                self.flush();
                if let Some(u) = &t.usage {
                    self.usage.add(u);
                }
                self.cost += t.cost_usd.unwrap_or(0.0);
                if self.turns > 0 {
                    self.marks.retain(|m| m.turn != self.turns);
                    self.marks.push(TurnMark {
                        turn: self.turns,
                        messages: self.messages.len(),
                    });
                }
            }
            _ => {}
        }
    }

    /// Answers the last assistant message's calls, in order; a call whose end the log does
    /// not show is closed as interrupted.
    fn flush(&mut self) {
        let calls = match self.messages.last() {
            Some(Message::Assistant { tool_calls, .. }) => tool_calls.clone(),
            _ => {
                self.results.clear();
                return;
            }
        };
        for call in calls {
            let result = self.results.remove(&call.id).unwrap_or_else(|| {
                Message::Tool(ToolResult {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    content: serde_json::json!({
                        "error": "the event log does not show how this call ended",
                        "error_type": "interrupted",
                    })
                    .to_string(),
                    status: ToolStatus::Interrupted,
                    images: Vec::new(),
                })
            });
            self.messages.push(result);
        }
        self.results.clear();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn ev(json: &str) -> Event {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn a_turn_with_a_tool_call_is_rebuilt_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::new(tmp.path());
        let events = vec![
            ev(
                r#"{"type":"turn_start","data":{"taskId":"t","input":"make a","sessionId":"s","turn":1}}"#,
            ),
            ev(
                r#"{"type":"llm_request","data":{"reqId":"r","taskId":"t","logTime":"2026-01-01T00:00:00Z","model":"m1","msgCount":1,"toolCount":1}}"#,
            ),
            ev(
                r#"{"type":"assistant_message","data":{"text":"","reasoning":"","tool_calls":["write_file"],"reqId":"r","taskId":"t","logTime":"x"}}"#,
            ),
            ev(
                r#"{"type":"tool_proposed","data":{"reqId":"c1","name":"write_file","arguments":{"path":"a"},"taskId":"t"}}"#,
            ),
            ev(
                r#"{"type":"tool_finished","data":{"taskId":"t","reqId":"c1","name":"write_file","status":"ok","result_preview":"Created a"}}"#,
            ),
            ev(
                r#"{"type":"assistant_message","data":{"text":"done","reasoning":"","tool_calls":[],"reqId":"r2","taskId":"t","logTime":"x"}}"#,
            ),
            ev(
                r#"{"type":"turn_end","data":{"status":"completed","iterations":2,"produced_files":[],"taskId":"t"}}"#,
            ),
        ];
        let s = rebuild(&store, "s", &events).unwrap();
        assert_eq!(s.turns, 1);
        assert_eq!(s.model, "m1");
        assert_eq!(s.permissions, PermissionState::default());
        assert_eq!(s.messages.len(), 4);
        assert!(
            matches!(&s.messages[1], Message::Assistant { tool_calls, .. } if tool_calls[0].id == "c1")
        );
        assert!(matches!(&s.messages[2], Message::Tool(r) if r.content == "Created a"));
        assert_eq!(s.messages[3].text(), "done");
        assert_eq!(
            s.turn_marks,
            vec![TurnMark {
                turn: 1,
                messages: 4
            }]
        );
        assert!(rebuild(&store, "s", &[]).is_none());
    }
}
