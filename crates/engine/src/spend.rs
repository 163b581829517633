//! A session's spending cap: in dollars where the model's price is known, in tokens
//! otherwise (never mixed). Everything a turn pays for counts — its model requests, its
//! compaction summaries and what its tools asked of a model (subagents, MCP sampling). A
//! warning at 80 %; at 100 % the turn ends with `budget_exceeded` before its next request.

use cairn_protocol::{Message, TokenUsage};

/// A session's cap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SpendLimit {
    /// US dollars (only where every request's price is known).
    Usd(f64),
    /// Input plus output tokens.
    Tokens(u64),
}

/// The share of the cap at which the user is warned.
pub const WARN_AT: f64 = 0.8;

/// What a session spent so far.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Spent {
    /// Input plus output tokens.
    pub tokens: u64,
    /// Dollars; `None` once a request's price was unknown.
    pub cost: Option<f64>,
}

impl Spent {
    /// Nothing spent.
    pub fn zero() -> Spent {
        Spent {
            tokens: 0,
            cost: Some(0.0),
        }
    }

    /// What the recorded model requests of `messages` cost (a restored session's).
    pub fn of_history(messages: &[Message], price: impl Fn(&TokenUsage) -> Option<f64>) -> Spent {
        let mut s = Spent::zero();
        for m in messages {
            if let Message::Assistant { usage: Some(u), .. } = m {
                s.add(u, price(u));
            }
        }
        s
    }

    /// Adds one request's tokens and cost.
    pub fn add(&mut self, usage: &TokenUsage, cost: Option<f64>) {
        self.tokens += usage.total();
        self.cost = match (self.cost, cost) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
    }

    /// `self` plus `other`.
    pub fn plus(self, other: Spent) -> Spent {
        Spent {
            tokens: self.tokens + other.tokens,
            cost: match (self.cost, other.cost) {
                (Some(a), Some(b)) => Some(a + b),
                _ => None,
            },
        }
    }
}

/// Where a session stands against its cap.
#[derive(Debug, Clone, PartialEq)]
pub enum Standing {
    /// Under 80 %.
    Fine,
    /// 80 % or more: (spent, limit, unit, message).
    Warn(f64, f64, &'static str, String),
    /// At or over the cap: the message.
    Exceeded(String),
    /// A dollar cap, but a price is unknown: it cannot be enforced (said once).
    Unpriced(String),
}

/// Where `spent` stands against `limit`.
pub fn standing(limit: SpendLimit, spent: Spent) -> Standing {
    let (used, cap, unit) = match limit {
        SpendLimit::Usd(cap) => match spent.cost {
            Some(c) => (c, cap, "usd"),
            None => {
                return Standing::Unpriced(format!(
                    "the session's ${cap:.2} spending cap cannot be enforced: this model's price \
                     is unknown (set CAIRN_PRICE_PER_MTOK=\"INPUT,OUTPUT\" dollars per million \
                     tokens, or cap tokens with --budget-tokens)"
                ))
            }
        },
        SpendLimit::Tokens(cap) => (spent.tokens as f64, cap as f64, "tokens"),
    };
    let shown = |v: f64| amount(unit, v);
    if used >= cap {
        Standing::Exceeded(format!(
            "the session's spending cap is reached ({} of {}): the turn stopped before its \
             next model request. Raise the cap (--budget-usd / --budget-tokens, or in the app) \
             and continue with `cairn run --session ID --resume`, or start a new session.",
            shown(used),
            shown(cap)
        ))
    } else if used >= cap * WARN_AT {
        Standing::Warn(
            used,
            cap,
            unit,
            format!(
                "{} of the session's {} spending cap used",
                shown(used),
                shown(cap)
            ),
        )
    } else {
        Standing::Fine
    }
}

/// One session's live count, as a shared cap reads it.
pub type LiveSpent = std::sync::Arc<std::sync::Mutex<Option<Spent>>>;

/// A spending cap shared by several sessions (a batch of worktree sessions started together
/// from the board): each member's requests count against the one cap, read live from every
/// member's own count, so a member's next request stops once the batch as a whole reached it.
pub struct SharedCap {
    limit: std::sync::RwLock<SpendLimit>,
    members: std::sync::Mutex<Vec<LiveSpent>>,
}

impl SharedCap {
    /// A shared cap of `limit` with no member yet.
    pub fn new(limit: SpendLimit) -> std::sync::Arc<SharedCap> {
        std::sync::Arc::new(SharedCap {
            limit: std::sync::RwLock::new(limit),
            members: std::sync::Mutex::default(),
        })
    }

