//! A long session opens with its newest turns only: the view holds the last 100 turns, the
//! meter's usage of the older ones, and where they end; `session_history` pages the rest in,
//! oldest last, until none is left (the runtime's history API, as the transcript uses it).

use super::*;

#[path = "../../../benches/app_memory/seed.rs"]
#[allow(dead_code)]
mod seed;

fn questions(events: &Value) -> Vec<String> {
    events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "turn_start")
        .map(|e| e["data"]["input"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_long_session_opens_with_its_newest_turns_and_pages_the_older_ones_in() {
    let h = harness(&[], ApprovalHost::Ui);
    // Without a session shown, a clear error.
    let err = invoke(&h.window, "session_history", json!({"before": 1})).unwrap_err();
    assert!(err.contains("No session"), "{err}");
    let ws = h.workspace.path().canonicalize().unwrap();
    seed::session(h.state_dir.path(), &ws, "long-1", "A long one", 250);
    ok(&h.window, "open_workspace", json!({"path": ws}));
    let view = ok(&h.window, "open_session", json!({"id": "long-1"}));
    let shown = questions(&view["events"]);
    assert_eq!(shown.len(), 100);
    assert_eq!(shown[0], seed::question(151));
    assert_eq!(shown[99], seed::question(250));
    assert_eq!(view["historyBefore"], 150);
    // The 150 turns not sent still count in the meter: each seeded turn has two replies.
    assert_eq!(view["earlierUsage"]["input"], 150 * 2 * 1200);
    assert_eq!(view["earlierUsage"]["unpriced"], 150 * 2);

    // Paging back visits every older turn once, newest page first, and ends.
    let mut before = view["historyBefore"].as_u64().unwrap();
    let mut older: Vec<String> = Vec::new();
    loop {
        let page = ok(
            &h.window,
            "session_history",
            json!({"before": before, "limit": 60}),
        );
        let mut batch = questions(&page["events"]);
        batch.extend(older);
        older = batch;
        before = page["first"].as_u64().unwrap();
        assert_eq!(page["total"], 250);
        if before == 0 {
            break;
        }
    }
    let expected: Vec<String> = (1..=150).map(seed::question).collect();
    assert_eq!(older, expected);
}
