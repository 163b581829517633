//! OpenAI Responses API: request bodies and the streamed event parser.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use cairn_engine::{LlmChunk, LlmOutcome, LlmRequest};
use cairn_protocol::{ContentPart, Message, TokenUsage, ToolCall};
use serde_json::{json, Value};

use super::chat::{data_url, deepseek_quirks};
use super::config::OpenAiConfig;
use crate::classify::{outcome_for_stream_error, ErrorInfo};
use crate::parser::{malformed, push_text, Flow, StreamParser, TextKind};
use crate::reasoning_cache::{anchor, message_anchor, ReasoningCache};
use crate::redact::Redactor;
use crate::thinking::{openai_effort, request_level};

/// The name of the local tool DeepSeek's server-side web search replaces.
const WEB_SEARCH: &str = "web_search";

/// The streamed `/responses` body for `req` (stateless: `store: false`); encrypted
/// reasoning of earlier replies is replayed from `reasoning`.
pub(crate) fn request_body(
    req: &LlmRequest,
    cfg: &OpenAiConfig,
    reasoning: &ReasoningCache<Vec<Value>>,
) -> Value {
    let mut instructions: Option<&str> = None;
    let mut input = Vec::new();
    for m in &req.messages {
        match m {
            Message::System { content } if instructions.is_none() => instructions = Some(content),
            other => {
                if let Some(items) = message_anchor(other).and_then(|k| reasoning.get(k)) {
                    input.extend(items);
                }
                input_items(other, &mut input)
            }
        }
    }
    let mut body = json!({ "model": req.model, "input": input, "stream": true, "store": false });
    if let Some(i) = instructions {
        body["instructions"] = json!(i);
    }
    let deepseek = deepseek_quirks(cfg, &req.model);
    let mut tools: Vec<Value> = req
        .tools
        .iter()
        .filter(|t| !(deepseek && t.name == WEB_SEARCH))
        .map(|t| {
            // `strict` defaults to true on this API, which rejects ordinary schemas.
            json!({ "type": "function", "name": t.name, "description": t.description,
                    "parameters": t.parameters, "strict": false })
        })
        .collect();
    if deepseek {
        // DeepSeek searches on its side on this API (seed §10.1).
        tools.push(json!({ "type": WEB_SEARCH }));
    }
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
    }
    let info = cfg.catalog.lookup(&req.model);
    let effort = request_level(req.reasoning_effort, cfg.thinking_level)
        .filter(|_| !deepseek)
        .and_then(|l| openai_effort(l, &info));
    if let Some(e) = &effort {
        body["reasoning"] = json!({ "effort": e, "summary": "auto" });
    }
    if let Some(n) = cfg.max_output_tokens {
        body["max_output_tokens"] = json!(n);
    }
    if !deepseek && (effort.is_some() || info.reasoning) {
        // Stateless reasoning: the encrypted items come back and are sent with the next turn.
        body["include"] = json!(["reasoning.encrypted_content"]);
    }
    body
}

/// The input items of one history message.
fn input_items(m: &Message, out: &mut Vec<Value>) {
    match m {
        Message::System { content } => {
            out.push(json!({ "type": "message", "role": "developer", "content": content }));
        }
        Message::User { content } => {
            let parts: Vec<Value> = content
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Text { text } => {
                        Some(json!({ "type": "input_text", "text": text }))
                    }
                    ContentPart::Image { mime_type, data } => Some(json!({
                        "type": "input_image", "image_url": data_url(mime_type, data),
                    })),
                    ContentPart::Reasoning { .. } => None,
                })
                .collect();
            out.push(json!({ "type": "message", "role": "user", "content": parts }));
        }
        Message::Assistant { tool_calls, .. } => {
            let text = m.text();
            if !text.is_empty() {
                out.push(json!({ "type": "message", "role": "assistant",
                    "content": [{ "type": "output_text", "text": text }] }));
            }
            for c in tool_calls {
                out.push(json!({ "type": "function_call", "call_id": c.id,
                                 "name": c.name,
                                 "arguments": crate::args::as_object_text(&c.arguments) }));
            }
        }
        Message::Tool(r) => {
            let images: Vec<Value> = r
                .images
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Image { mime_type, data } => Some(json!({
                        "type": "input_image", "image_url": data_url(mime_type, data),
                    })),
                    _ => None,
                })
                .collect();
            let output = if images.is_empty() {
                json!(r.content)
            } else {
                // Text and images together: the array form of `output`.
                let text = json!({ "type": "input_text", "text": r.content });
                Value::Array(std::iter::once(text).chain(images).collect())
            };
            out.push(
                json!({ "type": "function_call_output", "call_id": r.call_id, "output": output }),
            );
        }
    }
}

