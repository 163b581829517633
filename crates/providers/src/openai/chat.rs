//! OpenAI Chat Completions: request bodies and the streamed chunk parser.

use std::collections::{BTreeMap, VecDeque};

use cairn_engine::{LlmChunk, LlmOutcome, LlmRequest};
use cairn_protocol::{ContentPart, Message, TokenUsage, ToolCall};
use serde_json::{json, Value};

use super::chat_fast;
use super::config::{Compat, OpenAiConfig};
use crate::classify::{outcome_for_stream_error, ErrorInfo};
use crate::fastjson::Str;
use crate::models::is_deepseek;
use crate::parser::{malformed, push_text, Flow, StreamParser, TextKind};
use crate::redact::Redactor;
use crate::thinking::{openai_effort, request_level};

/// Whether requests of `model` get DeepSeek's treatment under this configuration.
pub(crate) fn deepseek_quirks(cfg: &OpenAiConfig, model: &str) -> bool {
    match cfg.compat {
        Compat::DeepSeek => true,
        Compat::Auto => is_deepseek(model, cfg.base()),
        _ => false,
    }
}

/// The streamed `/chat/completions` body for `req`.
pub(crate) fn request_body(req: &LlmRequest, cfg: &OpenAiConfig) -> Value {
    let deepseek = deepseek_quirks(cfg, &req.model);
    let messages = with_tool_images(&req.messages, deepseek);
    let mut body = json!({
        "model": req.model,
        "messages": messages,
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if let Some(n) = cfg.max_output_tokens {
        // OpenAI's reasoning models take only the newer name; compatible servers the older.
        let field = match cfg.compat {
            Compat::OpenAi => "max_completion_tokens",
            Compat::Auto if !deepseek => "max_completion_tokens",
            _ => "max_tokens",
        };
        body[field] = json!(n);
    }
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({ "type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters,
                }})
            })
            .collect();
        body["tools"] = Value::Array(tools);
    }
    let level = request_level(req.reasoning_effort, cfg.thinking_level);
    let effort = level
        .filter(|_| !deepseek)
        .and_then(|l| openai_effort(l, &cfg.catalog.lookup(&req.model)));
    match (effort, cfg.compat) {
        (Some(e), Compat::OpenRouter) => body["reasoning"] = json!({ "effort": e }),
        (Some(e), _) => body["reasoning_effort"] = json!(e),
        (None, _) => {
            if level.is_some() {
                tracing::debug!(model = %req.model, "thinking level not applicable to this model; skipped");
            }
        }
    }
    body
}

/// A `data:` URL for an inline image.
pub(crate) fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

/// Text parts joined (reasoning and images excluded).
fn joined_text(parts: &[ContentPart]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            ContentPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// The history in Chat Completions form. Tool messages carry text only on this API, so the
/// images of a run of tool results follow it as one user message naming their calls.
fn with_tool_images(history: &[Message], deepseek: bool) -> Vec<Value> {
    let mut out = Vec::with_capacity(history.len());
    let mut pending: Vec<Value> = Vec::new();
    for m in history {
        if !matches!(m, Message::Tool(_)) && !pending.is_empty() {
            out.push(json!({ "role": "user", "content": std::mem::take(&mut pending) }));
        }
        out.push(message(m, deepseek));
        if let Message::Tool(r) = m {
            pending.extend(tool_image_parts(r));
        }
    }
    if !pending.is_empty() {
        out.push(json!({ "role": "user", "content": pending }));
    }
    out
}

/// A label and the image parts of one tool result (nothing when it has no images).
fn tool_image_parts(r: &cairn_protocol::ToolResult) -> Vec<Value> {
    let images: Vec<Value> = r
        .images
        .iter()
        .filter_map(|p| match p {
            ContentPart::Image { mime_type, data } => Some(json!({
                "type": "image_url", "image_url": { "url": data_url(mime_type, data) },
            })),
            _ => None,
        })
        .collect();
    if images.is_empty() {
        return images;
    }
    let label = format!("[images returned by the {} call {}]", r.name, r.call_id);
    std::iter::once(json!({ "type": "text", "text": label }))
        .chain(images)
        .collect()
}

/// One history message in Chat Completions form.
fn message(m: &Message, deepseek: bool) -> Value {
    match m {
        Message::System { content } => json!({ "role": "system", "content": content }),
        Message::User { content } => {
            let has_image = content
                .iter()
                .any(|p| matches!(p, ContentPart::Image { .. }));
            if !has_image {
                return json!({ "role": "user", "content": joined_text(content) });
            }
            let parts: Vec<Value> = content
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Text { text } => Some(json!({ "type": "text", "text": text })),
                    ContentPart::Image { mime_type, data } => Some(json!({
                        "type": "image_url", "image_url": { "url": data_url(mime_type, data) },
                    })),
                    ContentPart::Reasoning { .. } => None,
                })
                .collect();
            json!({ "role": "user", "content": parts })
        }
        Message::Assistant {
            content,
            tool_calls,
            ..
        } => {
            let text = joined_text(content);
            let mut v = json!({ "role": "assistant", "content": text });
            if !tool_calls.is_empty() {
                if text.is_empty() {
                    v["content"] = Value::Null;
                }
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|c| {
                        json!({ "id": c.id, "type": "function",
                                "function": { "name": c.name,
                                              "arguments": crate::args::as_object_text(&c.arguments) } })
                    })
                    .collect();
                v["tool_calls"] = Value::Array(calls);
            }
            if deepseek {
                // DeepSeek's thinking mode requires the reasoning of tool-call turns echoed back.
                v["reasoning_content"] = json!(m.reasoning());
            }
            v
        }
        Message::Tool(r) => {
            json!({ "role": "tool", "tool_call_id": r.call_id, "content": r.content })
        }
    }
}

