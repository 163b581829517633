//! Parses the Anthropic Messages SSE stream: text, thinking (with signatures), redacted
//! thinking, tool use with streamed JSON input, usage with cache reads/writes, stop reasons.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use cairn_engine::{FailureKind, LlmChunk, LlmOutcome, OutcomeStatus};
use cairn_protocol::{TokenUsage, ToolCall};
use serde_json::Value;

use super::{Block, Cached};
use crate::classify::{outcome_for_stream_error, ErrorInfo};
use crate::parser::{malformed, push_text, Flow, StreamParser, TextKind};
use crate::reasoning_cache::{anchor, ReasoningCache};
use crate::redact::Redactor;

/// A content block being streamed.
#[derive(Debug)]
enum Part {
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    Text(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
        initial: Value,
    },
    Other,
}

/// Token counts as Anthropic reports them.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    input: u64,
    cache_write: u64,
    cache_read: u64,
    output: u64,
}

impl Usage {
    fn update(&mut self, u: &Value) {
        let set = |field: &mut u64, key: &str| {
            if let Some(n) = u[key].as_u64() {
                *field = n;
            }
        };
        set(&mut self.input, "input_tokens");
        set(&mut self.cache_write, "cache_creation_input_tokens");
        set(&mut self.cache_read, "cache_read_input_tokens");
        set(&mut self.output, "output_tokens");
    }

    /// In the engine's terms: input counts every prompt token, cached ones included.
    fn token_usage(&self) -> TokenUsage {
        TokenUsage {
            input_tokens: self.input + self.cache_write + self.cache_read,
            output_tokens: self.output,
            cached_input_tokens: self.cache_read,
            reasoning_tokens: 0,
            cache_write_tokens: self.cache_write,
        }
    }
}

/// Parses one streamed message.
pub(crate) struct AnthropicParser {
    req_id: String,
    redactor: Redactor,
    cache: Arc<ReasoningCache<Cached>>,
    thinking_config: Value,
    parts: BTreeMap<u64, Part>,
    reasoning: String,
    text: String,
    usage: Option<Usage>,
    stop_reason: Option<String>,
    stopped: bool,
}

impl AnthropicParser {
    /// A parser for one response; its thinking blocks are remembered in `cache` together
    /// with the request's thinking configuration.
    pub(crate) fn new(
        req_id: &str,
        redactor: Redactor,
        cache: Arc<ReasoningCache<Cached>>,
        thinking_config: Value,
    ) -> Self {
        AnthropicParser {
            req_id: req_id.to_string(),
            redactor,
            cache,
            thinking_config,
            parts: BTreeMap::new(),
            reasoning: String::new(),
            text: String::new(),
            usage: None,
            stop_reason: None,
            stopped: false,
        }
    }

    fn emit_reasoning(&mut self, s: &str, out: &mut VecDeque<LlmChunk>) {
        if !s.is_empty() {
            self.reasoning.push_str(s);
            push_text(out, Some(s), TextKind::Reasoning);
        }
    }

    fn emit_text(&mut self, s: &str, out: &mut VecDeque<LlmChunk>) {
        if !s.is_empty() {
            self.text.push_str(s);
            push_text(out, Some(s), TextKind::Text);
        }
    }

    fn block_start(&mut self, v: &Value, out: &mut VecDeque<LlmChunk>) {
        let index = v["index"].as_u64().unwrap_or(self.parts.len() as u64);
        let b = &v["content_block"];
        let part = match b["type"].as_str().unwrap_or("") {
            "thinking" => {
                // Separate consecutive thinking blocks the way the Responses API does.
                if !self.reasoning.is_empty() {
                    self.emit_reasoning("\n\n", out);
                }
                let text = b["thinking"].as_str().unwrap_or("").to_string();
                self.emit_reasoning(&text, out);
                Part::Thinking {
                    text,
                    signature: b["signature"].as_str().unwrap_or("").to_string(),
                }
            }
            "redacted_thinking" => Part::Redacted(b["data"].as_str().unwrap_or("").to_string()),
            "text" => {
                let text = b["text"].as_str().unwrap_or("").to_string();
                self.emit_text(&text, out);
                Part::Text(text)
            }
            "tool_use" => Part::ToolUse {
                id: b["id"].as_str().unwrap_or("").to_string(),
                name: b["name"].as_str().unwrap_or("").to_string(),
                json: String::new(),
                initial: b["input"].clone(),
            },
            _ => Part::Other,
        };
        self.parts.insert(index, part);
    }

    fn block_delta(&mut self, v: &Value, out: &mut VecDeque<LlmChunk>) {
        let index = v["index"].as_u64().unwrap_or(0);
        let d = &v["delta"];
        let s = |key: &str| d[key].as_str().unwrap_or("").to_string();
        match d["type"].as_str().unwrap_or("") {
            "text_delta" => {
                let t = s("text");
                if let Some(Part::Text(acc)) = self.parts.get_mut(&index) {
                    acc.push_str(&t);
                }
                self.emit_text(&t, out);
            }
            "thinking_delta" => {
                let t = s("thinking");
                if let Some(Part::Thinking { text, .. }) = self.parts.get_mut(&index) {
                    text.push_str(&t);
                }
                self.emit_reasoning(&t, out);
            }
            "signature_delta" => {
                if let Some(Part::Thinking { signature, .. }) = self.parts.get_mut(&index) {
                    signature.push_str(&s("signature"));
                }
            }
            "input_json_delta" => {
                if let Some(Part::ToolUse { json, .. }) = self.parts.get_mut(&index) {
                    json.push_str(&s("partial_json"));
                }
            }
            _ => {}
        }
    }

