//! The session's spending cap, as the faces see it.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// `budget_warning`: the session used 80 % of its spending cap, or the cap cannot be
/// enforced (the model's price is unknown) — once per session (extension).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct BudgetWarning {
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Spent so far, in `unit`.
    pub spent: f64,
    /// The cap, in `unit`.
    pub limit: f64,
    /// `usd` or `tokens`.
    pub unit: String,
    /// In words, for the user.
    pub message: String,
}
