//! What a server asks of the user and the model while one of its tools runs: an elicitation
//! (a form or a page to visit) goes to the user through the session's faces, a sampling
//! request to the session's own model once the user allows it. Both reach the call running
//! now (the latest of the server's calls); with none running they are refused in words.
#![allow(deprecated)] // Sampling is part of 2025-11-25, the version Cairn announces.

use std::sync::Arc;

use cairn_engine::host_mcp::SamplingRequest;
use cairn_engine::ToolHost;
use cairn_protocol::{ElicitationAnswer, ElicitationMode};
use rmcp::model::{
    ContextInclusion, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction, ErrorCode, ErrorData, Role, SamplingMessage,
    SamplingMessageContentBlock,
};
use serde_json::{Map, Value};

/// The host of the server's tool call running now, if any.
pub type RunningCall = Arc<dyn Fn() -> Option<ToolHost> + Send + Sync>;

/// Why a request came when none of the server's tools was running.
const NO_CALL: &str = "none of this server's tools is running for a Cairn session now, so \
                       nobody can be asked";

/// Asks the user for what `server` wants; defaults of the schema fill in the fields the user
/// left out (SEP-1034).
pub async fn elicit(
    server: &str,
    running: Option<ToolHost>,
    request: ElicitRequestParams,
) -> ElicitResult {
    let Some(host) = running else {
        tracing::info!(server, "MCP elicitation declined: {NO_CALL}");
        return ElicitResult::new(ElicitationAction::Decline);
    };
    let (message, mode, schema, url) = match request {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            let schema = serde_json::to_value(&requested_schema).ok();
            (message, ElicitationMode::Form, schema, None)
        }
        ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
            (message, ElicitationMode::Url, None, Some(url))
        }
        _ => return ElicitResult::new(ElicitationAction::Decline),
    };
    let answer = host
        .elicit(server, message, mode, schema.clone(), url)
        .await;
    match answer {
        ElicitationAnswer::Accept { content } => {
            let mut result = ElicitResult::new(ElicitationAction::Accept);
            if mode == ElicitationMode::Form {
                let content = with_defaults(schema.as_ref(), content);
                result = result.with_content(Value::Object(content));
            }
            result
        }
        ElicitationAnswer::Decline { reason } => {
            if !reason.is_empty() {
                tracing::info!(server, "MCP elicitation declined: {reason}");
            }
            ElicitResult::new(ElicitationAction::Decline)
        }
        ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
    }
}

/// `content` with each field the user left out set to the schema's default, when it has one.
pub fn with_defaults(
    schema: Option<&Value>,
    mut content: Map<String, Value>,
) -> Map<String, Value> {
    let Some(props) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return content;
    };
    for (name, prop) in props {
        if content.get(name).is_none_or(Value::is_null) {
            if let Some(default) = prop.get("default") {
                content.insert(name.clone(), default.clone());
            } else {
                content.remove(name);
            }
        }
    }
    content
}

/// Answers `server`'s sampling request with the session's model, once the user allows it.
/// The conversation is never the server's: `includeContext` other than `none` is refused.
pub async fn sample(
    server: &str,
    running: Option<ToolHost>,
    params: CreateMessageRequestParams,
) -> Result<CreateMessageResult, ErrorData> {
    if matches!(
        params.include_context,
        Some(ContextInclusion::ThisServer | ContextInclusion::AllServers)
    ) {
        return Err(ErrorData::invalid_params(
            "Cairn does not share its conversation with MCP servers: includeContext must be \
             \"none\"",
            None,
        ));
    }
    let Some(host) = running else {
        return Err(ErrorData::invalid_request(NO_CALL, None));
    };
    let messages = params.messages.iter().map(as_text).collect();
    let request = SamplingRequest {
        system: params.system_prompt.clone(),
        messages,
        max_tokens: params.max_tokens,
    };
    match host.sample(server, request).await {
        Ok(answer) => Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(answer.text),
            answer.model,
        )
        .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN)),
        // -1: the user rejected the request (the specification's code).
        Err(why) => Err(ErrorData::new(
            ErrorCode(-1),
            format!("sampling refused: {why}"),
            None,
        )),
    }
}

/// One message as (role, text); what is not text is named, not sent.
fn as_text(m: &SamplingMessage) -> (String, String) {
    let role = match m.role {
        Role::Assistant => "assistant",
        _ => "user",
    };
    let parts: Vec<String> = m
        .content
        .clone()
        .into_vec()
        .into_iter()
        .map(|b| match b {
            SamplingMessageContentBlock::Text(t) => t.text,
            SamplingMessageContentBlock::Image(i) => format!("[image: {}]", i.mime_type),
            SamplingMessageContentBlock::Audio(a) => format!("[audio: {}]", a.mime_type),
            _ => "[tool content]".to_string(),
        })
        .collect();
    (role.to_string(), parts.join("\n"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_in_what_the_user_left_out_and_nothing_else() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "email": {"type": "string"},
            "verified": {"type": "boolean", "default": true},
        }});
        let given = json!({"age": 41, "email": null, "verified": false});
        let out = with_defaults(Some(&schema), given.as_object().unwrap().clone());
        assert_eq!(
            Value::Object(out),
            json!({"name": "John Doe", "age": 41, "verified": false})
        );
    }
}
