//! The user's hooks (gates) at the points of a turn: session start and prompt submit at its
//! beginning, tool use around each call, permission requests, the turn's end.

use cairn_protocol::{ContentPart, Message};

use super::TurnRunner;
use crate::gate::{GateInput, GatePoint, GateVerdict};

/// Most times one user turn continues because a `Stop` gate blocked its end.
pub(crate) const MAX_STOP_CONTINUES: u32 = 3;

impl TurnRunner<'_> {
    /// Runs the gates of `input.point`; nothing configured answers nothing.
    pub(crate) async fn gate(&self, mut input: GateInput) -> GateVerdict {
        match &self.gate {
            Some(g) if g.wants(input.point) => {
                input.mode = Some(crate::locks::lock(&self.inner.permissions).mode());
                input.history = self.state.messages.clone();
                g.check(&input).await
            }
            _ => GateVerdict::default(),
        }
    }

    /// Whether a gate is configured for `point`.
    pub(crate) fn gates(&self, point: GatePoint) -> bool {
        self.gate.as_ref().is_some_and(|g| g.wants(point))
    }

    /// `SessionStart` (once per session in this process) and `UserPromptSubmit` for new
    /// input: their context joins the user's message; a prompt block takes the message back
    /// and returns the reason.
    pub(crate) async fn gate_input(&mut self, prompt: Option<&str>) -> Option<String> {
        let first = !self
            .inner
            .started
            .swap(true, std::sync::atomic::Ordering::SeqCst);
        let mut context = Vec::new();
        if first && self.gates(GatePoint::SessionStart) {
            let mut input = GateInput::at(GatePoint::SessionStart);
            // The new input is already in the history: anything before it is a resume.
            let earlier = self.state.messages.len() > 1;
            input.source = Some(if earlier { "resume" } else { "startup" }.to_string());
            context.extend(self.gate(input).await.context);
        }
        if let Some(prompt) = prompt.filter(|_| self.gates(GatePoint::UserPromptSubmit)) {
            let mut input = GateInput::at(GatePoint::UserPromptSubmit);
            input.prompt = Some(prompt.to_string());
            let verdict = self.gate(input).await;
            if let Some(reason) = verdict.block {
                if matches!(self.state.messages.last(), Some(Message::User { .. })) {
                    self.state.messages.pop();
                    self.save_state();
                }
                return Some(reason);
            }
            context.extend(verdict.context);
        }
        if !context.is_empty() {
            self.add_context(&context);
        }
        None
    }

    /// Appends hook context to the last user message (or as a user message of its own).
    pub(crate) fn add_context(&mut self, context: &[String]) {
        let text = format!("<hook_context>\n{}\n</hook_context>", context.join("\n"));
        match self.state.messages.last_mut() {
            Some(Message::User { content }) => content.push(ContentPart::Text { text }),
            _ => self.state.messages.push(Message::user(text)),
        }
        self.save_state();
    }

    /// `PreToolUse` for a call: whether a gate blocks it, asks for it or approves it.
    pub(crate) async fn gate_pre_tool(
        &self,
        call_id: &str,
        name: &str,
        args: &serde_json::Value,
        writes: Vec<String>,
    ) -> GateVerdict {
        if !self.gates(GatePoint::PreToolUse) {
            return GateVerdict::default();
        }
        let mut input = GateInput::at(GatePoint::PreToolUse);
        input.tool_name = Some(name.to_string());
        input.tool_input = Some(args.clone());
        input.tool_use_id = Some(call_id.to_string());
        input.writes = writes;
        self.gate(input).await
    }

    /// `PostToolUse` for a call: text to append to its result (a block's reason, context).
    pub(crate) async fn gate_post_tool(
        &self,
        call_id: &str,
        name: &str,
        args: &serde_json::Value,
        content: &str,
    ) -> Option<String> {
        if !self.gates(GatePoint::PostToolUse) {
            return None;
        }
        let mut input = GateInput::at(GatePoint::PostToolUse);
        input.tool_name = Some(name.to_string());
        input.tool_input = Some(args.clone());
        input.tool_use_id = Some(call_id.to_string());
        input.tool_response = Some(
            serde_json::from_str(content)
                .unwrap_or_else(|_| serde_json::Value::String(content.into())),
        );
        let verdict = self.gate(input).await;
        let mut notes: Vec<String> = verdict.block.into_iter().collect();
        notes.extend(verdict.context);
        (!notes.is_empty()).then(|| format!("\n\n[PostToolUse hook]\n{}", notes.join("\n")))
    }

    /// `PermissionRequest`: `Some(true)` approved by a user-level gate (only when the call
    /// may be approved without a person), `Some(false)` blocked (with the reason), `None`
    /// no opinion.
    pub(crate) async fn gate_permission(
        &self,
        call_id: &str,
        name: &str,
        args: &serde_json::Value,
        person_required: bool,
    ) -> (Option<bool>, Option<String>) {
        if !self.gates(GatePoint::PermissionRequest) {
            return (None, None);
        }
        let mut input = GateInput::at(GatePoint::PermissionRequest);
        input.tool_name = Some(name.to_string());
        input.tool_input = Some(args.clone());
        input.tool_use_id = Some(call_id.to_string());
        let verdict = self.gate(input).await;
        if let Some(reason) = verdict.block {
            return (Some(false), Some(reason));
        }
        if verdict.approve && !person_required {
            return (Some(true), None);
        }
        (None, None)
    }

    /// `Notification`: something waits for the user (never blocks the turn).
    pub(crate) fn gate_notify(&self, message: String) {
        let Some(g) = self
            .gate
            .clone()
            .filter(|g| g.wants(GatePoint::Notification))
        else {
            return;
        };
        let mut input = GateInput::at(GatePoint::Notification);
        input.message = Some(message);
        tokio::spawn(async move {
            let _ = g.check(&input).await;
        });
    }
}
