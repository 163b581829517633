//! The usage center's numbers: requests, tokens and cost per session and per day, and the
//! failed or retried requests with their reasons, folded from the session event logs (so
//! turns run by the CLI and by the app count alike). Prices come from the providers' model
//! table ([`cairn_providers::cost_usd`]) when a reply was not priced when it ran.

use std::collections::BTreeMap;

use cairn_protocol::{Event, TokenUsage};
use serde::Serialize;
use ts_rs::TS;

use crate::store::{SessionStore, StoreError};

/// Requests, tokens and cost of one session or one day.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export_to = "app/")]
pub struct UsageRow {
    /// Session id or `YYYY-MM-DD`.
    pub key: String,
    /// Session name or the day.
    pub label: String,
    /// LLM requests sent (retries included).
    #[ts(type = "number")]
    pub requests: u64,
    /// Requests that failed or were retried.
    #[ts(type = "number")]
    pub failed: u64,
    /// Input tokens.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Of which read from the prompt cache.
    #[ts(type = "number")]
    pub cached_tokens: u64,
    /// Output tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Cost in USD of the priced replies.
    pub cost_usd: f64,
    /// Replies whose model has no known price (not in `cost_usd`).
    #[ts(type = "number")]
    pub unpriced: u64,
}

/// A failed or retried LLM request and why.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export_to = "app/")]
pub struct FailureRow {
    /// RFC 3339 time of the request, when known.
    pub at: String,
    /// Session id.
    pub session_id: String,
    /// Session name.
    pub session_name: String,
    /// Model id.
    pub model: String,
    /// `retry` (the engine tried again) or `error` (the turn reported an error).
    pub kind: String,
    /// The reason the provider or engine gave.
    pub reason: String,
    /// Retry attempt and maximum, for retries.
    pub attempt: Option<String>,
}

/// The usage center.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export_to = "app/")]
pub struct UsageReport {
    /// Every session together.
    pub total: UsageRow,
    /// Per session, most expensive first.
    pub sessions: Vec<UsageRow>,
    /// Per day, newest first.
    pub days: Vec<UsageRow>,
    /// Failed or retried requests, newest first.
    pub failures: Vec<FailureRow>,
}

/// Most failures listed.
const MAX_FAILURES: usize = 200;

/// Prices a reply: USD for `usage` on `model`, `None` when the price is unknown.
pub type PriceFn<'a> = &'a dyn Fn(&str, &TokenUsage) -> Option<f64>;

/// One session's identity and its logged events.
pub struct SessionLog {
    /// Session id.
    pub id: String,
    /// Session name.
    pub name: String,
    /// Model recorded for the session (used until an `llm_request` names one).
    pub model: String,
    /// The event log.
    pub events: Vec<Event>,
}

fn row(key: &str, label: &str) -> UsageRow {
    UsageRow {
        key: key.to_string(),
        label: label.to_string(),
        requests: 0,
        failed: 0,
        input_tokens: 0,
        cached_tokens: 0,
        output_tokens: 0,
        cost_usd: 0.0,
        unpriced: 0,
    }
}

fn add_usage(r: &mut UsageRow, usage: &TokenUsage, cost: Option<f64>) {
    r.input_tokens += usage.input_tokens;
    r.cached_tokens += usage.cached_input_tokens;
    r.output_tokens += usage.output_tokens;
    match cost {
        Some(c) => r.cost_usd += c,
        None => r.unpriced += 1,
    }
}

/// The day (`YYYY-MM-DD`) of an RFC 3339 time, `unknown` when it has none.
fn day_of(time: &str) -> String {
    match time.get(..10) {
        Some(d) if d.as_bytes().get(4) == Some(&b'-') => d.to_string(),
        _ => "unknown".to_string(),
    }
}