/// A function call being assembled.
#[derive(Debug, Default)]
struct PartialCall {
    call_id: String,
    name: String,
    arguments: String,
}

/// Parses Responses API stream events.
pub(crate) struct ResponsesParser {
    req_id: String,
    redactor: Redactor,
    calls: BTreeMap<u64, PartialCall>,
    item_index: HashMap<String, u64>,
    usage: Option<TokenUsage>,
    completed: bool,
    cache: Arc<ReasoningCache<Vec<Value>>>,
    encrypted: Vec<Value>,
    reasoning: String,
    text: String,
}

impl ResponsesParser {
    /// A parser for one response; encrypted reasoning items go to `cache`.
    pub(crate) fn new(
        req_id: &str,
        redactor: Redactor,
        cache: Arc<ReasoningCache<Vec<Value>>>,
    ) -> Self {
        ResponsesParser {
            req_id: req_id.to_string(),
            redactor,
            calls: BTreeMap::new(),
            item_index: HashMap::new(),
            usage: None,
            completed: false,
            cache,
            encrypted: Vec::new(),
            reasoning: String::new(),
            text: String::new(),
        }
    }

    fn push_text(&mut self, s: Option<&str>, out: &mut VecDeque<LlmChunk>) {
        if let Some(s) = s.filter(|s| !s.is_empty()) {
            self.text.push_str(s);
            push_text(out, Some(s), TextKind::Text);
        }
    }

    fn push_reasoning(&mut self, s: Option<&str>, out: &mut VecDeque<LlmChunk>) {
        if let Some(s) = s.filter(|s| !s.is_empty()) {
            self.reasoning.push_str(s);
            push_text(out, Some(s), TextKind::Reasoning);
        }
    }

    /// Keeps a finished reasoning item that carries encrypted content.
    fn reasoning_item(&mut self, item: &Value) {
        if item["type"] == "reasoning" && item["encrypted_content"].is_string() {
            // Without `id`: with `store: false` the server keeps no items to refer to.
            let mut kept = json!({ "type": "reasoning", "summary": item["summary"].clone(),
                                   "encrypted_content": item["encrypted_content"].clone() });
            if !kept["summary"].is_array() {
                kept["summary"] = json!([]);
            }
            self.encrypted.push(kept);
        }
    }

    /// The call an event refers to, by `output_index` or `item_id`.
    fn call_for(&mut self, v: &Value) -> Option<&mut PartialCall> {
        let idx = v["output_index"].as_u64().or_else(|| {
            v["item_id"]
                .as_str()
                .and_then(|id| self.item_index.get(id).copied())
        })?;
        self.calls.get_mut(&idx)
    }

    fn item(&mut self, v: &Value, done: bool) {
        let item = &v["item"];
        if item["type"] != "function_call" {
            return;
        }
        let idx = v["output_index"]
            .as_u64()
            .unwrap_or(self.calls.len() as u64);
        if let Some(id) = item["id"].as_str() {
            self.item_index.insert(id.to_string(), idx);
        }
        let call = self.calls.entry(idx).or_default();
        if let Some(id) = item["call_id"].as_str().filter(|s| !s.is_empty()) {
            call.call_id = id.to_string();
        }
        if let Some(name) = item["name"].as_str().filter(|s| !s.is_empty()) {
            call.name = name.to_string();
        }
        match item["arguments"].as_str() {
            Some(args) if done || call.arguments.is_empty() => call.arguments = args.to_string(),
            _ => {}
        }
    }
}

