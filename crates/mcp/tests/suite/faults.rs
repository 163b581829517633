//! Every fault of issue 7 against the real test server: the call ends with a clear error,
//! other servers keep working, and no child process outlives the manager (checked by pid).

use crate::common;

use std::time::{Duration, Instant};

use cairn_engine::ToolError;
use cairn_mcp::ServerStatus;
use common::*;
use serde_json::json;

fn failed_reason(h: &Harness, name: &str) -> String {
    match h
        .manager
        .status()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap()
        .status
    {
        ServerStatus::Failed { reason } => reason,
        other => panic!("{name} is {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn exit_during_initialize_fails_loudly_and_the_other_server_works() {
    let m = marker();
    let h = Harness::new(
        vec![
            stdio_server("good", &[], &[]),
            stdio_server("dies", &["exit-initialize"], &[m.as_str()]),
        ],
        |_| {},
    );
    let started = Instant::now();
    let (ok, failed) = h.manager.connect_all().await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(ok, ["good"]);
    assert_eq!(failed.len(), 1);
    let reason = failed_reason(&h, "dies");
    assert!(
        reason.contains("exited during startup (exit status 3)"),
        "{reason}"
    );
    assert!(
        reason.contains("TEST_API_KEY is not set"),
        "stderr shown on failure: {reason}"
    );
    assert_eq!(
        h.call("mcp__good__echo", json!({"text": "fine"}))
            .await
            .unwrap()
            .content,
        "fine"
    );
    assert!(!h.names().iter().any(|n| n.starts_with("mcp__dies__")));
    assert!(processes_with(&m).is_empty());
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn hang_in_initialize_hits_the_per_server_startup_timeout_and_is_killed() {
    let m = marker();
    let mut hung = stdio_server("hangs", &["hang-initialize"], &[m.as_str()]);
    hung.startup_timeout = Some(Duration::from_millis(800));
    let h = Harness::new(vec![hung, stdio_server("good", &[], &[])], |_| {});
    h.manager.start_all();
    // The good server does not wait for the hung one.
    assert!(
        eventually(Duration::from_secs(5), || h
            .names()
            .contains(&"mcp__good__echo".to_string()))
        .await
    );
    assert!(h.manager.wait_settled(Duration::from_secs(5)).await);
    let reason = failed_reason(&h, "hangs");
    assert!(reason.contains("within 800 ms"), "{reason}");
    assert!(
        eventually(Duration::from_secs(3), || processes_with(&m).is_empty()).await,
        "the hung server was not killed"
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn crash_mid_call_is_a_clear_error_then_the_server_restarts() {
    let h = Harness::new(
        vec![stdio_server("c", &[], &[]), stdio_server("other", &[], &[])],
        |_| {},
    );
    h.manager.connect_all().await;
    let first = h.pid("c").unwrap();
    let started = Instant::now();
    let err = h.call("mcp__c__crash", json!({})).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    let msg = err.to_string();
    assert!(matches!(err, ToolError::Failed(_)));
    assert!(
        msg.contains("MCP server `c` exited during the call (exit status 7)"),
        "{msg}"
    );
    assert!(msg.contains("about to crash"), "stderr quoted: {msg}");
    assert!(!alive(first));
    // The other server never noticed.
    assert_eq!(
        h.call("mcp__other__echo", json!({"text": "ok"}))
            .await
            .unwrap()
            .content,
        "ok"
    );
    // A call during the restart waits for it; the tools stayed registered.
    let out = h
        .call("mcp__c__echo", json!({"text": "back"}))
        .await
        .unwrap();
    assert_eq!(out.content, "back");
    let info = h
        .manager
        .status()
        .into_iter()
        .find(|s| s.name == "c")
        .unwrap();
    assert_eq!(info.restarts, 1);
    assert_ne!(info.pid, Some(first));
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn repeated_crashes_exhaust_the_restart_budget() {
    let h = Harness::new(vec![stdio_server("c", &[], &[])], |o| o.max_restarts = 1);
    h.manager.connect_all().await;
    let first = h.pid("c").unwrap();
    h.call("mcp__c__crash", json!({})).await.unwrap_err();
    assert!(
        eventually(Duration::from_secs(5), || h
            .pid("c")
            .is_some_and(|p| p != first))
        .await,
        "restarted once"
    );
    h.call("mcp__c__crash", json!({})).await.unwrap_err();
    assert!(
        eventually(Duration::from_secs(5), || matches!(
            h.manager.status()[0].status,
            ServerStatus::Failed { ref reason } if reason.contains("gave up after 1 restarts")
        ))
        .await,
        "{:?}",
        h.manager.status()
    );
    assert!(
        h.names().is_empty(),
        "tools of a dead server are withdrawn: {:?}",
        h.names()
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn stderr_flood_is_bounded_and_never_blocks_the_server() {
    let h = Harness::new(vec![stdio_server("loud", &["flood-stderr"], &[])], |o| {
        o.stderr_log_bytes = 16 * 1024;
    });
    h.manager.connect_all().await;
    for i in 0..20 {
        let t = format!("call {i}");
        let out = h.call("mcp__loud__echo", json!({"text": t})).await.unwrap();
        assert_eq!(out.content, t);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (tail, held) = h.manager.stderr_tail("loud", 5000).unwrap();
    assert!(held <= 16 * 1024, "log holds {held} bytes");
    assert!(tail.contains("stderr flood"), "{tail}");
    assert!(
        tail.starts_with("[… "),
        "dropped bytes are noted: {}",
        &tail[..40.min(tail.len())]
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ten_megabyte_result_arrives_whole() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |_| {});
    h.manager.connect_all().await;
    let out = h.call("mcp__t__big", json!({})).await.unwrap();
    assert_eq!(out.content.len(), 10 * 1024 * 1024);
    assert_eq!(
        h.call("mcp__t__echo", json!({"text": "after"}))
            .await
            .unwrap()
            .content,
        "after"
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicate_and_colliding_tool_names_stay_distinct_and_callable() {
    let h = Harness::new(vec![stdio_server("d", &["duplicate-tools"], &[])], |_| {});
    h.manager.connect_all().await;
    let names = h.names();
    assert_eq!(names.iter().filter(|n| *n == "mcp__d__echo").count(), 1);
    assert_eq!(
        h.manager.status()[0].status,
        ServerStatus::Ready { tools: 15 }
    );
    let ab: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("mcp__d__a_b"))
        .collect();
    assert_eq!(ab.len(), 2, "{names:?}");
    let mut answers = Vec::new();
    for n in ab {
        assert!(n.len() <= 64);
        answers.push(h.call(n, json!({})).await.unwrap().content);
    }
    answers.sort();
    assert_eq!(answers, ["called a.b", "called a_b"]);
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn close_all_leaves_no_process_behind_grandchildren_included() {
    let m = marker();
    let h = Harness::new(
        vec![
            stdio_server("a", &["grandchild"], &[m.as_str()]),
            stdio_server("b", &[], &[m.as_str()]),
        ],
        |_| {},
    );
    h.manager.connect_all().await;
    let a = h.pid("a").unwrap();
    let b = h.pid("b").unwrap();
    let grandchild: u32 = h
        .call("mcp__a__grandchild_pid", json!({}))
        .await
        .unwrap()
        .content
        .parse()
        .unwrap();
    assert!(grandchild > 0 && alive(grandchild));
    let started = Instant::now();
    h.manager.close_all().await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(
        eventually(Duration::from_secs(2), || !alive(a)
            && !alive(b)
            && !alive(grandchild))
        .await,
        "alive: a={} b={} grandchild={}",
        alive(a),
        alive(b),
        alive(grandchild)
    );
    assert!(processes_with(&m).is_empty());
    assert!(
        h.names().is_empty(),
        "tools are withdrawn after close_all: {:?}",
        h.names()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_the_manager_kills_its_servers() {
    let m = marker();
    let h = Harness::new(
        vec![stdio_server("a", &["grandchild"], &[m.as_str()])],
        |_| {},
    );
    h.manager.connect_all().await;
    let pid = h.pid("a").unwrap();
    let grandchild: u32 = h
        .call("mcp__a__grandchild_pid", json!({}))
        .await
        .unwrap()
        .content
        .parse()
        .unwrap();
    drop(h);
    assert!(eventually(Duration::from_secs(3), || !alive(pid) && !alive(grandchild)).await);
    assert!(processes_with(&m).is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_server_never_delays_the_others() {
    let m = marker();
    let h = Harness::new(
        vec![
            stdio_server("slow", &["slow-start=3000"], &[m.as_str()]),
            stdio_server("fast", &[], &[]),
        ],
        |_| {},
    );
    let started = Instant::now();
    h.manager.start_all();
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "start_all does not wait"
    );
    assert!(
        eventually(Duration::from_secs(2), || h
            .names()
            .contains(&"mcp__fast__echo".to_string()))
        .await
    );
    assert!(started.elapsed() < Duration::from_millis(2500));
    assert!(!h.manager.wait_settled(Duration::from_millis(100)).await);
    assert_eq!(h.manager.status()[0].status, ServerStatus::Starting);
    // A call to the starting server waits for it.
    assert!(
        eventually(Duration::from_secs(10), || h
            .names()
            .contains(&"mcp__slow__echo".to_string()))
        .await
    );
    h.manager.close_all().await;
    assert!(eventually(Duration::from_secs(2), || processes_with(&m).is_empty()).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_program_fails_with_a_clear_reason() {
    let mut cfg = stdio_server("ghost", &[], &[]);
    cfg.transport = Some(cairn_mcp::TransportConfig::Stdio {
        program: "/nonexistent/mcp-server".into(),
        args: vec![],
        env: Default::default(),
        cwd: None,
    });
    let h = Harness::new(vec![cfg], |_| {});
    let (_, failed) = h.manager.connect_all().await;
    assert!(
        failed[0]
            .1
            .to_string()
            .contains("cannot start `/nonexistent/mcp-server`"),
        "{failed:?}"
    );
    h.manager.close_all().await;
}
