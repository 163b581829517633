//! The audit log decorator: one request and one response file per request, by date and
//! request id; credentials redacted, attachments elided, usage and cost recorded.

use crate::common;

use cairn_engine::LlmRequest;
use cairn_protocol::{ContentPart, Message};
use cairn_providers::build_client;
use cairn_testkit::{Fault, Reply};
use common::*;
use futures::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

fn read(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn with_image(model: &str, req_id: &str) -> LlmRequest {
    let mut r = request(model);
    r.req_id = req_id.to_string();
    r.messages.push(Message::User {
        content: vec![
            ContentPart::Text {
                text: format!("my key is {KEY}, see the picture"),
            },
            ContentPart::Image {
                mime_type: "image/png".into(),
                data: "iVBORw0KGgoAAAANSUhEUg".repeat(50),
            },
        ],
    });
    r
}

#[tokio::test]
async fn writes_redacted_request_and_response_files_per_request() {
    for protocol in PROTOCOLS {
        let dir = tempfile::tempdir().unwrap();
        let server = mock(vec![
            Reply::text("a picture of a cat").with_usage_details(2_000, 100, 1_000, 0),
            Reply::fault(Fault::unauthorized()),
        ])
        .await;
        let mut s = spec(protocol, &server.base_url());
        s.log_dir = Some(dir.path().to_path_buf());
        let llm = build_client(&s).unwrap();
        let model = model_of(protocol);
        collect(llm.as_ref(), with_image(model, "req-ok/1")).await;
        collect(llm.as_ref(), with_image(model, "req-denied")).await;

        let day = chrono::Utc::now().format("%Y-%m-%d").to_string();
        let base = dir.path().join(&day);
        let req = read(&base.join("req-ok_1.request.json"));
        assert_eq!(req["reqId"], "req-ok/1");
        assert_eq!(req["model"], model);
        let headers = req["headers"].as_object().unwrap();
        let cred = headers
            .get("authorization")
            .or_else(|| headers.get("x-api-key"))
            .unwrap();
        assert_eq!(cred, "[redacted]", "{protocol:?}");
        let text = req.to_string();
        assert!(
            !text.contains(KEY) && !text.contains("0123456789abcdef"),
            "{text}"
        );
        assert!(text.contains("[base64 elided: 1100 chars]"), "{text}");
        assert!(!text.contains("iVBORw0KGgo"), "{text}");

        let resp = read(&base.join("req-ok_1.response.json"));
        assert_eq!(resp["outcome"]["status"], "completed");
        assert_eq!(resp["text"], "a picture of a cat");
        assert_eq!(resp["usage"]["input_tokens"], 2_000);
        assert!(
            resp["costUsd"].as_f64().unwrap() > 0.0,
            "{protocol:?}: known model, known price"
        );

        let denied = read(&base.join("req-denied.response.json"));
        assert_eq!(denied["outcome"]["status"], "auth");
        assert!(!denied.to_string().contains(KEY));
    }
}

#[tokio::test]
async fn a_stream_dropped_by_its_reader_is_recorded_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let server = mock(vec![Reply::text(&"x".repeat(400)).chunk_size(1)]).await;
    let mut s = spec(Protocol::Chat, &server.base_url());
    s.log_dir = Some(dir.path().to_path_buf());
    s.log_attachments = true;
    let llm = build_client(&s).unwrap();
    let mut stream = llm.stream(
        with_image("gpt-4o", "req-dropped"),
        CancellationToken::new(),
    );
    stream.next().await.unwrap();
    drop(stream);
    let day = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let base = dir.path().join(day);
    let resp = read(&base.join("req-dropped.response.json"));
    assert_eq!(resp["outcome"]["status"], "dropped");
    let req = std::fs::read_to_string(base.join("req-dropped.request.json")).unwrap();
    assert!(req.contains("iVBORw0KGgo"), "attachments kept when asked");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(base.join("req-dropped.request.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "audit files are private: {mode:o}");
    }
}
