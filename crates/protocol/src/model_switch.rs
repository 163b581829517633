//! A model switch as the faces see it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `model_switched`: the session's model changed (`/model`, the app's picker, a role, a
/// settings change) with what depends on it; said at the start of the next turn, so the
/// transcript and the event log keep it (extension).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct ModelSwitched {
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// The model from now on.
    pub model: String,
    /// The model before.
    pub previous: String,
    /// The context window in force (the new model's unless it was set explicitly).
    #[serde(rename = "contextWindow")]
    pub context_window: u64,
    /// Where summarising compaction starts now.
    #[serde(rename = "thresholdTokens")]
    pub threshold_tokens: u64,
    /// Whether the new model sees images (images go to it as images; else `describe_image`).
    pub vision: bool,
    /// Whether the price of the new model is known (cost and dollar caps count).
    pub priced: bool,
    /// Tools offered now that were not before (e.g. `read_image`).
    #[serde(rename = "toolsAdded")]
    pub tools_added: Vec<String>,
    /// Tools no longer offered (e.g. `describe_image`).
    #[serde(rename = "toolsRemoved")]
    pub tools_removed: Vec<String>,
    /// In words, for the user.
    pub message: String,
}
