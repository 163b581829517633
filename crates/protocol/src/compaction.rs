//! Context compaction as the faces see it: the `compacting` / `compacted` events and the
//! session's compaction state.
//!
//! Values follow the reference catalogue: `trigger` is `threshold` or `overflow` (a provider
//! rejected the request as too long), `method` is `trimmed` (old tool results elided or cut,
//! repeated reads de-duplicated, no LLM call) or `summarized` (older messages replaced by a
//! summary); `none` (extension) says a pass changed nothing. Logs written before these values
//! (`soft`/`hard`, `elide`/`summary`) still read: use [`Compacting::summarising`] and
//! [`Compacted::kind`] instead of comparing strings.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `compacting`: context compaction starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Compacting {
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// `threshold` or `overflow` (older logs: `soft`, `hard`).
    pub trigger: String,
    pub tokens: u64,
    pub estimated: bool,
    #[serde(rename = "contextWindow")]
    pub context_window: u64,
    #[serde(rename = "thresholdPct")]
    pub threshold_pct: f64,
    #[serde(rename = "thresholdTokens")]
    pub threshold_tokens: u64,
    #[serde(rename = "outboundMessages")]
    pub outbound_messages: u32,
    /// `trim` (no LLM call) or `summary` (an LLM call follows) (extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub phase: Option<String>,
}

impl Compacting {
    /// Whether this pass asks the model for a summary (also for older logs' `hard`).
    pub fn summarising(&self) -> bool {
        match self.phase.as_deref() {
            Some(p) => p == "summary",
            None => self.trigger == "hard",
        }
    }
}

/// What a compaction pass did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionKind {
    /// Tool results elided or cut, repeated reads de-duplicated: no LLM call.
    Trimmed,
    /// Older messages replaced by a summary.
    Summarized,
    /// Nothing changed.
    Unchanged,
}

/// `compacted`: context compaction finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct Compacted {
    #[serde(rename = "reqId")]
    pub req_id: String,
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// `trimmed`, `summarized` or `none` (older logs: `elide`, `summary`).
    pub method: String,
    #[serde(rename = "messagesBefore")]
    pub messages_before: u32,
    #[serde(rename = "messagesAfter")]
    pub messages_after: u32,
    #[serde(rename = "boundaryIndex", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub boundary_index: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
    #[serde(rename = "summaryPreview", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub summary_preview: Option<String>,
    #[serde(rename = "keptUserMessages", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub kept_user_messages: Option<u32>,
    #[serde(
        rename = "droppedUserMessages",
        skip_serializing_if = "Option::is_none"
    )]
    #[ts(optional)]
    pub dropped_user_messages: Option<u32>,
    /// The session's compaction state after this pass (extension).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub state: Option<CompactionState>,
}

impl Compacted {
    /// What the pass did, for the new and the older method names alike.
    pub fn kind(&self) -> CompactionKind {
        match self.method.as_str() {
            "summarized" | "summary" => CompactionKind::Summarized,
            "none" => CompactionKind::Unchanged,
            _ => CompactionKind::Trimmed,
        }
    }
}

/// A session's compaction state (the reference design's `engine.compactionState`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct CompactionState {
    /// Compaction passes that changed the history.
    pub compactions: u32,
    /// Of those, the ones that summarised.
    pub summaries: u32,
    /// Tool results elided or cut, and repeated reads de-duplicated, in all.
    pub trimmed: u32,
    /// Tokens before the last pass.
    #[serde(rename = "tokensBefore")]
    pub tokens_before: u64,
    /// Tokens after the last pass (estimated).
    #[serde(rename = "tokensAfter")]
    pub tokens_after: u64,
    /// The threshold the history must stay under.
    #[serde(rename = "thresholdTokens")]
    pub threshold_tokens: u64,
    /// Passes in a row that left the history over its threshold (the breaker stops at 2).
    pub stalled: u32,
    /// The model that writes summaries.
    #[serde(rename = "summaryModel")]
    pub summary_model: String,
    /// The reasoning effort of the summary request (`low` by default).
    #[serde(rename = "summaryEffort", skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub summary_effort: Option<String>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn older_logs_read_with_the_new_names() {
        let old: Compacted = serde_json::from_value(serde_json::json!({
            "reqId": "", "taskId": "t", "method": "summary",
            "messagesBefore": 9, "messagesAfter": 3
        }))
        .expect("an old compacted event");
        assert_eq!(old.kind(), CompactionKind::Summarized);
        assert!(old.state.is_none());
        let old: Compacting = serde_json::from_value(serde_json::json!({
            "taskId": "t", "trigger": "hard", "tokens": 1, "estimated": true,
            "contextWindow": 10, "thresholdPct": 0.8, "thresholdTokens": 8,
            "outboundMessages": 4
        }))
        .expect("an old compacting event");
        assert!(old.summarising());
        let soft = Compacting {
            trigger: "soft".into(),
            ..old.clone()
        };
        assert!(!soft.summarising());
        let new = Compacting {
            trigger: "threshold".into(),
            phase: Some("summary".into()),
            ..old
        };
        assert!(new.summarising());
    }
}
