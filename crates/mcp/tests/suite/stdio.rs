//! The manager against the real rmcp test server over stdio: list, call, progress, error,
//! image, resources, tool-list changes, lazy loading.

use crate::common;

use std::time::{Duration, Instant};

use cairn_engine::ToolError;
use cairn_mcp::{LazyMode, ServerStatus, CALL_TOOL, SEARCH_TOOL};
use cairn_protocol::RiskLevel;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn lists_and_calls_text_image_resource_and_error_results() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |_| {});
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["t"], "{failed:?}");
    let names = h.names();
    for n in [
        "mcp__t__echo",
        "mcp__t__slow",
        "mcp__t__fail",
        "mcp__t__image",
        "mcp__t__big",
    ] {
        assert!(names.contains(&n.to_string()), "{names:?}");
    }
    let info = h.manager.status();
    assert_eq!(info[0].status, ServerStatus::Ready { tools: 13 });
    assert_eq!(info[0].transport, "stdio");
    assert!(info[0].pid.is_some_and(alive));

    let reg = h
        .registry
        .lock()
        .unwrap()
        .get("mcp__t__echo")
        .unwrap()
        .clone();
    assert_eq!(reg.meta.category, "mcp");
    assert_eq!(reg.meta.risk, RiskLevel::High);
    assert!(reg.meta.requires_approval && reg.meta.mutating);
    assert_eq!(reg.meta.source, "mcp:t");
    assert_eq!(reg.schema.parameters["type"], "object");
    assert!(reg.schema.description.contains("Echoes"));

    let out = h
        .call("mcp__t__echo", json!({"text": "hello there"}))
        .await
        .unwrap();
    assert_eq!(out.content, "hello there");
    let img = h.call("mcp__t__image", json!({})).await.unwrap();
    assert_eq!(
        img.content,
        "here is the image\n[image: image/png, 70 bytes]"
    );
    let res = h.call("mcp__t__resource", json!(null)).await.unwrap();
    assert!(
        res.content.contains("[resource: mem://notes/1"),
        "{}",
        res.content
    );
    assert!(res.content.contains("the note's text"));
    assert!(res
        .content
        .contains("[resource link: file:///tmp/report.txt (report.txt), text/plain]"));
    let err = h
        .call("mcp__t__fail", json!({"message": "disk on fire"}))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Failed(_)), "{err:?}");
    assert_eq!(
        err.to_string(),
        "MCP tool `fail` on server `t` reported an error: disk on fire"
    );
    let bad = h
        .call("mcp__t__echo", json!("not an object"))
        .await
        .unwrap_err();
    assert!(matches!(bad, ToolError::InvalidArguments(_)));
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_extends_the_call_timeout_up_to_the_maximum() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |o| {
        o.call_timeout = Duration::from_millis(500);
        o.max_call_timeout = Duration::from_millis(2000);
    });
    h.manager.connect_all().await;
    // 6 × 200 ms = 1.2 s: longer than the 500 ms idle limit, kept alive by progress.
    let out = h
        .call("mcp__t__slow", json!({"steps": 6, "delay_ms": 200}))
        .await
        .unwrap();
    assert_eq!(out.content, "done after 6 steps");
    // No progress at all: the idle limit fires.
    let started = Instant::now();
    let err = h.call("mcp__t__hang", json!({})).await.unwrap_err();
    assert!(matches!(err, ToolError::Timeout { ms: 500, .. }), "{err:?}");
    assert!(
        err.to_string().contains("no answer and no progress"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_millis(1500));
    // Progress forever: the total cap fires.
    let err = h
        .call("mcp__t__slow", json!({"steps": 30, "delay_ms": 200}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ToolError::Timeout { ms: 2000, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("maximum call time"), "{err}");
    // The server still answers after both timeouts.
    assert_eq!(
        h.call("mcp__t__echo", json!({"text": "still here"}))
            .await
            .unwrap()
            .content,
        "still here"
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_call_returns_at_once() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |_| {});
    h.manager.connect_all().await;
    let handle = h
        .registry
        .lock()
        .unwrap()
        .get("mcp__t__hang")
        .unwrap()
        .handle
        .clone();
    let ctx = h.ctx();
    let cancel = ctx.cancel.clone();
    let task = tokio::spawn(async move { handle.execute(json!({}), ctx).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    cancel.cancel();
    let r = tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(r, Err(ToolError::Interrupted)), "{r:?}");
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_list_changes_are_picked_up_without_restarting() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |_| {});
    h.manager.connect_all().await;
    assert!(!h.names().contains(&"mcp__t__late_tool".to_string()));
    h.call("mcp__t__add_tool", json!({})).await.unwrap();
    assert!(
        eventually(Duration::from_secs(5), || h
            .names()
            .contains(&"mcp__t__late_tool".to_string()))
        .await,
        "{:?}",
        h.names()
    );
    let out = h.call("mcp__t__late_tool", json!({})).await.unwrap();
    assert_eq!(out.content, "late tool answered");
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lazy_mode_offers_search_and_call_and_search_loads_matches() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |o| {
        o.lazy.mode = LazyMode::On
    });
    h.manager.connect_all().await;
    assert!(h.manager.is_lazy());
    let mut names = h.names();
    names.sort();
    assert_eq!(names, [CALL_TOOL, SEARCH_TOOL]);
    let search = h.registry.lock().unwrap().get(SEARCH_TOOL).unwrap().clone();
    assert!(!search.meta.requires_approval && !search.meta.mutating);
    let call = h.registry.lock().unwrap().get(CALL_TOOL).unwrap().clone();
    assert!(call.meta.requires_approval);

    let found = h
        .call(SEARCH_TOOL, json!({"query": "echoes text"}))
        .await
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&found.content).unwrap();
    assert_eq!(v["matches"][0]["name"], "mcp__t__echo", "{v}");
    assert_eq!(v["total_tools"], 13);
    assert!(
        h.names().contains(&"mcp__t__echo".to_string()),
        "search loads the top matches"
    );

    let out = h
        .call(
            CALL_TOOL,
            json!({"name": "mcp__t__echo", "arguments": {"text": "via meta"}}),
        )
        .await
        .unwrap();
    assert_eq!(out.content, "via meta");
    let missing = h
        .call(CALL_TOOL, json!({"name": "mcp__t__nope"}))
        .await
        .unwrap_err();
    assert!(missing.to_string().contains(SEARCH_TOOL), "{missing}");
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lazy_auto_turns_on_above_the_tool_threshold() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |o| {
        o.lazy.mode = LazyMode::Auto;
        o.lazy.threshold_tools = 5;
    });
    h.manager.connect_all().await;
    assert!(h.manager.is_lazy());
    assert_eq!(h.names().len(), 2);
    h.manager.close_all().await;
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |o| {
        o.lazy.mode = LazyMode::Auto
    });
    h.manager.connect_all().await;
    assert!(
        !h.manager.is_lazy(),
        "12 small tools stay under the defaults"
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn refresh_reconnects_with_a_new_process() {
    let h = Harness::new(vec![stdio_server("t", &[], &[])], |_| {});
    h.manager.connect_all().await;
    let first = h.pid("t").unwrap();
    h.manager.refresh("t").await.unwrap();
    let second = h.pid("t").unwrap();
    assert_ne!(first, second);
    assert!(eventually(Duration::from_secs(3), || !alive(first)).await);
    assert_eq!(
        h.call("mcp__t__echo", json!({"text": "x"}))
            .await
            .unwrap()
            .content,
        "x"
    );
    assert!(h.manager.refresh("nope").await.is_err());
    h.manager.close_all().await;
    assert!(eventually(Duration::from_secs(3), || !alive(second)).await);
}