/// Folds the logs into the report.
pub fn fold(logs: &[SessionLog], price: PriceFn<'_>) -> UsageReport {
    let mut total = row("total", "All sessions");
    let mut sessions = Vec::new();
    let mut days: BTreeMap<String, UsageRow> = BTreeMap::new();
    let mut failures = Vec::new();
    for log in logs {
        let label = if log.name.is_empty() {
            &log.id
        } else {
            &log.name
        };
        let mut s = row(&log.id, label);
        let mut model = log.model.clone();
        let mut at = String::new();
        for e in &log.events {
            match e {
                Event::LlmRequest(r) => {
                    model = r.model.clone();
                    at = r.log_time.clone();
                    let d = day_of(&at);
                    s.requests += 1;
                    total.requests += 1;
                    days.entry(d.clone())
                        .or_insert_with(|| row(&d, &d))
                        .requests += 1;
                }
                Event::AssistantMessage(m) => {
                    let Some(u) = &m.usage else { continue };
                    // The engine prices replies itself when it knows the model; else the table.
                    let cost = m.cost_usd.or_else(|| price(&model, u));
                    let time = if m.log_time.is_empty() {
                        &at
                    } else {
                        &m.log_time
                    };
                    let d = day_of(time);
                    add_usage(&mut s, u, cost);
                    add_usage(&mut total, u, cost);
                    add_usage(
                        days.entry(d.clone()).or_insert_with(|| row(&d, &d)),
                        u,
                        cost,
                    );
                }
                Event::LlmRetry(r) => {
                    let d = day_of(&at);
                    s.failed += 1;
                    total.failed += 1;
                    days.entry(d.clone()).or_insert_with(|| row(&d, &d)).failed += 1;
                    failures.push(FailureRow {
                        at: at.clone(),
                        session_id: log.id.clone(),
                        session_name: label.to_string(),
                        model: model.clone(),
                        kind: "retry".into(),
                        reason: r.reason.clone(),
                        attempt: Some(format!("{}/{}", r.attempt, r.max)),
                    });
                }
                Event::Error(err) => {
                    let time = if err.log_time.is_empty() {
                        &at
                    } else {
                        &err.log_time
                    };
                    let d = day_of(time);
                    s.failed += 1;
                    total.failed += 1;
                    days.entry(d.clone()).or_insert_with(|| row(&d, &d)).failed += 1;
                    failures.push(FailureRow {
                        at: time.clone(),
                        session_id: log.id.clone(),
                        session_name: label.to_string(),
                        model: model.clone(),
                        kind: "error".into(),
                        reason: if err.error_type.is_empty() {
                            err.error.clone()
                        } else {
                            format!("{} ({})", err.error, err.error_type)
                        },
                        attempt: None,
                    });
                }
                _ => {}
            }
        }
        if s.requests > 0 || s.failed > 0 {
            sessions.push(s);
        }
    }
    sessions.sort_by(|a, b| {
        b.cost_usd
            .total_cmp(&a.cost_usd)
            .then(b.requests.cmp(&a.requests))
    });
    failures.sort_by(|a, b| b.at.cmp(&a.at));
    failures.truncate(MAX_FAILURES);
    UsageReport {
        total,
        sessions,
        days: days.into_values().rev().collect(),
        failures,
    }
}

/// The usage report of every session in `store`; a session whose log cannot be read is
/// left out.
pub fn report(store: &SessionStore) -> Result<UsageReport, StoreError> {
    let logs: Vec<SessionLog> = store
        .list()?
        .into_iter()
        .filter_map(|s| {
            let events = store.read_events(&s.id).ok()?;
            Some(SessionLog {
                id: s.id,
                name: s.name,
                model: s.model,
                events,
            })
        })
        .collect();
    Ok(fold(&logs, &cairn_providers::cost_usd))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    // Events are built from JSON so fields added to the protocol later do not break tests.
    fn ev(v: serde_json::Value) -> Event {
        serde_json::from_value(v).unwrap()
    }

    fn req(time: &str, model: &str) -> Event {
        ev(
            serde_json::json!({"type": "llm_request", "data": {"reqId": "r", "taskId": "t",
            "logTime": time, "model": model, "msgCount": 1, "toolCount": 0}}),
        )
    }

    fn reply(time: &str, input: u64, output: u64) -> Event {
        ev(
            serde_json::json!({"type": "assistant_message", "data": {"text": "x", "reasoning": "",
            "tool_calls": [], "usage": {"input_tokens": input, "output_tokens": output},
            "reqId": "r", "taskId": "t", "logTime": time}}),
        )
    }

    #[test]
    fn sums_per_session_and_day_and_lists_failures() {
        let price = |model: &str, u: &TokenUsage| {
            (model == "priced").then(|| (u.input_tokens + u.output_tokens) as f64 / 1000.0)
        };
        let logs = vec![
            SessionLog {
                id: "a".into(),
                name: "First".into(),
                model: "priced".into(),
                events: vec![
                    req("2026-03-01T10:00:00Z", "priced"),
                    ev(
                        serde_json::json!({"type": "llm_retry", "data": {"attempt": 1, "max": 3,
                        "reason": "failed (HTTP 429): rate limited", "waitMs": 10,
                        "iteration": 1, "reqId": "r"}}),
                    ),
                    req("2026-03-01T10:00:01Z", "priced"),
                    reply("2026-03-01T10:00:02Z", 1000, 500),
                ],
            },
            SessionLog {
                id: "b".into(),
                name: String::new(),
                model: "free".into(),
                events: vec![
                    req("2026-03-02T09:00:00Z", "free"),
                    reply("2026-03-02T09:00:01Z", 10, 5),
                    ev(
                        serde_json::json!({"type": "error", "data": {"error": "auth: bad key",
                        "error_type": "auth", "retriable": false, "iteration": 1, "reqId": "r",
                        "logTime": "2026-03-02T09:00:02Z", "taskId": "t"}}),
                    ),
                ],
            },
        ];
        let r = fold(&logs, &price);
        assert_eq!(r.total.requests, 3);
        assert_eq!(r.total.failed, 2);
        assert_eq!(r.total.input_tokens, 1010);
        assert!((r.total.cost_usd - 1.5).abs() < 1e-9);
        assert_eq!(r.total.unpriced, 1);
        assert_eq!(r.sessions[0].label, "First");
        assert_eq!(r.sessions[1].label, "b");
        let days: Vec<_> = r.days.iter().map(|d| d.key.as_str()).collect();
        assert_eq!(days, ["2026-03-02", "2026-03-01"]);
        assert_eq!(r.failures.len(), 2);
        assert_eq!(r.failures[0].kind, "error");
        assert!(r.failures[0].reason.contains("bad key"));
        assert_eq!(r.failures[1].attempt.as_deref(), Some("1/3"));
        assert!(r.failures[1].reason.contains("429"));
    }
}
