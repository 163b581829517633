#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::openai::chat::ChatParser;

/// The chunks of a Chat Completions response whose whole body arrives in one read.
async fn drive_body(body: String) -> Vec<LlmChunk> {
    let response = http::Response::builder()
        .header("content-type", "text/event-stream")
        .body(body)
        .unwrap();
    let opened = Opened {
        response: reqwest::Response::from(response),
        parser: Box::new(ChatParser::new("r", Redactor::new(["k"]))),
    };
    let open = async move { Ok(opened) }.boxed();
    drive(
        open,
        CancellationToken::new(),
        Duration::from_secs(5),
        Redactor::new(["k"]),
        "r".into(),
    )
    .collect()
    .await
}

fn delta(text: &str) -> String {
    format!(
        "data: {}\n\n",
        serde_json::json!({"choices": [{"index": 0, "delta": {"content": text}}]})
    )
}

#[tokio::test]
async fn every_event_of_a_read_longer_than_a_batch_arrives() {
    for n in [BATCH - 1, BATCH, BATCH + 1, 3 * BATCH + 7] {
        let texts: Vec<String> = (0..n).map(|i| format!("w{i} ")).collect();
        let mut body: String = texts.iter().map(|t| delta(t)).collect();
        body.push_str("data: [DONE]\n\n");
        let chunks = drive_body(body).await;
        let text: String = chunks
            .iter()
            .filter_map(|c| match c {
                LlmChunk::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, texts.concat(), "{n} events in one read");
        match chunks.last() {
            Some(LlmChunk::End(o)) => assert_eq!(o.status, OutcomeStatus::Completed, "{n}"),
            other => panic!("no end: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_body_cut_mid_event_is_a_dropped_stream() {
    let body = format!("{}data: {{\"choices\": [", delta("partial "));
    let chunks = drive_body(body).await;
    assert_eq!(chunks.first(), Some(&LlmChunk::Text("partial ".into())));
    match chunks.last() {
        Some(LlmChunk::End(o)) => {
            assert_eq!(o.status, OutcomeStatus::Timeout, "{o:?}");
            assert!(o.describe().contains("stream dropped"), "{}", o.describe());
        }
        other => panic!("no end: {other:?}"),
    }
}