/// Token usage from a Responses `usage` object.
fn usage(u: &Value) -> TokenUsage {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    TokenUsage {
        input_tokens: n(&u["input_tokens"]),
        output_tokens: n(&u["output_tokens"]),
        cached_input_tokens: n(&u["input_tokens_details"]["cached_tokens"]),
        reasoning_tokens: n(&u["output_tokens_details"]["reasoning_tokens"]),
        cache_write_tokens: 0,
    }
}

impl StreamParser for ResponsesParser {
    fn feed(
        &mut self,
        event: &str,
        data: &str,
        out: &mut VecDeque<LlmChunk>,
    ) -> Result<Flow, LlmOutcome> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(if self.completed {
                Flow::Done
            } else {
                Flow::Continue
            });
        }
        let v: Value =
            serde_json::from_str(data).map_err(|e| malformed("response event", &e, data))?;
        let kind = v["type"].as_str().unwrap_or(event);
        if kind.is_empty() && v["error"].is_object() {
            // A plain JSON error answered with a success status.
            return Err(outcome_for_stream_error(
                &ErrorInfo::from_value(&v),
                &self.redactor,
            ));
        }
        match kind {
            "response.output_text.delta" => self.push_text(v["delta"].as_str(), out),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.push_reasoning(v["delta"].as_str(), out)
            }
            "response.reasoning_summary_part.added"
                if v["summary_index"].as_u64().unwrap_or(0) > 0 =>
            {
                self.push_reasoning(Some("\n\n"), out)
            }
            "response.output_item.added" => self.item(&v, false),
            "response.output_item.done" => {
                self.reasoning_item(&v["item"]);
                self.item(&v, true)
            }
            "response.function_call_arguments.delta" => {
                let delta = v["delta"].as_str().unwrap_or("").to_string();
                if let Some(call) = self.call_for(&v) {
                    call.arguments.push_str(&delta);
                }
            }
            "response.function_call_arguments.done" => {
                let args = v["arguments"].as_str().map(String::from);
                if let (Some(call), Some(args)) = (self.call_for(&v), args) {
                    call.arguments = args;
                }
            }
            "response.completed" | "response.incomplete" => {
                let resp = &v["response"];
                if let Some(u) = resp.get("usage").filter(|u| u.is_object()) {
                    self.usage = Some(usage(u));
                }
                if kind == "response.incomplete" {
                    let reason = resp["incomplete_details"]["reason"]
                        .as_str()
                        .unwrap_or("unknown");
                    tracing::warn!(req_id = %self.req_id, reason, "response incomplete");
                }
                self.completed = true;
                return Ok(Flow::Done);
            }
            "response.failed" => {
                return Err(outcome_for_stream_error(
                    &ErrorInfo::from_value(&v["response"]),
                    &self.redactor,
                ));
            }
            "error" => {
                return Err(outcome_for_stream_error(
                    &ErrorInfo::from_value(&v),
                    &self.redactor,
                ))
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn is_complete(&self) -> bool {
        self.completed
    }

    fn finish(&mut self, out: &mut VecDeque<LlmChunk>) -> LlmOutcome {
        let calls: Vec<ToolCall> = std::mem::take(&mut self.calls)
            .into_iter()
            .map(|(index, call)| ToolCall {
                id: if call.call_id.is_empty() {
                    format!("call_{}_{index}", self.req_id)
                } else {
                    call.call_id
                },
                name: call.name,
                arguments: call.arguments,
            })
            .collect();
        if !self.encrypted.is_empty() {
            let key = anchor(
                &self.reasoning,
                &self.text,
                calls
                    .iter()
                    .map(|c| (c.name.as_str(), c.arguments.as_str())),
            );
            self.cache.put(key, std::mem::take(&mut self.encrypted));
        }
        out.extend(calls.into_iter().map(LlmChunk::ToolCall));
        if let Some(u) = self.usage.take() {
            out.push_back(LlmChunk::Usage(u));
        }
        LlmOutcome::completed()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_engine::{FailureKind, OutcomeStatus};

    fn feed(p: &mut ResponsesParser, v: Value) -> Result<Flow, LlmOutcome> {
        p.feed("", &v.to_string(), &mut VecDeque::new())
    }

    fn parser() -> ResponsesParser {
        ResponsesParser::new("r", Redactor::default(), Arc::default())
    }

    #[test]
    fn final_item_arguments_win_over_deltas() {
        let mut p = parser();
        let item = json!({"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "ls", "arguments": ""});
        feed(
            &mut p,
            json!({"type": "response.output_item.added", "output_index": 1, "item": item}),
        )
        .unwrap();
        feed(&mut p, json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1", "delta": "{\"a\""})).unwrap();
        let done = json!({"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{\"a\":1}"});
        feed(
            &mut p,
            json!({"type": "response.output_item.done", "output_index": 1, "item": done}),
        )
        .unwrap();
        assert!(!p.is_complete());
        let flow = feed(
            &mut p,
            json!({"type": "response.incomplete", "response": {"incomplete_details": {"reason": "max_output_tokens"}}}),
        );
        assert_eq!(flow.unwrap(), Flow::Done);
        let mut out = VecDeque::new();
        assert_eq!(p.finish(&mut out).status, OutcomeStatus::Completed);
        assert_eq!(
            out.pop_front(),
            Some(LlmChunk::ToolCall(ToolCall {
                id: "c1".into(),
                name: "ls".into(),
                arguments: "{\"a\":1}".into()
            }))
        );
    }

    #[test]
    fn failed_and_error_events_end_the_stream() {
        let mut p = parser();
        let failed = json!({"type": "response.failed", "response": {"error": {"code": "context_length_exceeded", "message": "too long"}}});
        let o = feed(&mut p, failed).unwrap_err();
        assert_eq!(
            (o.status, o.kind),
            (OutcomeStatus::Failed, Some(FailureKind::ContextOverflow))
        );
        let o = feed(
            &mut p,
            json!({"type": "error", "code": "server_error", "message": "boom"}),
        )
        .unwrap_err();
        assert_eq!(o.kind, Some(FailureKind::Server));
        assert!(o.message.unwrap().contains("boom"));
    }

    #[test]
    fn function_call_arguments_are_always_an_object() {
        let req = LlmRequest {
            model: "gpt-5".into(),
            messages: vec![
                Message::user("u"),
                Message::Assistant {
                    content: Vec::new(),
                    tool_calls: vec![cairn_protocol::ToolCall {
                        id: "c".into(),
                        name: "read_file".into(),
                        arguments: String::new(),
                    }],
                    usage: None,
                },
            ],
            tools: Vec::new(),
            reasoning_effort: None,
            req_id: "r".into(),
        };
        let b = request_body(&req, &OpenAiConfig::default(), &ReasoningCache::default());
        assert_eq!(b["input"][1]["type"], "function_call");
        assert_eq!(b["input"][1]["arguments"], "{}");
    }

    #[test]
    fn second_system_message_becomes_a_developer_item() {
        let req = LlmRequest {
            model: "gpt-5".into(),
            messages: vec![
                Message::system("a"),
                Message::user("u"),
                Message::system("b"),
            ],
            tools: Vec::new(),
            reasoning_effort: None,
            req_id: "r".into(),
        };
        let b = request_body(&req, &OpenAiConfig::default(), &ReasoningCache::default());
        assert_eq!(b["instructions"], "a");
        assert_eq!(
            b["input"][1],
            json!({"type": "message", "role": "developer", "content": "b"})
        );
        assert!(b.get("tools").is_none() && b.get("reasoning").is_none());
        assert_eq!(
            b["include"],
            json!(["reasoning.encrypted_content"]),
            "gpt-5 reasons"
        );
    }

    #[test]
    fn deepseek_gets_server_side_web_search() {
        let tool = |name: &str| cairn_protocol::ToolSchema {
            name: name.into(),
            description: String::new(),
            parameters: json!({"type": "object"}),
        };
        let req = LlmRequest {
            model: "deepseek-chat".into(),
            messages: vec![Message::user("u")],
            tools: vec![tool("web_search"), tool("read_file")],
            reasoning_effort: Some(cairn_engine::ReasoningEffort::High),
            req_id: "r".into(),
        };
        let b = request_body(&req, &OpenAiConfig::default(), &ReasoningCache::default());
        let tools = b["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 2);
        assert_eq!(tools[0]["name"], "read_file");
        assert_eq!(tools[1], json!({"type": "web_search"}));
        assert!(b.get("reasoning").is_none() && b.get("include").is_none());
    }
}
