//! What an MCP server may ask of the session while one of its tools runs: information from
//! the user (elicitation) and an answer from the session's own model (sampling), each only
//! with the user's say.

use cairn_protocol::{
    AlwaysAllow, ApprovalDecision, ApprovalRequest, ElicitationAnswer, ElicitationMode,
    ElicitationRequested, Event, Message, Mode, PermissionRequired,
};
use tokio_util::sync::CancellationToken;

use crate::host::ToolHost;
use crate::locks::lock;

/// A server's `sampling/createMessage`, as text.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    /// The system prompt the server asks for.
    pub system: Option<String>,
    /// The conversation the server gives: (`user` or `assistant`, text).
    pub messages: Vec<(String, String)>,
    /// Most tokens the answer may have.
    pub max_tokens: u32,
}

/// The session's model's answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingAnswer {
    /// The answer.
    pub text: String,
    /// The model that gave it.
    pub model: String,
}

/// The session allowance an "always" answer to `server`'s sampling requests grants.
pub fn sampling_allowance(server: &str) -> String {
    format!("mcp__{server}__sampling")
}

/// Characters of the server's conversation shown in the approval.
const SHOWN_CHARS: usize = 4_000;

impl ToolHost {
    /// Asks the user for what `server` wants (emits `elicitation_requested`, waits for the
    /// face's answer); declined where nobody can be asked.
    pub async fn elicit(
        &self,
        server: &str,
        message: String,
        mode: ElicitationMode,
        schema: Option<serde_json::Value>,
        url: Option<String>,
    ) -> ElicitationAnswer {
        let Some(s) = self.shared() else {
            return ElicitationAnswer::Decline {
                reason: crate::approval::NO_USER_TO_ELICIT.into(),
            };
        };
        let _one = s.asking.lock().await;
        let request = ElicitationRequested {
            task_id: s.task_id.clone(),
            req_id: self.req_id().to_string(),
            request_id: crate::approval::new_request_id(),
            server: server.to_string(),
            message,
            mode,
            schema,
            url,
        };
        self.emit(Event::ElicitationRequested(request.clone()))
            .await;
        s.approver.elicit(request).await
    }

    /// Answers `server`'s sampling request with the session's own model, once the user
    /// allowed it (like a tool call: once, or always for this server in this session);
    /// never in discuss mode. The request's tokens and cost count in the turn's usage.
    pub async fn sample(
        &self,
        server: &str,
        request: SamplingRequest,
    ) -> Result<SamplingAnswer, String> {
        let Some(s) = self.shared() else {
            return Err("no user is available to allow the request".into());
        };
        let allowance = sampling_allowance(server);
        let allowed = {
            let p = lock(&s.permissions);
            if p.mode() == Mode::Discuss {
                return Err(
                    "the session is in discuss mode, where MCP servers may not use the model"
                        .into(),
                );
            }
            p.state().allow_tools.contains(&allowance)
        };
        if !s.approver.asks_a_person() {
            return Err(
                "no person can allow it in this run (a fixed --approve policy); MCP servers \
                 may use the model only with a person's approval"
                    .into(),
            );
        }
        let _one = s.asking.lock().await;
        if !allowed {
            let shown = shown_conversation(&request);
            let approval = ApprovalRequest {
                task_id: s.task_id.clone(),
                req_id: self.req_id().to_string(),
                request_id: crate::approval::new_request_id(),
                name: allowance.clone(),
                arguments: serde_json::json!({
                    "server": server,
                    "systemPrompt": request.system,
                    "conversation": shown,
                    "maxTokens": request.max_tokens,
                }),
                reason: format!(
                    "MCP server `{server}` asks your model ({}) to answer it (up to {} tokens); \
                     the answer goes to the server and counts in this session's usage",
                    s.model, request.max_tokens
                ),
                category: SAMPLING_CATEGORY.into(),
                always_allow: Some(AlwaysAllow::Tool {
                    name: allowance.clone(),
                }),
            };
            self.emit(Event::PermissionRequired(PermissionRequired::from(
                &approval,
            )))
            .await;
            match s.approver.approve(approval).await {
                ApprovalDecision::Deny => {
                    return Err(format!(
                        "the user did not allow it ({})",
                        s.approver.deny_reason()
                    ))
                }
                ApprovalDecision::Once => {}
                ApprovalDecision::AlwaysTool | ApprovalDecision::AlwaysCommand => {
                    lock(&s.permissions).allow_tool_for_session(&allowance);
                }
            }
        }
        let mut messages = Vec::new();
        if let Some(system) = request.system.as_deref().filter(|t| !t.trim().is_empty()) {
            messages.push(Message::system(system));
        }
        for (role, text) in &request.messages {
            messages.push(match role.as_str() {
                "assistant" => Message::assistant_text(text.clone()),
                _ => Message::user(text.clone()),
            });
        }
        let llm_request = crate::llm::LlmRequest {
            model: s.model.clone(),
            messages,
            tools: Vec::new(),
            reasoning_effort: None,
            req_id: format!("{SAMPLING_REQ_PREFIX}{}", uuid::Uuid::new_v4()),
        };
        let Some(llm) = &s.llm else {
            return Err("there is no model to answer with here (not a session)".into());
        };
        let stream = llm.stream(llm_request, CancellationToken::new());
        let (answer, usage) = crate::llm::answer_text_and_usage(stream).await;
        if let Some(u) = &usage {
            let cost = s.pricing.as_ref().and_then(|p| p.cost_usd(&s.model, u));
            self.add_usage(u, cost);
        }
        match answer {
            Ok(text) => Ok(SamplingAnswer {
                text,
                model: s.model.clone(),
            }),
            Err(Some(outcome)) => Err(format!("the model failed: {}", outcome.describe())),
            Err(None) => Err("the model's answer ended early".into()),
        }
    }
}

/// The approval category of an MCP server's sampling request.
pub const SAMPLING_CATEGORY: &str = "mcp_sampling";

/// The `req_id` prefix of sampling requests (test kits tell them apart by it).
pub const SAMPLING_REQ_PREFIX: &str = "mcp-sampling-";

fn shown_conversation(request: &SamplingRequest) -> String {
    let all: Vec<String> = request
        .messages
        .iter()
        .map(|(role, text)| format!("{role}: {text}"))
        .collect();
    let all = all.join("\n");
    let mut shown: String = all.chars().take(SHOWN_CHARS).collect();
    if shown.len() < all.len() {
        shown.push('…');
    }
    shown
}
