//! The machine-wide turn limit through `cairn run`: with one slot, a second run waits
//! (saying so on stderr) until the first ends.

use std::time::Duration;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::json;

use super::checkpoints::cairn;

#[tokio::test(flavor = "multi_thread")]
async fn a_second_run_waits_for_the_only_turn_slot_and_says_so() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(state.path().join("turn-slots")).unwrap();
    std::fs::write(state.path().join("turn-slots/limit"), "1").unwrap();
    let slow = MockLlmServer::with_script(vec![
        Reply::tool_call("c1", "run_shell", json!({"command": "sleep 2"})),
        Reply::text("first done"),
    ])
    .await
    .unwrap();
    let quick = MockLlmServer::with_script(vec![Reply::text("second done")])
        .await
        .unwrap();
    let (w, s) = (
        ws.path().display().to_string(),
        state.path().display().to_string(),
    );
    let (slow_url, quick_url) = (slow.base_url(), quick.base_url());
    let args = |url: &str| {
        vec![
            "run".to_string(),
            "-w".into(),
            w.clone(),
            "--state-dir".into(),
            s.clone(),
            "--base-url".into(),
            url.to_string(),
            "--model".into(),
            "m".into(),
            "--mode".into(),
            "auto".into(),
            "--sandbox".into(),
            "off".into(),
            "go".into(),
        ]
    };
    let a_args = args(&slow_url);
    let b_args = args(&quick_url);
    let first = tokio::spawn(async move {
        let v: Vec<&str> = a_args.iter().map(String::as_str).collect();
        cairn(&v, &[]).await
    });
    slow.wait_for_requests(1, Duration::from_secs(30)).await;
    let v: Vec<&str> = b_args.iter().map(String::as_str).collect();
    let second = cairn(&v, &[]).await;
    let first = first.await.unwrap();
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("waiting for a turn slot (1 running)"),
        "{}",
        second.stderr
    );
    assert!(second.stdout.contains("second done"));
    // The second asked its model only after the first had finished its turn.
    assert_eq!(slow.requests().len(), 2);
}
