//! Anthropic Messages API request bodies: alternating turns, thinking blocks replayed with
//! their signatures, tool use and results, images, and `cache_control` breakpoints on the
//! tools, the system prompt and the stable prefix of the conversation.

use std::collections::HashSet;

use cairn_engine::LlmRequest;
use cairn_protocol::{ContentPart, Message, ToolStatus};
use serde_json::{json, Value};

use super::{Block, Cached};
use crate::catalog::ModelInfo;
use crate::reasoning_cache::{message_anchor, ReasoningCache};
use crate::thinking::{anthropic_thinking, AnthropicThinking, ThinkingLevel};

/// `max_tokens` for a model the table does not know.
pub(crate) const DEFAULT_MAX_TOKENS: u64 = 8192;

/// The body, and the thinking configuration it uses (`Null` = off) to remember with the reply.
pub(crate) struct Built {
    pub body: Value,
    pub thinking: Value,
}

/// One conversation turn being assembled.
struct Turn {
    role: &'static str,
    blocks: Vec<Value>,
}

fn ephemeral() -> Value {
    json!({ "type": "ephemeral" })
}

/// Adds blocks to the last turn when it has the same role, else starts a turn.
fn push(turns: &mut Vec<Turn>, role: &'static str, blocks: Vec<Value>) {
    if blocks.is_empty() {
        return;
    }
    match turns.last_mut() {
        Some(t) if t.role == role => t.blocks.extend(blocks),
        _ => turns.push(Turn { role, blocks }),
    }
}

fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({ "type": "text", "text": text }))
}

fn user_blocks(content: &[ContentPart]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|p| match p {
            ContentPart::Text { text } => text_block(text),
            ContentPart::Image { mime_type, data } => Some(json!({
                "type": "image",
                "source": { "type": "base64", "media_type": mime_type, "data": data },
            })),
            ContentPart::Reasoning { .. } => None,
        })
        .collect()
}

/// An assistant message's blocks: the remembered ones (thinking with signatures, in the
/// original order) when the cache knows the message, else text and tool use only.
fn assistant_blocks(m: &Message, cached: Option<&Cached>) -> Vec<Value> {
    let Message::Assistant { tool_calls, .. } = m else {
        return Vec::new();
    };
    let tool_use = |i: usize| {
        tool_calls.get(i).map(|c| {
            json!({ "type": "tool_use", "id": c.id, "name": c.name, "input": crate::args::as_object(&c.arguments) })
        })
    };
    if let Some(cached) = cached {
        return cached
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Thinking { text, signature } => {
                    Some(json!({ "type": "thinking", "thinking": text, "signature": signature }))
                }
                Block::Redacted(data) => Some(json!({ "type": "redacted_thinking", "data": data })),
                Block::Text(t) => text_block(t),
                Block::ToolUse(i) => tool_use(*i),
            })
            .collect();
    }
    let mut blocks: Vec<Value> = text_block(&m.text()).into_iter().collect();
    blocks.extend((0..tool_calls.len()).filter_map(tool_use));
    blocks
}

/// Makes the turns valid: starts with a user turn, every `tool_use` answered by a
/// `tool_result` in the next turn (synthesised when missing), results first in their turn,
/// and results without a call turned into text.
fn repair(turns: Vec<Turn>) -> Vec<Turn> {
    let mut out: Vec<Turn> = Vec::new();
    let mut open: Vec<String> = Vec::new();
    for mut t in turns {
        if t.role == "user" {
            let (mut results, rest): (Vec<Value>, Vec<Value>) = t
                .blocks
                .into_iter()
                .partition(|b| b["type"] == "tool_result");
            let mut orphans: Vec<Value> = Vec::new();
            let answered: HashSet<String> = results
                .iter()
                .filter_map(|b| b["tool_use_id"].as_str().map(String::from))
                .collect();
            results.retain(|b| {
                let keep = b["tool_use_id"]
                    .as_str()
                    .is_some_and(|id| open.iter().any(|o| o == id));
                if !keep {
                    let text = b["content"].as_str().unwrap_or("").to_string();
                    orphans
                        .push(json!({ "type": "text", "text": format!("[tool result] {text}") }));
                }
                keep
            });
            for id in open.drain(..).filter(|id| !answered.contains(id)) {
                results.push(missing_result(&id));
            }
            results.extend(orphans);
            results.extend(rest);
            t.blocks = results;
        } else {
            if !open.is_empty() {
                let ids: Vec<String> = std::mem::take(&mut open);
                push(
                    &mut out,
                    "user",
                    ids.iter().map(|id| missing_result(id)).collect(),
                );
            }
            open = t
                .blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .filter_map(|b| b["id"].as_str().map(String::from))
                .collect();
        }
        if out.is_empty() && t.role == "assistant" {
            out.push(Turn {
                role: "user",
                blocks: vec![json!({ "type": "text", "text": "(conversation continues)" })],
            });
        }
        push(&mut out, t.role, t.blocks);
    }
    if !open.is_empty() {
        push(
            &mut out,
            "user",
            open.iter().map(|id| missing_result(id)).collect(),
        );
    }
    out
}

