//! A session's spending cap as the faces see and change it (the app's "raise the cap").

use std::sync::Arc;

use cairn_engine::spend::{SharedCap, SpendLimit, Spent};
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use super::{Host, SessionHandle};

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
    /// How many sessions share the cap shown: 1 for the session's own, more for a batch of
    /// sessions started together (whose spending is then the batch's).
    pub sessions: usize,
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

/// `limit` as the engine's cap (`None`: no cap).
fn engine_limit(limit: BudgetLimit) -> Result<Option<SpendLimit>, BadBudget> {
    match limit {
        BudgetLimit::Usd(v) if v.is_finite() && v > 0.0 => Ok(Some(SpendLimit::Usd(v))),
        BudgetLimit::Tokens(n) if n > 0 => Ok(Some(SpendLimit::Tokens(n))),
        BudgetLimit::None => Ok(None),
        _ => Err(BadBudget),
    }
}

fn view(limit: Option<SpendLimit>, spent: Option<Spent>, sessions: usize) -> BudgetView {
    let (unit, limit) = match limit {
        Some(SpendLimit::Usd(v)) => (Some("usd".to_string()), Some(v)),
        Some(SpendLimit::Tokens(n)) => (Some("tokens".to_string()), Some(n as f64)),
        None => (None, None),
    };
    BudgetView {
        unit,
        limit,
        spent_usd: spent.and_then(|s| s.cost),
        spent_tokens: spent.map(|s| s.tokens),
        sessions,
    }
}

impl SessionHandle {
    /// The session's spending cap and what it spent; for a session of a batch without a cap
    /// of its own, the batch's cap and what the batch spent.
    pub fn budget(&self) -> BudgetView {
        let session = self.session();
        match (session.spend_limit(), session.shared_cap()) {
            (None, Some(shared)) => {
                view(Some(shared.limit()), Some(shared.spent()), shared.members())
            }
            (own, _) => view(own, session.spent(), 1),
        }
    }

    /// Sets the cap [`SessionHandle::budget`] shows from the next request on (raising it
    /// after `budget_exceeded`): the batch's for a session of a batch without its own.
    pub fn set_budget(&self, limit: BudgetLimit) -> Result<BudgetView, BadBudget> {
        let limit = engine_limit(limit)?;
        let session = self.session();
        match (session.spend_limit(), session.shared_cap(), limit) {
            (None, Some(shared), Some(limit)) => shared.set_limit(limit),
            _ => session.set_spend_limit(limit),
        }
        Ok(self.budget())
    }
}

impl Host {
    /// Counts `session` against batch `batch`'s shared cap (made with `limit` by its first
    /// member; a later member's `limit` changes nothing): the sessions of a batch started
    /// together from the board stop at the batch's cap together.
    pub fn join_batch(
        &self,
        session: &SessionHandle,
        batch: &str,
        limit: BudgetLimit,
    ) -> Result<BudgetView, BadBudget> {
        let Some(limit) = engine_limit(limit)? else {
            return Err(BadBudget);
        };
        let cap = {
            let mut batches = super::lock(&self.batches);
            batches
                .entry(batch.to_string())
                .or_insert_with(|| SharedCap::new(limit))
                .clone()
        };
        if !session
            .session()
            .shared_cap()
            .is_some_and(|c| Arc::ptr_eq(&c, &cap))
        {
            session.session().share_cap(cap);
        }
        Ok(session.budget())
    }
}