/// A tool call being assembled from fragments.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Parses `chat.completion.chunk` events.
pub(crate) struct ChatParser {
    req_id: String,
    redactor: Redactor,
    calls: BTreeMap<u64, PartialCall>,
    usage: Option<TokenUsage>,
    finish_reason: Option<String>,
    done: bool,
    /// Shapes of this response's plain chunks, for reading repeats quickly.
    shapes: crate::shape::Shapes<chat_fast::Field>,
}

impl ChatParser {
    /// A parser for one response.
    pub(crate) fn new(req_id: &str, redactor: Redactor) -> Self {
        ChatParser {
            req_id: req_id.to_string(),
            redactor,
            calls: BTreeMap::new(),
            usage: None,
            finish_reason: None,
            done: false,
            shapes: Default::default(),
        }
    }

    fn tool_fragments(&mut self, frags: &[Value]) {
        for (pos, f) in frags.iter().enumerate() {
            let index = f["index"].as_u64().unwrap_or(pos as u64);
            let call = self.calls.entry(index).or_default();
            if let Some(id) = f["id"].as_str().filter(|s| !s.is_empty()) {
                call.id = id.to_string();
            }
            let func = &f["function"];
            if let Some(name) = func["name"].as_str().filter(|s| !s.is_empty()) {
                call.name = name.to_string();
            }
            match &func["arguments"] {
                Value::String(s) => call.arguments.push_str(s),
                Value::Null => {}
                // Some servers send the arguments as an object.
                other => call.arguments.push_str(&other.to_string()),
            }
        }
    }
}

/// Token usage from a chat `usage` object.
pub(crate) fn usage(u: &Value) -> TokenUsage {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let cached = u["prompt_tokens_details"]["cached_tokens"]
        .as_u64()
        .or_else(|| u["prompt_cache_hit_tokens"].as_u64()) // DeepSeek
        .unwrap_or(0);
    TokenUsage {
        input_tokens: n(&u["prompt_tokens"]),
        output_tokens: n(&u["completion_tokens"]),
        cached_input_tokens: cached,
        reasoning_tokens: n(&u["completion_tokens_details"]["reasoning_tokens"]),
        cache_write_tokens: 0,
    }
}

