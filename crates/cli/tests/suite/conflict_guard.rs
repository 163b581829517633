//! The conflict guard across `cairn run --session` processes: a file the agent read in one
//! turn and the user edited before the next is not overwritten in the next turn (the model
//! is told to read it again), and the next turn's first tool result says it changed.

use crate::common;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::json;

#[tokio::test]
async fn a_file_the_user_edited_between_turns_is_not_overwritten() {
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("r1", "read_file", json!({"path": "b.txt"})),
        Reply::text("read it"),
        Reply::tool_call(
            "w1",
            "write_file",
            json!({"path": "b.txt", "content": "orig\nagent line\n"}),
        ),
        Reply::text("tried"),
    ])
    .await
    .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("b.txt"), "orig\n").unwrap();
    let url = server.base_url();
    let first = common::run_auto(&url, ws.path(), state.path(), "k", &[], "read b").await;
    assert!(first.status.success(), "{first:?}");
    let id = common::only_session_id(state.path());

    std::fs::write(ws.path().join("b.txt"), "orig\nUSER LINE\n").unwrap();
    let second = common::run_auto(
        &url,
        ws.path(),
        state.path(),
        "k",
        &["--session", &id],
        "edit b",
    )
    .await;
    assert!(second.status.success(), "{second:?}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("b.txt")).unwrap(),
        "orig\nUSER LINE\n",
        "the user's edit survives"
    );
    let last = server.requests().last().unwrap().body.to_string();
    assert!(last.contains("write refused"), "{last}");
    assert!(last.contains("changed on disk"), "{last}");
}
