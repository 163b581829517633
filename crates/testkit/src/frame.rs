//! What the mock writes on the wire, one step at a time.

use std::time::Duration;

/// One step of a streamed response body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Frame {
    /// A complete SSE event (already terminated by a blank line).
    Event(String),
    /// Send nothing for this long.
    Stall(Duration),
    /// Abort the connection (no terminating chunk).
    Abort,
}

/// Request facts a renderer echoes into the stream.
#[derive(Clone, Debug)]
pub(crate) struct RenderCtx {
    /// Response id (`chatcmpl-…` / `resp_…`).
    pub id: String,
    /// Model named in the request.
    pub model: String,
    /// Unix time of the request.
    pub created: u64,
    /// Whether the chat request asked for `stream_options.include_usage`.
    pub include_usage: bool,
    /// Whether the Responses request asked for `reasoning.encrypted_content`.
    pub include_encrypted: bool,
}

/// A `data:`-only SSE event.
pub(crate) fn data(v: &serde_json::Value) -> Frame {
    Frame::Event(format!("data: {v}\n\n"))
}

/// A named SSE event.
pub(crate) fn named(event: &str, v: &serde_json::Value) -> Frame {
    Frame::Event(format!("event: {event}\ndata: {v}\n\n"))
}

/// The broken line sent for [`crate::Fault::MalformedChunk`].
pub(crate) fn malformed() -> Frame {
    Frame::Event("data: {\"id\": \"broken\", \"choices\": [{\"delta\": \n\n".to_string())
}

/// Marker replaced by the streamed piece in a [`Template`].
pub(crate) const PIECE: &str = "@@mock-piece@@";
/// Marker replaced by the sequence number in a [`Template`].
pub(crate) const SEQ: &str = "@@mock-seq@@";

/// Where a [`Template`] takes a value.
#[derive(Clone, Copy, Debug)]
enum Hole {
    Piece,
    Seq,
}

/// An event serialized once with holes, filled cheaply per chunk (long scripts stream
/// 100k chunks).
pub(crate) struct Template {
    parts: Vec<String>,
    holes: Vec<Hole>,
}

impl Template {
    /// A template of `v`, whose string values [`PIECE`] / [`SEQ`] become holes.
    pub(crate) fn new(event: Option<&str>, v: &serde_json::Value) -> Template {
        let text = match event {
            Some(e) => format!("event: {e}\ndata: {v}\n\n"),
            None => format!("data: {v}\n\n"),
        };
        let markers = [
            (format!("\"{PIECE}\""), Hole::Piece),
            (format!("\"{SEQ}\""), Hole::Seq),
        ];
        let (mut parts, mut holes) = (Vec::new(), Vec::new());
        let mut rest = text.as_str();
        loop {
            let next = markers
                .iter()
                .filter_map(|(m, h)| rest.find(m.as_str()).map(|i| (i, m.len(), *h)))
                .min_by_key(|(i, _, _)| *i);
            let Some((i, len, hole)) = next else {
                parts.push(rest.to_string());
                break;
            };
            parts.push(rest[..i].to_string());
            holes.push(hole);
            rest = &rest[i + len..];
        }
        Template { parts, holes }
    }

    /// The event with `piece` (as a JSON string) and `seq` filled in.
    pub(crate) fn fill(&self, piece: &str, seq: u64) -> Frame {
        let piece = serde_json::Value::from(piece).to_string();
        let mut out =
            String::with_capacity(self.parts.iter().map(String::len).sum::<usize>() + piece.len());
        for (i, part) in self.parts.iter().enumerate() {
            out.push_str(part);
            match self.holes.get(i) {
                Some(Hole::Piece) => out.push_str(&piece),
                Some(Hole::Seq) => out.push_str(&seq.to_string()),
                None => {}
            }
        }
        Frame::Event(out)
    }
}

/// Largest body write when consecutive events are merged.
const COALESCE_BYTES: usize = 16 * 1024;

/// Merges runs of consecutive events into writes of up to [`COALESCE_BYTES`] (what a fast
/// server and TCP do anyway), so long scripted streams cost few body frames.
pub(crate) fn coalesce(frames: Vec<Frame>) -> Vec<Frame> {
    let mut out: Vec<Frame> = Vec::new();
    for f in frames {
        match (out.last_mut(), f) {
            (Some(Frame::Event(acc)), Frame::Event(next))
                if acc.len() + next.len() <= COALESCE_BYTES =>
            {
                acc.push_str(&next)
            }
            (_, f) => out.push(f),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesces_events_but_not_across_faults() {
        let e = |s: &str| Frame::Event(s.to_string());
        let frames = vec![e("a"), e("b"), Frame::Abort, e("c")];
        assert_eq!(coalesce(frames), vec![e("ab"), Frame::Abort, e("c")]);
        let big = "x".repeat(COALESCE_BYTES);
        assert_eq!(coalesce(vec![e(&big), e("y")]).len(), 2);
    }

    #[test]
    fn templates_fill_holes_with_json() {
        let v = serde_json::json!({"seq": SEQ, "delta": {"content": PIECE}});
        let t = Template::new(Some("x"), &v);
        let Frame::Event(s) = t.fill("a\"b", 7) else {
            panic!()
        };
        let data: serde_json::Value =
            serde_json::from_str(s.trim_start_matches("event: x\ndata: ").trim())
                .unwrap_or_default();
        assert_eq!(
            data,
            serde_json::json!({"seq": 7, "delta": {"content": "a\"b"}})
        );
    }
}
