//! The turn's side of the spending cap ([`crate::spend`]): where the session stands before
//! each model request.

use cairn_protocol::{BudgetWarning, Event};

use super::TurnRunner;
use crate::locks::{lock, read};
use crate::spend::{standing, Spent, Standing};

impl TurnRunner<'_> {
    /// What the session's earlier turns spent (counted from the history the first time).
    pub(crate) fn session_spent(&mut self) -> &mut Spent {
        let first = self.state.spent.is_none();
        if first {
            let model = read(&self.inner.config).model.clone();
            let pricing = self.inner.pricing.clone();
            let spent = Spent::of_history(&self.state.messages, |u| {
                pricing.as_ref().and_then(|p| p.cost_usd(&model, u))
            });
            self.state.spent = Some(spent);
        }
        // What was spent outside the turns since (naming) counts too.
        let outside: Vec<_> = std::mem::take(&mut *lock(&self.inner.spent_outside));
        let spent = self.state.spent.get_or_insert_with(Spent::zero);
        for (u, cost) in outside {
            spent.add(&u, cost);
        }
        if first {
            // From now on the turns keep the live count up to date.
            *lock(&self.inner.spent_live) = Some(*spent);
        }
        spent
    }

    /// Why the next request must not go out (the cap is reached); warns once at 80 % (or
    /// that a dollar cap cannot be enforced).
    pub(crate) async fn over_budget(&mut self) -> Option<String> {
        // Counted with or without a cap: the faces show what a session spent.
        let before = *self.session_spent();
        let limit = read(&self.inner.config).spend_limit?;
        if self
            .inner
            .spend_rewarn
            .swap(false, std::sync::atomic::Ordering::SeqCst)
        {
            self.state.spend_warned = false;
        }
        let mut this_turn = Spent::zero();
        if let Some(u) = &self.usage {
            this_turn.add(u, self.cost);
        }
        if let Some((u, cost)) = lock(&self.host.extra_usage).as_ref() {
            this_turn.add(u, *cost);
        }
        let (spent, limit_value, unit, message) = match standing(limit, before.plus(this_turn)) {
            Standing::Fine => return None,
            Standing::Exceeded(message) => return Some(message),
            Standing::Warn(spent, cap, unit, message) => (spent, cap, unit, message),
            Standing::Unpriced(message) => (0.0, 0.0, "usd", message),
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
