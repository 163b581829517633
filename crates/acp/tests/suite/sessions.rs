//! session/load (history replayed), resume, list, close; sessions open elsewhere and
//! unknown ids are errors, never crashes.

use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, ContentBlock, ListSessionsRequest, LoadSessionRequest,
    ResumeSessionRequest, SessionUpdate, SetSessionModeRequest,
};
use cairn_testkit::Reply;

use super::harness::{options, Harness};

#[tokio::test]
async fn a_finished_session_loads_with_its_history_in_a_new_agent() {
    let mut h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.mock.push(Reply::text("the answer is 42"));
    h.prompt(&sid, "what is the answer").await.unwrap();
    let state_dir = h._state_dir.take().unwrap();
    let state = state_dir.path().to_path_buf();
    let ws = tempfile::TempDir::new().unwrap();
    let ws_path = h.ws.path().to_path_buf();
    let _old_ws = std::mem::replace(&mut h.ws, ws);
    // The client ends (its sessions saved and closed); a new agent loads the session.
    h.finish().await.unwrap();
    let mock = cairn_testkit::MockLlmServer::start().await.unwrap();
    let ws = tempfile::TempDir::new().unwrap();
    let mut o = options(&mock, &state);
    o.state_dir = Some(state.clone());
    let h2 = Harness::on(o, mock, ws).await;
    h2.initialize().await;
    let listed = h2
        .cx
        .send_request(ListSessionsRequest::new().cwd(ws_path.clone()))
        .block_task()
        .await
        .unwrap();
    assert!(
        listed
            .sessions
            .iter()
            .any(|s| s.session_id.to_string() == sid),
        "{listed:?}"
    );
    let r = h2
        .cx
        .send_request(LoadSessionRequest::new(sid.clone(), ws_path.clone()))
        .block_task()
        .await
        .unwrap();
    assert_eq!(r.modes.unwrap().current_mode_id.to_string(), "interactive");
    let ups = h2.seen.updates();
    let user: String = ups
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk(c) => match &c.content {
                ContentBlock::Text(t) => Some(t.text.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert!(user.contains("what is the answer"), "{ups:?}");
    assert!(h2.seen.text().contains("the answer is 42"), "{ups:?}");
    // It goes on from there.
    h2.mock.push(Reply::text("still here"));
    h2.prompt(&sid, "again").await.unwrap();
    assert!(h2.seen.text().contains("still here"));
    h2.finish().await.unwrap();
}

#[tokio::test]
async fn a_session_open_in_another_process_is_refused_clearly() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.mock.push(Reply::text("one"));
    h.prompt(&sid, "hi").await.unwrap();
    // A second agent (another process) on the same state dir.
    let mock = cairn_testkit::MockLlmServer::start().await.unwrap();
    let o = options(&mock, &h.state);
    let other = Harness::on(o, mock, tempfile::TempDir::new().unwrap()).await;
    other.initialize().await;
    let e = other
        .cx
        .send_request(LoadSessionRequest::new(
            sid.clone(),
            h.ws.path().to_path_buf(),
        ))
        .block_task()
        .await
        .unwrap_err();
    assert!(
        e.message.contains("in use by another Cairn process"),
        "{e:?}"
    );
    other.finish().await.unwrap();
    h.finish().await.unwrap();
}

#[tokio::test]
async fn unknown_session_ids_are_errors_and_the_agent_keeps_serving() {
    let h = Harness::start().await;
    h.initialize().await;
    let e = h.prompt("nope", "hi").await.unwrap_err();
    assert!(e.message.contains("unknown session"), "{e:?}");
    let e =
        h.cx.send_request(SetSessionModeRequest::new("nope", "plan"))
            .block_task()
            .await
            .unwrap_err();
    assert!(e.message.contains("unknown session"), "{e:?}");
    let e =
        h.cx.send_request(LoadSessionRequest::new(
            "../../etc",
            h.ws.path().to_path_buf(),
        ))
        .block_task()
        .await
        .unwrap_err();
    assert!(e.message.contains("unknown session"), "{e:?}");
    h.cx.send_notification(CancelNotification::new("nope"))
        .unwrap();
    // Still serving.
    let s = h.new_session(h.ws.path()).await.unwrap();
    assert!(!s.session_id.to_string().is_empty());
    h.finish().await.unwrap();
}

#[tokio::test]
async fn resume_and_close() {
    let h = Harness::start().await;
    let sid = h.session().await.session_id.to_string();
    h.mock.push(Reply::text("one"));
    h.prompt(&sid, "hi").await.unwrap();
    h.cx.send_request(CloseSessionRequest::new(sid.clone()))
        .block_task()
        .await
        .unwrap();
    assert!(h.prompt(&sid, "hi").await.is_err());
    h.cx.send_request(ResumeSessionRequest::new(
        sid.clone(),
        h.ws.path().to_path_buf(),
    ))
    .block_task()
    .await
    .unwrap();
    h.mock.push(Reply::text("back"));
    h.prompt(&sid, "hi").await.unwrap();
    assert!(h.seen.text().contains("back"));
    h.finish().await.unwrap();
}
