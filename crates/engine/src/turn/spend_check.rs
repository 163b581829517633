//! The turn's side of the spending cap ([`crate::spend`]): where the session stands before
//! each model request.

use cairn_protocol::{BudgetWarning, Event};

use super::TurnRunner;
use crate::locks::{lock, read};
use crate::spend::{standing, Spent, Standing};

impl TurnRunner<'_> {
    /// Counts what the session spent from its history, once per process, before the turn
    /// spends anything: from then on each request adds to the one live count
    /// (`Inner::spent_live`), which the cap, the board and the faces read.
    pub(crate) fn count_spent(&self) {
        let mut live = lock(&self.inner.spent_live);
        if live.is_some() {
            return;
        }
        let model = read(&self.inner.config).model.clone();
        let pricing = self.inner.pricing.clone();
        let mut spent = Spent::of_history(&self.state.messages, |u| {
            pricing.as_ref().and_then(|p| p.cost_usd(&model, u))
        });
        // What was spent outside the turns before the count began (naming).
        for (u, cost) in std::mem::take(&mut *lock(&self.inner.spent_outside)) {
            spent.add(&u, cost);
        }
        *live = Some(spent);
    }

    /// Why the next request must not go out (the cap is reached); warns once at 80 % (or
    /// that a dollar cap cannot be enforced).
    pub(crate) async fn over_budget(&mut self) -> Option<String> {
        let shared = lock(&self.inner.shared_cap).clone();
        let own = read(&self.inner.config).spend_limit;
        if own.is_none() && shared.is_none() {
            return None;
        }
        if self
            .inner
            .spend_rewarn
            .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            self.state.spend_warned = false;
        }
        // The live count has every request so far; subagents' usage joins it at the turn's end.
        let mut spent = lock(&self.inner.spent_live).unwrap_or_else(Spent::zero);
        if let Some((u, cost)) = lock(&self.host.extra_usage).as_ref() {
            spent.add(u, *cost);
        }
        let own = own.map_or(Standing::Fine, |limit| standing(limit, spent));
        // The batch's cap: the other members' live counts and this one's.
        let batch = shared.map_or(Standing::Fine, |cap| cap.standing());
        let (spent, limit_value, unit, message) = match (own, batch) {
            (Standing::Exceeded(message), _) | (_, Standing::Exceeded(message)) => {
                return Some(message)
            }
            (Standing::Warn(spent, cap, unit, message), _)
            | (_, Standing::Warn(spent, cap, unit, message)) => (spent, cap, unit, message),
            (Standing::Unpriced(message), _) | (_, Standing::Unpriced(message)) => {
                (0.0, 0.0, "usd", message)
            }
            (Standing::Fine, Standing::Fine) => return None,
        };
        if !self.state.spend_warned {
            self.state.spend_warned = true;
            self.emit(Event::BudgetWarning(BudgetWarning {
                task_id: self.task_id.clone(),
                spent,
                limit: limit_value,
                unit: unit.to_string(),
                message,
            }))
            .await;
        }
        None
    }
}
