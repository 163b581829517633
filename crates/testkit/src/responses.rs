//! Renders a [`Reply`] as an OpenAI Responses API SSE event stream.

use serde_json::{json, Map, Value};

use crate::frame::{malformed, named, Frame, RenderCtx, Template, PIECE, SEQ};
use crate::reply::{split_chars, Fault, Reply};

/// Builds events with increasing `sequence_number`s.
struct Emitter {
    seq: u64,
    frames: Vec<Frame>,
}

impl Emitter {
    fn emit(&mut self, kind: &str, fields: Value) {
        let mut obj = match fields {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        obj.insert("type".into(), json!(kind));
        obj.insert("sequence_number".into(), json!(self.seq));
        self.seq += 1;
        self.frames.push(named(kind, &Value::Object(obj)));
    }

    /// Emits one `kind` event per piece, `fields` holding [`PIECE`] where the piece goes.
    fn emit_pieces(&mut self, kind: &str, fields: Value, pieces: Vec<String>) {
        let mut obj = match fields {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        obj.insert("type".into(), json!(kind));
        obj.insert("sequence_number".into(), json!(SEQ));
        let template = Template::new(Some(kind), &Value::Object(obj));
        for piece in pieces {
            self.frames.push(template.fill(&piece, self.seq));
            self.seq += 1;
        }
    }
}

/// The response object carried by `response.created` / `response.completed`.
fn response_object(ctx: &RenderCtx, status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({
        "id": ctx.id, "object": "response", "created_at": ctx.created, "status": status,
        "model": ctx.model, "output": output, "usage": usage, "error": null,
        "incomplete_details": null, "store": false,
    })
}

/// The frames of one streamed response.
pub(crate) fn render(reply: &Reply, ctx: &RenderCtx) -> Vec<Frame> {
    let n = reply.chunk();
    let mut e = Emitter {
        seq: 0,
        frames: Vec::new(),
    };
    let created = response_object(ctx, "in_progress", Vec::new(), Value::Null);
    e.emit("response.created", json!({ "response": created }));
    e.emit("response.in_progress", json!({ "response": created }));
    let mut output = Vec::new();

    if !reply.reasoning.is_empty() {
        let idx = output.len();
        let id = format!("rs_{}_{idx}", ctx.id);
        let item = json!({ "id": id, "type": "reasoning", "summary": [] });
        e.emit(
            "response.output_item.added",
            json!({ "output_index": idx, "item": item }),
        );
        let part = json!({ "type": "summary_text", "text": "" });
        let at = json!({ "item_id": id, "output_index": idx, "summary_index": 0 });
        e.emit(
            "response.reasoning_summary_part.added",
            with(&at, "part", part),
        );
        let kind = "response.reasoning_summary_text.delta";
        e.emit_pieces(
            kind,
            with(&at, "delta", json!(PIECE)),
            split_chars(&reply.reasoning, n),
        );
        e.emit(
            "response.reasoning_summary_text.done",
            with(&at, "text", json!(reply.reasoning)),
        );
        let mut done = json!({ "id": id, "type": "reasoning",
            "summary": [{ "type": "summary_text", "text": reply.reasoning }] });
        if ctx.include_encrypted {
            done["encrypted_content"] = json!(reply.signature_text());
        }
        e.emit(
            "response.output_item.done",
            json!({ "output_index": idx, "item": done }),
        );
        output.push(done);
    }

    let pieces = reply.text_pieces();
    if !pieces.is_empty() {
        let idx = output.len();
        let id = format!("msg_{}_{idx}", ctx.id);
        let item = json!({ "id": id, "type": "message", "status": "in_progress",
            "role": "assistant", "content": [] });
        e.emit(
            "response.output_item.added",
            json!({ "output_index": idx, "item": item }),
        );
        let at = json!({ "item_id": id, "output_index": idx, "content_index": 0 });
        let empty = json!({ "type": "output_text", "text": "", "annotations": [] });
        e.emit("response.content_part.added", with(&at, "part", empty));
        e.emit_pieces(
            "response.output_text.delta",
            with(&at, "delta", json!(PIECE)),
            pieces,
        );
        if reply.fault.is_none() || reply.fault == Some(Fault::MalformedChunk) {
            let text = reply.full_text();
            e.emit("response.output_text.done", with(&at, "text", json!(text)));
            let part = json!({ "type": "output_text", "text": text, "annotations": [] });
            e.emit(
                "response.content_part.done",
                with(&at, "part", part.clone()),
            );
            let done = json!({ "id": id, "type": "message", "status": "completed",
                "role": "assistant", "content": [part] });
            e.emit(
                "response.output_item.done",
                json!({ "output_index": idx, "item": done }),
            );
            output.push(done);
        }
    }

    for call in &reply.tool_calls {
        let idx = output.len();
        let id = format!("fc_{}_{idx}", ctx.id);
        let item = json!({ "id": id, "type": "function_call", "status": "in_progress",
            "arguments": "", "call_id": call.id, "name": call.name });
        e.emit(
            "response.output_item.added",
            json!({ "output_index": idx, "item": item }),
        );
        let at = json!({ "item_id": id, "output_index": idx });
        let kind = "response.function_call_arguments.delta";
        e.emit_pieces(
            kind,
            with(&at, "delta", json!(PIECE)),
            split_chars(&call.arguments, n),
        );
        let args = json!(call.arguments);
        e.emit(
            "response.function_call_arguments.done",
            with(&at, "arguments", args.clone()),
        );
        let done = json!({ "id": id, "type": "function_call", "status": "completed",
            "arguments": args, "call_id": call.id, "name": call.name });
        e.emit(
            "response.output_item.done",
            json!({ "output_index": idx, "item": done }),
        );
        output.push(done);
    }

    match &reply.fault {
        Some(Fault::DropMidStream) => e.frames.push(Frame::Abort),
        Some(Fault::Stall(d)) => e.frames.extend([Frame::Stall(*d), Frame::Abort]),
        Some(Fault::StreamError { code, message }) => {
            e.emit(
                "error",
                json!({ "code": code, "message": message, "param": null }),
            );
        }
        other => {
            if other == &Some(Fault::MalformedChunk) {
                e.frames.push(malformed());
            }
            let usage = reply.usage.map_or(Value::Null, |u| {
                json!({
                    "input_tokens": u.input,
                    "input_tokens_details": { "cached_tokens": u.cached },
                    "output_tokens": u.output,
                    "output_tokens_details": { "reasoning_tokens": u.reasoning },
                    "total_tokens": u.input + u.output,
                })
            });
            let done = response_object(ctx, "completed", output, usage);
            e.emit("response.completed", json!({ "response": done }));
        }
    }
    e.frames
}

/// `base` with one more field.
fn with(base: &Value, key: &str, v: Value) -> Value {
    let mut out = base.clone();
    if let Value::Object(m) = &mut out {
        m.insert(key.to_string(), v);
    }
    out
}