impl StreamParser for ChatParser {
    fn feed(
        &mut self,
        _event: &str,
        data: &str,
        out: &mut VecDeque<LlmChunk>,
    ) -> Result<Flow, LlmOutcome> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(Flow::Done);
        }
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        if let Some(p) = chat_fast::plain_shaped(data, &mut self.shapes) {
            push_text(
                out,
                p.reasoning_content.as_ref().map(Str::as_str),
                TextKind::Reasoning,
            );
            push_text(
                out,
                p.reasoning.as_ref().map(Str::as_str),
                TextKind::Reasoning,
            );
            push_text(out, p.content.as_ref().map(Str::as_str), TextKind::Text);
            if let Some(reason) = p.finish_reason {
                self.finish_reason = Some(reason.0.into_owned());
            }
            return Ok(Flow::Continue);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| malformed("chat chunk", &e, data))?;
        if v.get("error").is_some_and(|e| !e.is_null()) {
            return Err(outcome_for_stream_error(
                &ErrorInfo::from_value(&v),
                &self.redactor,
            ));
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage(u));
        }
        let Some(choice) = v["choices"].as_array().and_then(|c| c.first()) else {
            return Ok(Flow::Continue);
        };
        // A non-streamed completion (a server that ignored `stream: true`) has `message`.
        let delta = choice.get("delta").unwrap_or(&choice["message"]);
        push_text(
            out,
            delta["reasoning_content"].as_str(),
            TextKind::Reasoning,
        );
        push_text(out, delta["reasoning"].as_str(), TextKind::Reasoning);
        push_text(out, delta["content"].as_str(), TextKind::Text);
        if let Some(frags) = delta["tool_calls"].as_array() {
            self.tool_fragments(frags);
        }
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(Flow::Continue)
    }

    fn is_complete(&self) -> bool {
        self.done || self.finish_reason.is_some()
    }

    fn finish(&mut self, out: &mut VecDeque<LlmChunk>) -> LlmOutcome {
        for (index, call) in std::mem::take(&mut self.calls) {
            if call.name.is_empty() && call.arguments.is_empty() {
                continue;
            }
            let id = if call.id.is_empty() {
                tracing::warn!(req_id = %self.req_id, index, "tool call without id; generating one");
                format!("call_{}_{index}", self.req_id)
            } else {
                call.id
            };
            out.push_back(LlmChunk::ToolCall(ToolCall {
                id,
                name: call.name,
                arguments: call.arguments,
            }));
        }
        if let Some(u) = self.usage.take() {
            out.push_back(LlmChunk::Usage(u));
        }
        if self.finish_reason.as_deref() == Some("length") {
            tracing::warn!(req_id = %self.req_id, "response cut at the output token limit");
        }
        LlmOutcome::completed()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_engine::{FailureKind, OutcomeStatus};

    #[test]
    fn arguments_that_are_not_an_object_go_back_as_one() {
        let call = |id: &str, args: &str| ToolCall {
            id: id.into(),
            name: "write_file".into(),
            arguments: args.into(),
        };
        let req = LlmRequest {
            model: "llama3".into(),
            messages: vec![
                Message::user("u"),
                Message::Assistant {
                    content: Vec::new(),
                    tool_calls: vec![call("a", "{broken json"), call("b", r#"{"path":"x"}"#)],
                    usage: None,
                },
            ],
            tools: Vec::new(),
            reasoning_effort: None,
            req_id: "r".into(),
        };
        let b = request_body(&req, &OpenAiConfig::default());
        let calls = b["messages"][1]["tool_calls"].as_array().unwrap();
        let args = |i: usize| {
            calls[i]["function"]["arguments"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        assert_eq!(
            serde_json::from_str::<Value>(&args(0)).unwrap(),
            json!({"_raw_arguments": "{broken json"})
        );
        assert_eq!(
            args(1),
            r#"{"path":"x"}"#,
            "valid arguments are sent unchanged"
        );
    }

    fn feed_all(p: &mut ChatParser, lines: &[&str]) -> (Vec<LlmChunk>, Result<Flow, LlmOutcome>) {
        let mut out = VecDeque::new();
        let mut last = Ok(Flow::Continue);
        for l in lines {
            last = p.feed("", l, &mut out);
            if last.is_err() {
                break;
            }
        }
        (out.into_iter().collect(), last)
    }

    #[test]
    fn tolerates_missing_index_and_id_and_object_arguments() {
        let mut p = ChatParser::new("r1", Redactor::default());
        let (chunks, flow) = feed_all(
            &mut p,
            &[
                r#"{"choices":[{"delta":{"reasoning":"hm","tool_calls":[{"function":{"name":"ls","arguments":{"path":"."}}}]}}]}"#,
                r#"{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"prompt_cache_hit_tokens":4}}"#,
            ],
        );
        assert_eq!(chunks, vec![LlmChunk::Reasoning("hm".into())]);
        assert_eq!(flow.unwrap(), Flow::Continue);
        assert!(
            p.is_complete(),
            "finish_reason without [DONE] counts as complete"
        );
        let mut out = VecDeque::new();
        assert_eq!(p.finish(&mut out), LlmOutcome::completed());
        let out: Vec<LlmChunk> = out.into_iter().collect();
        assert_eq!(
            out[0],
            LlmChunk::ToolCall(ToolCall {
                id: "call_r1_0".into(),
                name: "ls".into(),
                arguments: r#"{"path":"."}"#.into()
            })
        );
        assert_eq!(
            out[1],
            LlmChunk::Usage(TokenUsage {
                input_tokens: 9,
                output_tokens: 2,
                cached_input_tokens: 4,
                reasoning_tokens: 0,
                cache_write_tokens: 0
            })
        );
    }

    #[test]
    fn error_object_mid_stream_is_failed() {
        let mut p = ChatParser::new("r1", Redactor::new(["sk-abcdef-secret"]));
        let (_, r) = feed_all(
            &mut p,
            &[
                r#"{"error":{"message":"Rate limit for sk-abcdef-secret","code":"rate_limit_exceeded"}}"#,
            ],
        );
        let o = r.unwrap_err();
        assert_eq!(
            (o.status, o.kind),
            (OutcomeStatus::Failed, Some(FailureKind::RateLimited))
        );
        assert!(!o.message.unwrap().contains("secret"));
    }

    #[test]
    fn non_streamed_completion_is_understood() {
        let mut p = ChatParser::new("r1", Redactor::default());
        let body = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi","tool_calls":[
            {"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},"finish_reason":"tool_calls"}],
            "usage":{"prompt_tokens":3,"completion_tokens":1}}"#;
        let (chunks, flow) = feed_all(&mut p, &[body]);
        assert_eq!(chunks, vec![LlmChunk::Text("hi".into())]);
        assert_eq!(flow.unwrap(), Flow::Continue);
        assert!(p.is_complete());
        let mut out = VecDeque::new();
        p.finish(&mut out);
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn done_ends_and_garbage_is_malformed() {
        let mut p = ChatParser::new("r1", Redactor::default());
        assert_eq!(feed_all(&mut p, &["[DONE]"]).1.unwrap(), Flow::Done);
        let mut p = ChatParser::new("r1", Redactor::default());
        assert_eq!(
            feed_all(&mut p, &["{oops"]).1.unwrap_err().status,
            OutcomeStatus::Malformed
        );
        assert!(!p.is_complete());
    }
}