    /// The outcome for the stop reason of a finished message.
    fn outcome(&self) -> LlmOutcome {
        match self.stop_reason.as_deref() {
            Some("refusal") => LlmOutcome::new(
                OutcomeStatus::Failed,
                Some("the model declined to continue (stop_reason: refusal)".into()),
            )
            .with_kind(FailureKind::BadRequest),
            Some("model_context_window_exceeded") => LlmOutcome::new(
                OutcomeStatus::Failed,
                Some("the conversation filled the model's context window (stop_reason: model_context_window_exceeded)".into()),
            )
            .with_kind(FailureKind::ContextOverflow),
            Some("max_tokens") => {
                tracing::warn!(req_id = %self.req_id, "response cut at the output token limit");
                LlmOutcome::completed()
            }
            _ => LlmOutcome::completed(),
        }
    }
}

impl StreamParser for AnthropicParser {
    fn feed(
        &mut self,
        event: &str,
        data: &str,
        out: &mut VecDeque<LlmChunk>,
    ) -> Result<Flow, LlmOutcome> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Flow::Continue);
        }
        let v: Value =
            serde_json::from_str(data).map_err(|e| malformed("message event", &e, data))?;
        let kind = v["type"].as_str().unwrap_or(event);
        match kind {
            "message_start" => {
                let mut u = Usage::default();
                u.update(&v["message"]["usage"]);
                self.usage = Some(u);
            }
            "content_block_start" => self.block_start(&v, out),
            "content_block_delta" => self.block_delta(&v, out),
            "message_delta" => {
                if let Some(r) = v["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(r.to_string());
                }
                if v["usage"].is_object() {
                    self.usage
                        .get_or_insert_with(Usage::default)
                        .update(&v["usage"]);
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(Flow::Done);
            }
            "error" => {
                return Err(outcome_for_stream_error(
                    &ErrorInfo::from_value(&v),
                    &self.redactor,
                ))
            }
            // A plain JSON message (a server that ignored `stream: true`).
            "message" if v["content"].is_array() => {
                let mut u = Usage::default();
                u.update(&v["usage"]);
                self.usage = Some(u);
                if let Some(blocks) = v["content"].as_array() {
                    for (i, b) in blocks.iter().enumerate() {
                        let start = serde_json::json!({ "index": i, "content_block": b });
                        self.block_start(&start, out);
                    }
                }
                self.stop_reason = v["stop_reason"].as_str().map(String::from);
                self.stopped = true;
                return Ok(Flow::Done);
            }
            _ => {}
        }
        Ok(Flow::Continue)
    }

    fn is_complete(&self) -> bool {
        self.stopped || self.stop_reason.is_some()
    }

    fn finish(&mut self, out: &mut VecDeque<LlmChunk>) -> LlmOutcome {
        let mut calls: Vec<ToolCall> = Vec::new();
        let mut blocks: Vec<Block> = Vec::new();
        let mut has_thinking = false;
        for part in std::mem::take(&mut self.parts).into_values() {
            match part {
                Part::Thinking { text, signature } => {
                    has_thinking = true;
                    blocks.push(Block::Thinking { text, signature });
                }
                Part::Redacted(data) => {
                    has_thinking = true;
                    blocks.push(Block::Redacted(data));
                }
                Part::Text(t) => blocks.push(Block::Text(t)),
                Part::ToolUse {
                    id,
                    name,
                    json,
                    initial,
                } => {
                    let arguments = if !json.trim().is_empty() {
                        json
                    } else if initial.is_object() {
                        initial.to_string()
                    } else {
                        "{}".to_string()
                    };
                    blocks.push(Block::ToolUse(calls.len()));
                    calls.push(ToolCall {
                        id,
                        name,
                        arguments,
                    });
                }
                Part::Other => {}
            }
        }
        let outcome = self.outcome();
        if outcome.status == OutcomeStatus::Completed
            && (has_thinking || !self.thinking_config.is_null())
        {
            let key = anchor(
                &self.reasoning,
                &self.text,
                calls
                    .iter()
                    .map(|c| (c.name.as_str(), c.arguments.as_str())),
            );
            self.cache.put(
                key,
                Cached {
                    blocks,
                    thinking: self.thinking_config.clone(),
                },
            );
        }
        out.extend(calls.into_iter().map(LlmChunk::ToolCall));
        if let Some(u) = self.usage {
            tracing::debug!(req_id = %self.req_id, cache_write = u.cache_write, cache_read = u.cache_read, "usage");
            out.push_back(LlmChunk::Usage(u.token_usage()));
        }
        outcome
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
