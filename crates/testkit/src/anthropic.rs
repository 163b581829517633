//! Renders a [`Reply`] as an Anthropic Messages API SSE stream, and Anthropic-shaped errors.

use serde_json::{json, Value};

use crate::frame::{malformed, named, Frame, RenderCtx, Template, PIECE};
use crate::reply::{anthropic_error, split_chars, Fault, Reply};

/// Emits `content_block_*` events with increasing block indexes.
struct Blocks {
    index: u64,
    frames: Vec<Frame>,
}

impl Blocks {
    fn start(&mut self, block: Value) {
        let v =
            json!({ "type": "content_block_start", "index": self.index, "content_block": block });
        self.frames.push(named("content_block_start", &v));
    }

    fn deltas(&mut self, delta: Value, pieces: Vec<String>) {
        let v = json!({ "type": "content_block_delta", "index": self.index, "delta": delta });
        let t = Template::new(Some("content_block_delta"), &v);
        self.frames.extend(pieces.iter().map(|p| t.fill(p, 0)));
    }

    fn delta(&mut self, delta: Value) {
        let v = json!({ "type": "content_block_delta", "index": self.index, "delta": delta });
        self.frames.push(named("content_block_delta", &v));
    }

    fn stop(&mut self) {
        let v = json!({ "type": "content_block_stop", "index": self.index });
        self.frames.push(named("content_block_stop", &v));
        self.index += 1;
    }
}

/// The frames of one streamed message.
pub(crate) fn render(reply: &Reply, ctx: &RenderCtx) -> Vec<Frame> {
    let n = reply.chunk();
    let u = reply.usage.unwrap_or_default();
    // Anthropic's `input_tokens` excludes the cached and cache-written parts.
    let fresh_input = u.input.saturating_sub(u.cached + u.cache_write);
    let start = json!({ "type": "message_start", "message": {
        "id": ctx.id, "type": "message", "role": "assistant", "model": ctx.model,
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": { "input_tokens": fresh_input, "cache_creation_input_tokens": u.cache_write,
                   "cache_read_input_tokens": u.cached, "output_tokens": 1 },
    }});
    let mut b = Blocks {
        index: 0,
        frames: vec![
            named("message_start", &start),
            named("ping", &json!({ "type": "ping" })),
        ],
    };
    if !reply.reasoning.is_empty() {
        b.start(json!({ "type": "thinking", "thinking": "", "signature": "" }));
        b.deltas(
            json!({ "type": "thinking_delta", "thinking": PIECE }),
            split_chars(&reply.reasoning, n),
        );
        b.delta(json!({ "type": "signature_delta", "signature": reply.signature_text() }));
        b.stop();
    }
    for data in &reply.redacted_thinking {
        b.start(json!({ "type": "redacted_thinking", "data": data }));
        b.stop();
    }
    let pieces = reply.text_pieces();
    if !pieces.is_empty() {
        b.start(json!({ "type": "text", "text": "" }));
        b.deltas(json!({ "type": "text_delta", "text": PIECE }), pieces);
        b.stop();
    }
    for call in &reply.tool_calls {
        b.start(json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": {} }));
        b.deltas(
            json!({ "type": "input_json_delta", "partial_json": PIECE }),
            split_chars(&call.arguments, n),
        );
        b.stop();
    }
    let mut frames = b.frames;
    match &reply.fault {
        Some(Fault::DropMidStream) => frames.push(Frame::Abort),
        Some(Fault::Stall(d)) => frames.extend([Frame::Stall(*d), Frame::Abort]),
        Some(Fault::StreamError { code, message }) => {
            let v: Value =
                serde_json::from_str(&anthropic_error(code, message)).unwrap_or_default();
            frames.push(named("error", &v));
        }
        other => {
            if other == &Some(Fault::MalformedChunk) {
                frames.push(malformed());
            }
            let stop = match &reply.stop_reason {
                Some(r) => r.clone(),
                None if reply.tool_calls.is_empty() => "end_turn".into(),
                None => "tool_use".into(),
            };
            let delta = json!({ "type": "message_delta",
                "delta": { "stop_reason": stop, "stop_sequence": null },
                "usage": { "output_tokens": u.output } });
            frames.push(named("message_delta", &delta));
            frames.push(named("message_stop", &json!({ "type": "message_stop" })));
        }
    }
    frames
}

/// Anthropic's error type for an HTTP status.
fn error_type(status: u16) -> &'static str {
    match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        402 => "billing_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    }
}

/// Re-shapes an HTTP error answer the way Anthropic would send it: OpenAI-style bodies
/// become `{"type":"error","error":{…}}`, quota errors become the "credit balance" 400.
pub(crate) fn http_error(status: u16, body: &str) -> (u16, String) {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return (status, body.to_string());
    };
    if v["type"] == "error" {
        return (status, body.to_string());
    }
    let e = &v["error"];
    let message = e["message"].as_str().unwrap_or("mock error");
    if e["code"] == "insufficient_quota" {
        let m = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.";
        return (400, anthropic_error("invalid_request_error", m));
    }
    if e["code"] == "context_length_exceeded" {
        let m = "prompt is too long: 208595 tokens > 200000 maximum";
        return (400, anthropic_error("invalid_request_error", m));
    }
    (status, anthropic_error(error_type(status), message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reply::openai_error;

    #[test]
    fn reshapes_openai_errors() {
        let (s, b) = http_error(429, &openai_error("slow down", "requests", None, None));
        assert_eq!(s, 429);
        assert!(
            b.contains("rate_limit_error") && b.contains("slow down"),
            "{b}"
        );
        let (s, b) = http_error(
            429,
            &openai_error(
                "quota",
                "insufficient_quota",
                Some("insufficient_quota"),
                None,
            ),
        );
        assert_eq!(s, 400);
        assert!(b.contains("credit balance"), "{b}");
        let own = anthropic_error("overloaded_error", "Overloaded");
        assert_eq!(http_error(529, &own), (529, own.clone()));
        assert_eq!(http_error(502, "<html>"), (502, "<html>".to_string()));
    }
}
