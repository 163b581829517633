//! The interface between the SSE driver and the wire-format parsers.

use std::collections::VecDeque;

use cairn_engine::{LlmChunk, LlmOutcome, OutcomeStatus};

/// What the driver does after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Keep reading.
    Continue,
    /// The response is complete: stop reading.
    Done,
}

/// Turns the SSE events of one response into [`LlmChunk`]s.
pub(crate) trait StreamParser: Send {
    /// Handles one event; partial output goes to `out`. An `Err` ends the stream with it.
    fn feed(
        &mut self,
        event: &str,
        data: &str,
        out: &mut VecDeque<LlmChunk>,
    ) -> Result<Flow, LlmOutcome>;
    /// Whether enough arrived that an end of the byte stream counts as a normal end.
    fn is_complete(&self) -> bool;
    /// Final chunks (assembled tool calls, usage) and the outcome of a completed response.
    fn finish(&mut self, out: &mut VecDeque<LlmChunk>) -> LlmOutcome;
}

/// The outcome of an unparsable event.
pub(crate) fn malformed(what: &str, err: &serde_json::Error, data: &str) -> LlmOutcome {
    let sample: String = data.chars().take(80).collect();
    LlmOutcome::new(
        OutcomeStatus::Malformed,
        Some(format!(
            "unparsable {what}: {err} (data starts with {sample:?})"
        )),
    )
}

/// Which text-like chunk a delta is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextKind {
    /// Answer text.
    Text,
    /// Reasoning text.
    Reasoning,
}

/// Room for the deltas of a typical read, so merging them does not grow the text step by step.
const MERGED_CAPACITY: usize = 512;

/// A new merged text starting with `s`.
fn merged(s: &str) -> String {
    let mut t = String::with_capacity(s.len().max(MERGED_CAPACITY));
    t.push_str(s);
    t
}

/// Pushes a text-like chunk unless it is empty. Deltas of one body read that follow each
/// other with the same kind travel as one chunk: the engine would merge them anyway, and one
/// allocation and one stream poll per network read instead of per token keeps the provider
/// close to the speed of the raw read.
pub(crate) fn push_text(out: &mut VecDeque<LlmChunk>, s: Option<&str>, kind: TextKind) {
    let Some(s) = s.filter(|s| !s.is_empty()) else {
        return;
    };
    match (out.back_mut(), kind) {
        (Some(LlmChunk::Text(t)), TextKind::Text)
        | (Some(LlmChunk::Reasoning(t)), TextKind::Reasoning) => t.push_str(s),
        (_, TextKind::Text) => out.push_back(LlmChunk::Text(merged(s))),
        (_, TextKind::Reasoning) => out.push_back(LlmChunk::Reasoning(merged(s))),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn same_kind_deltas_merge_and_kinds_stay_in_order() {
        let mut out = VecDeque::new();
        push_text(&mut out, Some("a"), TextKind::Reasoning);
        push_text(&mut out, Some("b"), TextKind::Reasoning);
        push_text(&mut out, Some(""), TextKind::Text);
        push_text(&mut out, Some("c"), TextKind::Text);
        push_text(&mut out, None, TextKind::Text);
        push_text(&mut out, Some("d"), TextKind::Text);
        push_text(&mut out, Some("e"), TextKind::Reasoning);
        assert_eq!(
            Vec::from(out),
            vec![
                LlmChunk::Reasoning("ab".into()),
                LlmChunk::Text("cd".into()),
                LlmChunk::Reasoning("e".into()),
            ]
        );
    }
}
