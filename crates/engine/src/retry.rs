//! The loop's retry policy for transient LLM failures: exponential backoff with jitter.

use std::time::Duration;

use crate::llm::{FailureKind, LlmOutcome, OutcomeStatus};

/// How often and how long to wait before retrying a failed LLM request.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Base delay; attempt n waits about `base * 2^(n-1)`, plus jitter.
    pub base_delay: Duration,
    /// Upper bound of one wait (also caps `Retry-After`).
    pub max_delay: Duration,
}

/// The shapes of a 400 that are transient faults in a gateway's words, each with the phrases
/// that make it (lower case), as [`RetryPolicy::transient_bad_request`] matches them.
pub const TRANSIENT_400_SHAPES: &[(&str, &[&str])] = &[
    (
        "overloaded",
        &["overloaded", "over capacity", "at capacity", "no capacity"],
    ),
    (
        "unavailable",
        &[
            "temporarily unavailable",
            "service unavailable",
            "currently unavailable",
        ],
    ),
    (
        "try_again",
        &[
            "try again",
            "please retry",
            "retry later",
            "retry your request",
        ],
    ),
    (
        "upstream",
        &[
            "upstream",
            "bad gateway",
            "gateway timeout",
            "timed out",
            "connection reset",
            "connection closed",
        ],
    ),
    (
        "internal",
        &[
            "internal error",
            "internal server error",
            "unexpected error",
            "something went wrong",
        ],
    ),
    (
        "rate_limit",
        &["rate limit", "too many requests", "throttl"],
    ),
];

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(800),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// Defaults overridden by `NETWORK_RETRY_MAX` and `NETWORK_RETRY_BASE_MS`.
    pub fn from_env() -> Self {
        let mut p = RetryPolicy::default();
        if let Some(n) = std::env::var("NETWORK_RETRY_MAX")
            .ok()
            .and_then(|v| v.trim().parse().ok())
        {
            p.max_retries = n;
        }
        if let Some(ms) = std::env::var("NETWORK_RETRY_BASE_MS")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            p.base_delay = Duration::from_millis(ms);
        }
        p
    }

    /// Whether an outcome is worth retrying at all.
    pub fn is_retriable(outcome: &LlmOutcome) -> bool {
        match outcome.status {
            OutcomeStatus::Timeout | OutcomeStatus::Malformed => true,
            OutcomeStatus::Failed => !matches!(
                outcome.kind,
                Some(FailureKind::ContextOverflow)
                    | Some(FailureKind::BadRequest)
                    | Some(FailureKind::QuotaExhausted)
            ),
            OutcomeStatus::Completed | OutcomeStatus::Aborted | OutcomeStatus::Auth => false,
        }
    }

    /// The known transient shape of a 400 (or another 4xx the classifier called a bad
    /// request), if it has one: a gateway saying in its own words that it is overloaded,
    /// unavailable, timed out upstream, hit an internal error or a rate limit, or asking to
    /// try again. Seed 000: the classification stays honest (`failed`, a bad request) while
    /// the policy retries it, once.
    pub fn transient_bad_request(outcome: &LlmOutcome) -> Option<&'static str> {
        if outcome.status != OutcomeStatus::Failed
            || outcome.kind != Some(FailureKind::BadRequest)
            || outcome
                .http_status
                .is_some_and(|s| !(400..500).contains(&s))
        {
            return None;
        }
        let message = outcome.message.as_deref()?.to_ascii_lowercase();
        TRANSIENT_400_SHAPES
            .iter()
            .find(|(_, words)| words.iter().any(|w| message.contains(w)))
            .map(|(shape, _)| *shape)
    }

    /// Wait before retry number `attempt` (1-based); honours `Retry-After` when present.
    pub fn delay(&self, attempt: u32, outcome: &LlmOutcome) -> Duration {
        if let Some(ra) = outcome.retry_after {
            return ra.min(self.max_delay);
        }
        let exp = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)));
        let capped = exp.min(self.max_delay);
        // Up to 25 % jitter either side, so parallel clients do not retry in lockstep.
        let ms = capped.as_millis() as f64;
        let jitter = (rand::random::<f64>() - 0.5) * 0.5 * ms;
        Duration::from_millis((ms + jitter).max(0.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_follows_the_outcome_contract() {
        let t = LlmOutcome::new(OutcomeStatus::Timeout, None);
        assert!(RetryPolicy::is_retriable(&t));
        let m = LlmOutcome::new(OutcomeStatus::Malformed, None);
        assert!(RetryPolicy::is_retriable(&m));
        let f = LlmOutcome::new(OutcomeStatus::Failed, None).with_kind(FailureKind::Server);
        assert!(RetryPolicy::is_retriable(&f));
        let a = LlmOutcome::new(OutcomeStatus::Auth, None);
        assert!(!RetryPolicy::is_retriable(&a));
        let c =
            LlmOutcome::new(OutcomeStatus::Failed, None).with_kind(FailureKind::ContextOverflow);
        assert!(!RetryPolicy::is_retriable(&c));
    }

    #[test]
    fn backoff_grows_and_honours_retry_after() {
        let p = RetryPolicy {
            max_retries: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
        };
        let o = LlmOutcome::new(OutcomeStatus::Timeout, None);
        let d1 = p.delay(1, &o).as_millis();
        let d3 = p.delay(3, &o).as_millis();
        assert!((75..=125).contains(&d1), "{d1}");
        assert!((300..=500).contains(&d3), "{d3}");
        assert!(p.delay(30, &o) <= Duration::from_millis(2500));
        let ra = o.clone().with_retry_after(Some(Duration::from_secs(1)));
        assert_eq!(p.delay(1, &ra), Duration::from_secs(1));
        let huge = o.with_retry_after(Some(Duration::from_secs(3600)));
        assert_eq!(p.delay(1, &huge), Duration::from_secs(2));
    }
}
