//! Conversation history: system, user, assistant and tool messages.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::tool::ToolStatus;

/// One part of a user or assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum ContentPart {
    /// Plain text.
    Text { text: String },
    /// Model reasoning ("thinking") text.
    Reasoning { text: String },
    /// An image, inline as base64 data.
    Image {
        #[serde(rename = "mimeType")]
        mime_type: String,
        data: String,
    },
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolCall {
    /// Provider-assigned call id; pairs the call with its result.
    pub id: String,
    /// Tool name as the model saw it.
    pub name: String,
    /// Raw JSON argument text exactly as the model produced it.
    pub arguments: String,
}

/// The result of one tool call, always paired with a [`ToolCall`] in history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ToolResult {
    /// Id of the call this answers.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Text content handed back to the model.
    pub content: String,
    /// How the call ended.
    pub status: ToolStatus,
    /// Image parts handed back with the text (e.g. `read_image`); empty for most tools.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ContentPart>,
}

/// Token accounting for one LLM response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cached_input_tokens: u64,
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Input tokens written to a provider-side prompt cache (billed at a premium by some).
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl TokenUsage {
    /// Adds another response's usage.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }

    /// Input plus output tokens.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// One message of the conversation history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(tag = "role", rename_all = "snake_case")]
#[ts(export)]
pub enum Message {
    /// System instructions.
    System { content: String },
    /// User input: text and images.
    User { content: Vec<ContentPart> },
    /// A model reply: text, reasoning and tool calls.
    Assistant {
        content: Vec<ContentPart>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        usage: Option<TokenUsage>,
    },
    /// The result of one tool call.
    Tool(ToolResult),
}

impl Message {
    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Message::System {
            content: text.into(),
        }
    }

    /// A user message with one text part.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User {
            content: vec![ContentPart::Text { text: text.into() }],
        }
    }

    /// An assistant message with text only.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        Message::Assistant {
            content: vec![ContentPart::Text { text: text.into() }],
            tool_calls: Vec::new(),
            usage: None,
        }
    }

    /// Concatenated text parts (reasoning and images excluded).
    pub fn text(&self) -> String {
        match self {
            Message::System { content } => content.clone(),
            Message::User { content } | Message::Assistant { content, .. } => content
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(""),
            Message::Tool(r) => r.content.clone(),
        }
    }

    /// Concatenated reasoning parts of an assistant message.
    pub fn reasoning(&self) -> String {
        match self {
            Message::Assistant { content, .. } => content
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Reasoning { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(""),
            _ => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_round_trips_with_role_tag() -> Result<(), serde_json::Error> {
        let m = Message::Assistant {
            content: vec![
                ContentPart::Reasoning { text: "hm".into() },
                ContentPart::Text { text: "hi".into() },
            ],
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: "{\"path\":\"a\"}".into(),
            }],
            usage: None,
        };
        let v = serde_json::to_value(&m)?;
        assert_eq!(v["role"], "assistant");
        assert_eq!(v["content"][0]["type"], "reasoning");
        let back: Message = serde_json::from_value(v)?;
        assert_eq!(back, m);
        assert_eq!(back.text(), "hi");
        assert_eq!(back.reasoning(), "hm");
        Ok(())
    }

    #[test]
    fn tool_message_is_flat() -> Result<(), serde_json::Error> {
        let m = Message::Tool(ToolResult {
            call_id: "c1".into(),
            name: "x".into(),
            content: "out".into(),
            status: ToolStatus::Ok,
            images: Vec::new(),
        });
        let v = serde_json::to_value(&m)?;
        assert_eq!(v["role"], "tool");
        assert_eq!(v["call_id"], "c1");
        assert_eq!(v["status"], "ok");
        Ok(())
    }
}
