//! The conflict guard's watcher: a file the agent read that the user changes is named in the
//! result of the agent's next tool call (once); the agent's own writes and touches that do not
//! change content are not reported; the write itself is still refused.

use crate::common;

use std::time::{Duration, Instant};

use cairn_tools::core_tools;
use common::{tool, Ws};
use serde_json::json;

/// Calls list_files until its result names stale files, for at most 5 s; the notice the
/// model gets for them.
async fn next_notice(ws: &Ws, tools: &[cairn_engine::ToolHandle]) -> Option<String> {
    let list = tool(tools, "list_files");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        let out = ws.call(&list, json!({})).await.unwrap();
        assert!(
            !out.content.contains("[notice:"),
            "the tool's own text stays clean"
        );
        if !out.stale_files.is_empty() {
            return Some(cairn_engine::tool::stale_notice(&out.stale_files));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

#[tokio::test]
async fn a_file_changed_by_the_user_is_reported_once_and_its_write_refused() {
    let ws = Ws::new();
    ws.write("src/a.txt", "one\n");
    ws.write("b.txt", "bee\n");
    let tools = core_tools();
    let read = tool(&tools, "read_file");
    ws.call(&read, json!({"path": "src/a.txt"})).await.unwrap();
    ws.call(&read, json!({"path": "b.txt"})).await.unwrap();
    // The user edits a.txt in an editor; b.txt is only touched (same content).
    std::fs::write(ws.root.join("src/a.txt"), "one\ntwo typed by the user\n").unwrap();
    std::fs::write(ws.root.join("b.txt"), "bee\n").unwrap();
    let notice = next_notice(&ws, &tools).await.expect("no notice");
    assert!(notice.contains("`src/a.txt`"), "{notice}");
    assert!(!notice.contains("b.txt"), "{notice}");
    // Reported once.
    let list = tool(&tools, "list_files");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let again = ws.call(&list, json!({})).await.unwrap();
    assert!(again.stale_files.is_empty(), "{:?}", again.stale_files);
    // The write is still refused with what changed.
    let write = tool(&tools, "write_file");
    let e = ws
        .call(
            &write,
            json!({"path": "src/a.txt", "content": "agent version\n"}),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("changed on disk") && e.contains("+two typed by the user"),
        "{e}"
    );
    assert_eq!(ws.read("src/a.txt"), "one\ntwo typed by the user\n");
}

#[tokio::test]
async fn the_agents_own_writes_are_not_reported() {
    let ws = Ws::new();
    ws.write("c.txt", "old\n");
    let tools = core_tools();
    ws.call(&tool(&tools, "read_file"), json!({"path": "c.txt"}))
        .await
        .unwrap();
    let out = ws
        .call(
            &tool(&tools, "replace_in_file"),
            json!({"path": "c.txt", "old_string": "old", "new_string": "new"}),
        )
        .await
        .unwrap();
    assert!(out.stale_files.is_empty(), "{:?}", out.stale_files);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let list = ws
        .call(&tool(&tools, "list_files"), json!({}))
        .await
        .unwrap();
    assert!(list.stale_files.is_empty(), "{:?}", list.stale_files);
    // A later change by someone else is still noticed.
    std::fs::write(ws.root.join("c.txt"), "someone else\n").unwrap();
    let notice = next_notice(&ws, &tools).await.expect("no notice");
    assert!(notice.contains("`c.txt`"), "{notice}");
}
