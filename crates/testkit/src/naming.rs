//! Session-naming requests seen by the mock server: answered apart from the script (so tests
//! written before sessions named themselves need no script changes) and kept apart from
//! [`crate::MockLlmServer::requests`].
//!
//! A naming request is one without tools whose text holds one of [`MARKERS`] (a phrase of
//! each language's naming instruction; the runtime's tests check every instruction holds
//! one). The mock's title is the first line of the request's user text, so a session is
//! named after its first message as before.

use serde_json::Value;

/// A phrase of the naming instruction in each language the prompts support.
pub const MARKERS: &[&str] = &[
    "Give this conversation a short title",
    "为这段对话起一个简短的标题",
    "為這段對話取一個簡短的標題",
    "この会話に 20 文字以内の短いタイトル",
    "이 대화에 20자 이내의 짧은 제목",
    "Pon a esta conversación un título breve",
];

/// The mock's title for `body` when it is a naming request.
pub fn title_for(body: &Value) -> Option<String> {
    let offers_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    if offers_tools {
        return None;
    }
    let text = body.to_string();
    if !MARKERS.iter().any(|m| text.contains(m)) {
        return None;
    }
    let user = last_user_text(body).unwrap_or_default();
    let line = user.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(60).collect())
}

/// The text of the last user message (Chat Completions, Responses or Anthropic Messages).
fn last_user_text(body: &Value) -> Option<String> {
    let list = body["messages"]
        .as_array()
        .or_else(|| body["input"].as_array())?;
    let user = list.iter().rev().find(|m| m["role"] == "user")?;
    match &user["content"] {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn naming_requests_are_told_from_turns_in_every_wire_format() {
        let chat = json!({"messages": [
            {"role": "system", "content": "Give this conversation a short title of at most 6 words."},
            {"role": "user", "content": "fix the flaky test\nin ci"}]});
        assert_eq!(title_for(&chat).as_deref(), Some("fix the flaky test"));
        let responses = json!({"instructions": "Give this conversation a short title.",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "hello"}]}]});
        assert_eq!(title_for(&responses).as_deref(), Some("hello"));
        let turn = json!({"messages": [{"role": "user", "content": "Give this conversation a short title"}],
            "tools": [{"type": "function"}]});
        assert_eq!(title_for(&turn), None);
        let other = json!({"messages": [{"role": "user", "content": "hi"}]});
        assert_eq!(title_for(&other), None);
    }
}
