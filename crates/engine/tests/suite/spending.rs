//! A session's spending cap (issue 44) as the engine keeps it: what requests outside the
//! turns spent (naming) counts, and a cap raised after `budget_exceeded` lets the session go on.

use crate::common;

use std::sync::Arc;

use cairn_engine::spend::SpendLimit;
use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::Session;
use cairn_protocol::{Event, Mode, TokenUsage, TurnStatus};
use common::*;

fn usage(input: u64) -> TokenUsage {
    TokenUsage {
        input_tokens: input,
        output_tokens: 0,
        ..Default::default()
    }
}

#[tokio::test]
async fn spending_outside_the_turns_counts_and_a_raised_cap_lets_the_session_go_on() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::text("after the raise")]);
    let mut cfg = config(&dir, Mode::Interactive);
    cfg.spend_limit = Some(SpendLimit::Tokens(1_000));
    let s = Session::builder(cfg, Arc::new(llm.clone())).build();
    // Naming the session used 1,200 tokens: over the cap before any turn.
    s.add_spent(&usage(1_200), "m");
    let ev = collect(s.run("go")).await;
    assert_eq!(turn_end(&ev).status, TurnStatus::Error);
    assert!(
        ev.iter()
            .any(|e| matches!(e, Event::Error(x) if x.error_type == "budget_exceeded")),
        "{:?}",
        types(&ev)
    );
    assert!(llm.requests().is_empty(), "no request past the cap");
    assert_eq!(s.spent().map(|x| x.tokens), Some(1_200));
    // The user raises the cap: the next turn runs.
    s.set_spend_limit(Some(SpendLimit::Tokens(10_000)));
    assert_eq!(s.spend_limit(), Some(SpendLimit::Tokens(10_000)));
    let ev = collect(s.run("continue")).await;
    assert_eq!(
        turn_end(&ev).status,
        TurnStatus::Completed,
        "{:?}",
        types(&ev)
    );
    assert_eq!(llm.requests().len(), 1);
}
