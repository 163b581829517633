//! Scripted servers with malformed replies (`tests/scripted/server.py`): bad tool entries are
//! skipped or repaired while the valid ones stay usable, an unusable `tools/list` reply is
//! blamed rather than the server's exit, and startup failures quote clean stderr.

use crate::common;

use std::time::Duration;

use cairn_mcp::{LazyMode, ServerConfig, ServerInfo, ServerStatus, TransportConfig};
use common::*;
use serde_json::json;

fn scripted(name: &str, mode: &str) -> ServerConfig {
    let script =
        cairn_testkit::manifest_dir(env!("CARGO_MANIFEST_DIR")).join("tests/scripted/server.py");
    let mut cfg = stdio_server(name, &[], &[]);
    cfg.transport = Some(TransportConfig::Stdio {
        program: "python3".into(),
        args: vec![script.display().to_string(), mode.into()],
        env: Default::default(),
        cwd: None,
    });
    cfg
}

fn info(h: &Harness, name: &str) -> ServerInfo {
    h.manager
        .status()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap()
}

fn failed_reason(h: &Harness, name: &str) -> String {
    match info(h, name).status {
        ServerStatus::Failed { reason } => reason,
        other => panic!("{name} is {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_tool_entries_are_skipped_and_the_valid_ones_kept() {
    let h = Harness::new(vec![scripted("bad", "bad-tools")], |_| {});
    let (ok, failed) = h.manager.connect_all().await;
    assert_eq!(ok, ["bad"], "{failed:?}");
    let i = info(&h, "bad");
    assert_eq!(i.tools, ["echo", "no_schema", "null_schema", "odd_fields"]);
    let w = i.warnings.join("\n");
    for expected in [
        "tool `no_schema` has no inputSchema",
        "tool `null_schema` has no inputSchema",
        "skipped tools/list entry 4 of page 1: tool `string_schema`: inputSchema is a string",
        "skipped tools/list entry 5 of page 1: the tool has no `name`",
        "skipped tools/list entry 6 of page 1: a number, not a tool object",
        "tool `odd_fields`: malformed optional fields ignored",
    ] {
        assert!(w.contains(expected), "missing `{expected}` in:\n{w}");
    }
    // A tool without a schema is offered as taking any object, and works.
    let schema = h
        .registry
        .lock()
        .unwrap()
        .get("mcp__bad__no_schema")
        .map(|t| t.handle.schema().parameters)
        .unwrap();
    assert_eq!(schema, json!({"type": "object", "properties": {}}));
    let out = h.call("mcp__bad__no_schema", json!({})).await.unwrap();
    assert_eq!(out.content, "called no_schema");
    assert_eq!(
        h.call("mcp__bad__echo", json!({"text": "x"}))
            .await
            .unwrap()
            .content,
        "called echo"
    );
    let listed = serde_json::to_value(&i).unwrap();
    assert_eq!(listed["warnings"].as_array().unwrap().len(), 6, "{listed}");
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reply_that_is_not_a_tools_list_is_blamed_not_the_exit() {
    let h = Harness::new(vec![scripted("broken", "bad-result")], |_| {});
    let err = h.manager.connect_server("broken").await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP server `broken`: invalid tools/list response: `tools` is a string, not a list; \
         stderr: got tools/list\nstderr (last 3 lines):\ngot initialize\ngot notifications/initialized\ngot tools/list"
    );
    let reason = failed_reason(&h, "broken");
    assert!(!reason.contains("exited"), "{reason}");
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn every_page_is_read_and_bad_entries_on_later_pages_are_skipped() {
    let h = Harness::new(vec![scripted("paged", "paged")], |_| {});
    h.manager.connect_all().await;
    let i = info(&h, "paged");
    assert_eq!(i.status, ServerStatus::Ready { tools: 2 });
    assert_eq!(i.tools, ["first", "second"]);
    assert_eq!(i.warnings.len(), 2, "{:?}", i.warnings);
    assert!(i.warnings[1].contains("entry 2 of page 2: the tool's `name` is a number"));
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_startup_failure_quotes_clean_stderr_from_its_first_line() {
    let h = Harness::new(vec![scripted("noisy", "noisy-exit")], |_| {});
    h.manager.connect_all().await;
    let reason = failed_reason(&h, "noisy");
    let mut lines = reason.lines();
    // What one-line listings (`cairn mcp list`) show is complete on its own.
    assert_eq!(
        lines.next().unwrap(),
        "exited during startup (exit status 3); stderr: FATAL: TEST_TOKEN is not set"
    );
    assert_eq!(lines.next().unwrap(), "stderr (last 20 lines):");
    let tail: Vec<&str> = lines.collect();
    assert_eq!(tail.len(), 20, "{reason}");
    assert_eq!(tail[0], "line 6");
    assert_eq!(tail[19], "FATAL: TEST_TOKEN is not set");
    assert!(
        !reason.chars().any(|c| c.is_control() && c != '\n'),
        "{reason:?}"
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_startup_failure_without_stderr_has_no_dangling_label() {
    let h = Harness::new(vec![scripted("quiet", "quiet-exit")], |_| {});
    h.manager.connect_all().await;
    assert_eq!(
        failed_reason(&h, "quiet"),
        "exited during startup (exit status 3)"
    );
    h.manager.close_all().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn lazy_calls_to_a_starting_server_wait_and_others_say_why() {
    let mut hung = stdio_server("hung", &["hang-initialize"], &[]);
    hung.startup_timeout = Some(Duration::from_millis(700));
    let h = Harness::new(
        vec![
            stdio_server("slow", &["slow-start=1500"], &[]),
            stdio_server("dies", &["exit-initialize"], &[]),
            hung,
        ],
        |o| {
            o.lazy.mode = LazyMode::On;
            o.max_backoff = Duration::from_millis(100);
        },
    );
    h.manager.start_all();
    let search = h
        .call("mcp_search_tools", json!({"query": "echo"}))
        .await
        .unwrap();
    assert!(
        search.content.contains("still starting") && search.content.contains("slow"),
        "{}",
        search.content
    );
    // Still starting: the call waits for the server instead of saying the tool does not exist.
    let out = h
        .call(
            "mcp_call_tool",
            json!({"name": "mcp__slow__echo", "arguments": {"text": "waited"}}),
        )
        .await
        .unwrap();
    assert_eq!(out.content, "waited");
    let err = h
        .call("mcp_call_tool", json!({"name": "mcp__dies__echo"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("MCP server `dies` is not available: exited during startup (exit status 3)"),
        "{err}"
    );
    let err = h
        .call("mcp_call_tool", json!({"name": "mcp__hung__echo"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("MCP server `hung` is not available: did not finish starting"),
        "{err}"
    );
    let err = h
        .call("mcp_call_tool", json!({"name": "mcp__slow__nope"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("MCP server `slow` is ready but lists no tool named `mcp__slow__nope`"),
        "{err}"
    );
    let err = h
        .call("mcp_call_tool", json!({"name": "mcp__ghost__echo"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no MCP tool named `mcp__ghost__echo`"),
        "{err}"
    );
    h.manager.close_all().await;
}
