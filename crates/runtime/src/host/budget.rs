//! A session's spending cap as the faces see and change it (the app's "raise the cap").

use cairn_engine::spend::SpendLimit;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::SessionHandle;

/// The cap and what was spent against it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct BudgetView {
    /// `usd` or `tokens`; `None` without a cap.
    pub unit: Option<String>,
    /// The cap, in `unit`.
    pub limit: Option<f64>,
    /// Dollars spent (`None` when a request's price was unknown or nothing was counted yet).
    pub spent_usd: Option<f64>,
    /// Tokens spent (`None` before a turn of this process counted).
    pub spent_tokens: Option<u64>,
}

/// A new cap.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, TS)]
#[serde(tag = "unit", content = "limit", rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum BudgetLimit {
    /// Dollars.
    Usd(f64),
    /// Input plus output tokens.
    Tokens(u64),
    /// No cap.
    None,
}

/// A cap that cannot be set.
#[derive(Debug, thiserror::Error)]
#[error("a spending cap is a positive number of dollars or tokens")]
pub struct BadBudget;

impl SessionHandle {
    /// The session's spending cap and what it spent.
    pub fn budget(&self) -> BudgetView {
        let session = self.session();
        let spent = session.spent();
        let (unit, limit) = match session.spend_limit() {
            Some(SpendLimit::Usd(v)) => (Some("usd".to_string()), Some(v)),
            Some(SpendLimit::Tokens(n)) => (Some("tokens".to_string()), Some(n as f64)),
            None => (None, None),
        };
        BudgetView {
            unit,
            limit,
            spent_usd: spent.and_then(|s| s.cost),
            spent_tokens: spent.map(|s| s.tokens),
        }
    }

    /// Sets the session's cap from its next request on (raising it after `budget_exceeded`).
    pub fn set_budget(&self, limit: BudgetLimit) -> Result<BudgetView, BadBudget> {
        let limit = match limit {
            BudgetLimit::Usd(v) if v.is_finite() && v > 0.0 => Some(SpendLimit::Usd(v)),
            BudgetLimit::Tokens(n) if n > 0 => Some(SpendLimit::Tokens(n)),
            BudgetLimit::None => None,
            _ => return Err(BadBudget),
        };
        self.session().set_spend_limit(limit);
        Ok(self.budget())
    }
}
