//! Renders a [`Reply`] as an OpenAI Chat Completions SSE stream.

use serde_json::{json, Value};

use crate::frame::{data, malformed, Frame, RenderCtx, Template, PIECE};
use crate::reply::{split_chars, Fault, Reply};

/// The frames of one streamed chat completion.
pub(crate) fn render(reply: &Reply, ctx: &RenderCtx) -> Vec<Frame> {
    let n = reply.chunk();
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": ctx.id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "system_fingerprint": "fp_mock",
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        })
    };
    let mut frames = vec![data(&chunk(
        json!({ "role": "assistant", "content": "", "refusal": null }),
        Value::Null,
    ))];
    let reasoning = Template::new(
        None,
        &chunk(json!({ "reasoning_content": PIECE }), Value::Null),
    );
    for piece in split_chars(&reply.reasoning, n) {
        frames.push(reasoning.fill(&piece, 0));
    }
    let content = Template::new(None, &chunk(json!({ "content": PIECE }), Value::Null));
    for piece in reply.text_pieces() {
        frames.push(content.fill(&piece, 0));
    }
    for (index, call) in reply.tool_calls.iter().enumerate() {
        let first = json!({ "tool_calls": [{
            "index": index, "id": call.id, "type": "function",
            "function": { "name": call.name, "arguments": "" },
        }]});
        frames.push(data(&chunk(first, Value::Null)));
        let delta =
            json!({ "tool_calls": [{ "index": index, "function": { "arguments": PIECE } }] });
        let args = Template::new(None, &chunk(delta, Value::Null));
        for piece in split_chars(&call.arguments, n) {
            frames.push(args.fill(&piece, 0));
        }
    }
    match &reply.fault {
        Some(Fault::DropMidStream) => frames.push(Frame::Abort),
        Some(Fault::Stall(d)) => frames.extend([Frame::Stall(*d), Frame::Abort]),
        Some(Fault::MalformedChunk) => {
            frames.push(malformed());
            ending(reply, ctx, &chunk, &mut frames);
        }
        Some(Fault::StreamError { code, message }) => {
            frames.push(data(&json!({ "error": {
                "message": message, "type": code, "param": null, "code": code,
            }})));
        }
        Some(Fault::Status { .. } | Fault::ContextLengthExceeded) | None => {
            ending(reply, ctx, &chunk, &mut frames)
        }
    }
    frames
}

/// The finish chunk, the optional usage chunk and `[DONE]`.
fn ending(
    reply: &Reply,
    ctx: &RenderCtx,
    chunk: &dyn Fn(Value, Value) -> Value,
    frames: &mut Vec<Frame>,
) {
    let finish = match &reply.stop_reason {
        Some(r) => r.as_str(),
        None if reply.tool_calls.is_empty() => "stop",
        None => "tool_calls",
    };
    frames.push(data(&chunk(json!({}), json!(finish))));
    if let (true, Some(u)) = (ctx.include_usage, reply.usage) {
        frames.push(data(&json!({
            "id": ctx.id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "choices": [],
            "usage": {
                "prompt_tokens": u.input,
                "completion_tokens": u.output,
                "total_tokens": u.input + u.output,
                "prompt_tokens_details": { "cached_tokens": u.cached },
                "completion_tokens_details": { "reasoning_tokens": u.reasoning },
            },
        })));
    }
    frames.push(Frame::Event("data: [DONE]\n\n".to_string()));
}
