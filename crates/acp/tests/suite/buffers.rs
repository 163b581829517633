//! `fs/read_text_file`: when the client offers it, `read_file` shows the editor's unsaved
//! buffer; the write still lands on disk, checked against the disk, with a checkpoint.

use agent_client_protocol::v1::schema::SetSessionModeRequest;
use cairn_testkit::Reply;
use serde_json::json;

use super::harness::Harness;

#[tokio::test]
async fn an_unsaved_buffer_is_what_the_model_reads_and_the_write_lands_on_disk_with_a_checkpoint() {
    let h = Harness::start().await;
    std::fs::write(h.ws.path().join("notes.txt"), "on disk\n").unwrap();
    *h.seen.buffer.lock().unwrap() = Some("unsaved in the editor\n".into());
    h.initialize_with_buffers().await;
    let sid = h
        .new_session(h.ws.path())
        .await
        .unwrap()
        .session_id
        .to_string();
    h.cx.send_request(SetSessionModeRequest::new(sid.clone(), "auto"))
        .block_task()
        .await
        .unwrap();
    h.mock.push(Reply::tool_call(
        "r1",
        "read_file",
        json!({"path": "notes.txt"}),
    ));
    h.mock.push(Reply::tool_call(
        "w1",
        "write_file",
        json!({"path": "notes.txt", "content": "written by the agent\n"}),
    ));
    h.mock.push(Reply::text("done"));
    h.prompt(&sid, "read and rewrite notes.txt").await.unwrap();
    // The client was asked for the buffer, and the model saw it.
    let reads = h.seen.reads.lock().unwrap().clone();
    assert!(reads.iter().any(|p| p.ends_with("notes.txt")), "{reads:?}");
    let requests = h.mock.requests();
    let second = requests[1].body.to_string();
    assert!(second.contains("unsaved in the editor"), "{second}");
    assert!(
        !second.contains("on disk\\n"),
        "the disk text was not shown"
    );
    // The write landed on disk (not refused as a conflict: the guard saw the disk).
    assert_eq!(
        std::fs::read_to_string(h.ws.path().join("notes.txt")).unwrap(),
        "written by the agent\n"
    );
    // With a checkpoint: /undo puts the disk's text back.
    h.prompt(&sid, "/undo").await.unwrap();
    assert_eq!(
        std::fs::read_to_string(h.ws.path().join("notes.txt")).unwrap(),
        "on disk\n"
    );
    h.finish().await.unwrap();
}

#[tokio::test]
async fn without_a_buffer_or_the_capability_the_disk_is_read() {
    let h = Harness::start().await;
    std::fs::write(h.ws.path().join("notes.txt"), "on disk\n").unwrap();
    // The client offers the method but has no buffer for the file (an error).
    h.initialize_with_buffers().await;
    let sid = h
        .new_session(h.ws.path())
        .await
        .unwrap()
        .session_id
        .to_string();
    h.mock.push(Reply::tool_call(
        "r1",
        "read_file",
        json!({"path": "notes.txt"}),
    ));
    h.mock.push(Reply::text("done"));
    h.prompt(&sid, "read").await.unwrap();
    assert_eq!(h.seen.reads.lock().unwrap().len(), 1);
    assert!(h.mock.requests()[1].body.to_string().contains("on disk"));
    // A client that does not offer it is never asked.
    let h2 = Harness::start().await;
    std::fs::write(h2.ws.path().join("notes.txt"), "on disk\n").unwrap();
    *h2.seen.buffer.lock().unwrap() = Some("unsaved\n".into());
    let sid2 = h2.session().await.session_id.to_string();
    h2.mock.push(Reply::tool_call(
        "r1",
        "read_file",
        json!({"path": "notes.txt"}),
    ));
    h2.mock.push(Reply::text("done"));
    h2.prompt(&sid2, "read").await.unwrap();
    assert!(h2.seen.reads.lock().unwrap().is_empty());
    assert!(h2.mock.requests()[1].body.to_string().contains("on disk"));
    h.finish().await.unwrap();
    h2.finish().await.unwrap();
}