fn missing_result(id: &str) -> Value {
    json!({ "type": "tool_result", "tool_use_id": id, "is_error": true,
            "content": "(no result: the call did not complete)" })
}

/// Index of the assistant message whose tool loop the history ends in, if any.
fn open_tool_loop(messages: &[Message]) -> Option<usize> {
    for (i, m) in messages.iter().enumerate().rev() {
        match m {
            Message::Tool(_) => continue,
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => return Some(i),
            _ => return None,
        }
    }
    None
}

/// The `thinking` (and `output_config`) fields for a thinking choice.
fn thinking_fields(t: &AnthropicThinking) -> Value {
    match t {
        AnthropicThinking::Off => Value::Null,
        AnthropicThinking::Budget(b) => {
            json!({ "thinking": { "type": "enabled", "budget_tokens": b } })
        }
        AnthropicThinking::Adaptive(effort) => {
            let mut v = json!({ "thinking": { "type": "adaptive" } });
            if let Some(e) = effort {
                v["output_config"] = json!({ "effort": e });
            }
            v
        }
    }
}

/// The streamed `/messages` body for `req`.
pub(crate) fn request_body(
    req: &LlmRequest,
    info: &ModelInfo,
    level: Option<ThinkingLevel>,
    prompt_caching: bool,
    cache: &ReasoningCache<Cached>,
) -> Built {
    let max_tokens = info.max_output.unwrap_or(DEFAULT_MAX_TOKENS);
    let mut system: Option<&str> = None;
    let mut turns: Vec<Turn> = Vec::new();
    for m in &req.messages {
        match m {
            Message::System { content } if system.is_none() && turns.is_empty() => {
                system = Some(content)
            }
            Message::System { content } => push(
                &mut turns,
                "user",
                text_block(&format!("[system] {content}"))
                    .into_iter()
                    .collect(),
            ),
            Message::User { content } => push(&mut turns, "user", user_blocks(content)),
            Message::Assistant { .. } => {
                let cached = message_anchor(m).and_then(|k| cache.get(k));
                push(
                    &mut turns,
                    "assistant",
                    assistant_blocks(m, cached.as_ref()),
                );
            }
            Message::Tool(r) => {
                let mut b = json!({ "type": "tool_result", "tool_use_id": r.call_id });
                let images = user_blocks(&r.images);
                if !images.is_empty() {
                    // Text and image blocks together inside the tool result.
                    let text = text_block(&r.content);
                    b["content"] = Value::Array(text.into_iter().chain(images).collect());
                } else if !r.content.is_empty() {
                    b["content"] = json!(r.content);
                }
                if r.status != ToolStatus::Ok {
                    b["is_error"] = json!(true);
                }
                push(&mut turns, "user", vec![b]);
            }
        }
    }
    let mut turns = repair(turns);

    // One thinking configuration per assistant turn: inside a tool loop, repeat what the
    // loop started with (off when this process did not see it start).
    let thinking = match open_tool_loop(&req.messages) {
        Some(i) => message_anchor(&req.messages[i])
            .and_then(|k| cache.get(k))
            .map_or(Value::Null, |c| c.thinking),
        None => level.map_or(Value::Null, |l| {
            thinking_fields(&anthropic_thinking(l, info, max_tokens))
        }),
    };

    if prompt_caching {
        // The two last user turns: the conversation prefix up to them is stable.
        let users: Vec<usize> = turns
            .iter()
            .enumerate()
            .filter(|(_, t)| t.role == "user")
            .map(|(i, _)| i)
            .rev()
            .take(2)
            .collect();
        for i in users {
            if let Some(last) = turns[i].blocks.last_mut() {
                last["cache_control"] = ephemeral();
            }
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|t| json!({ "role": t.role, "content": t.blocks }))
        .collect();
    let mut body = json!({
        "model": req.model,
        "max_tokens": max_tokens,
        "stream": true,
        "messages": messages,
    });
    if let Some(s) = system.filter(|s| !s.is_empty()) {
        let mut block = json!({ "type": "text", "text": s });
        if prompt_caching {
            block["cache_control"] = ephemeral();
        }
        body["system"] = json!([block]);
    }
    if !req.tools.is_empty() {
        let mut tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                let schema = if t.parameters.is_object() {
                    t.parameters.clone()
                } else {
                    json!({ "type": "object", "properties": {} })
                };
                json!({ "name": t.name, "description": t.description, "input_schema": schema })
            })
            .collect();
        if let (true, Some(last)) = (prompt_caching, tools.last_mut()) {
            last["cache_control"] = ephemeral();
        }
        body["tools"] = Value::Array(tools);
    }
    if let Value::Object(fields) = &thinking {
        for (k, v) in fields {
            body[k.as_str()] = v.clone();
        }
    }
    Built { body, thinking }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