    /// The cap.
    pub fn limit(&self) -> SpendLimit {
        *self
            .limit
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Raises, lowers or changes the cap for every member's next request.
    pub fn set_limit(&self, limit: SpendLimit) {
        *self
            .limit
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = limit;
    }

    /// Counts `live` (a member's count) in.
    pub fn join(&self, live: LiveSpent) {
        self.members
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(live);
    }

    /// How many sessions share it.
    pub fn members(&self) -> usize {
        self.members
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len()
    }

    /// What the members spent together so far (a member not counted yet adds nothing).
    pub fn spent(&self) -> Spent {
        let members = self
            .members
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        members.iter().fold(Spent::zero(), |sum, live| {
            let mine = *live
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            sum.plus(mine.unwrap_or_else(Spent::zero))
        })
    }

    /// Where the batch stands (its messages name the batch, not one session), from one
    /// reading of the cap and of the members' counts.
    pub fn standing(&self) -> Standing {
        let n = self.members();
        let (limit, spent) = (self.limit(), self.spent());
        match standing(limit, spent) {
            Standing::Exceeded(_) | Standing::Warn(..) => {}
            other => return other,
        }
        let (used, cap, unit) = match (limit, spent.cost) {
            (SpendLimit::Usd(cap), Some(c)) => (c, cap, "usd"),
            (SpendLimit::Usd(cap), None) => (0.0, cap, "usd"),
            (SpendLimit::Tokens(cap), _) => (spent.tokens as f64, cap as f64, "tokens"),
        };
        let (shown_used, shown_cap) = (amount(unit, used), amount(unit, cap));
        if used >= cap {
            Standing::Exceeded(format!(
                "the batch's spending cap is reached ({shown_used} of {shown_cap}, shared by {n} \
                 sessions): the turn stopped before its next model request. Raise the batch's \
                 cap in the app, or continue the sessions you still want."
            ))
        } else {
            Standing::Warn(
                used,
                cap,
                unit,
                format!("{shown_used} of the batch's {shown_cap} spending cap used ({n} sessions)"),
            )
        }
    }
}

/// An amount in a cap's unit: `$0.0123` or `1200 tokens`.
fn amount(unit: &str, v: f64) -> String {
    match unit {
        "usd" => format!("${v:.4}"),
        _ => format!("{} tokens", v as u64),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_shared_cap_sums_its_members_live_counts() {
        let cap = SharedCap::new(SpendLimit::Usd(0.01));
        let a: LiveSpent = std::sync::Arc::new(std::sync::Mutex::new(Some(Spent {
            tokens: 100,
            cost: Some(0.004),
        })));
        let b: LiveSpent = std::sync::Arc::new(std::sync::Mutex::new(None));
        cap.join(a.clone());
        cap.join(b.clone());
        assert_eq!(cap.standing(), Standing::Fine, "b has not counted yet");
        *b.lock().unwrap() = Some(Spent {
            tokens: 50,
            cost: Some(0.0045),
        });
        assert!(matches!(cap.standing(), Standing::Warn(..)));
        *a.lock().unwrap() = Some(Spent {
            tokens: 200,
            cost: Some(0.006),
        });
        let Standing::Exceeded(message) = cap.standing() else {
            panic!("over the shared cap");
        };
        assert!(
            message.contains("batch") && message.contains("2 sessions"),
            "{message}"
        );
        cap.set_limit(SpendLimit::Usd(1.0));
        assert_eq!(cap.standing(), Standing::Fine);
    }

    #[test]
    fn dollars_where_priced_tokens_otherwise_never_mixed() {
        let spent = Spent {
            tokens: 900,
            cost: Some(0.0085),
        };
        assert!(matches!(
            standing(SpendLimit::Usd(0.01), spent),
            Standing::Warn(..)
        ));
        assert!(matches!(
            standing(SpendLimit::Usd(0.008), spent),
            Standing::Exceeded(_)
        ));
        assert_eq!(standing(SpendLimit::Usd(1.0), spent), Standing::Fine);
        assert!(matches!(
            standing(SpendLimit::Tokens(900), spent),
            Standing::Exceeded(_)
        ));
        let unpriced = Spent {
            tokens: 10,
            cost: None,
        };
        assert!(matches!(
            standing(SpendLimit::Usd(1.0), unpriced),
            Standing::Unpriced(_)
        ));
    }
}
