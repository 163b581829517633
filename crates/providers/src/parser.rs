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

/// Pushes a text-like chunk unless it is empty.
pub(crate) fn push_text(
    out: &mut VecDeque<LlmChunk>,
    s: Option<&str>,
    make: fn(String) -> LlmChunk,
) {
    if let Some(s) = s.filter(|s| !s.is_empty()) {
        out.push_back(make(s.to_string()));
    }
}
