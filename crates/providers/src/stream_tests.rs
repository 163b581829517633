#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::openai::chat::ChatParser;

/// The chunks of a Chat Completions response whose whole body arrives in one read.
async fn drive_body(body: String) -> Vec<LlmChunk> {
    drive_reads(vec![body.into_bytes()]).await
}

/// The chunks of a Chat Completions response whose body arrives in these reads.
async fn drive_reads(reads: Vec<Vec<u8>>) -> Vec<LlmChunk> {
    let reads = futures::stream::iter(
        reads
            .into_iter()
            .map(|r| Ok::<_, std::io::Error>(Bytes::from(r))),
    );
    let response = http::Response::builder()
        .header("content-type", "text/event-stream")
        .body(reqwest::Body::wrap_stream(reads))
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

/// The text chunks joined, and the outcome at the end.
fn text_and_outcome(chunks: &[LlmChunk]) -> (String, Option<&LlmOutcome>) {
    let text = chunks
        .iter()
        .filter_map(|c| match c {
            LlmChunk::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    let outcome = match chunks.last() {
        Some(LlmChunk::End(o)) => Some(o),
        _ => None,
    };
    (text, outcome)
}

#[tokio::test]
async fn every_event_of_one_large_read_arrives() {
    for n in [1, 1023, 1024, 1025, 3079] {
        let texts: Vec<String> = (0..n).map(|i| format!("w{i} ")).collect();
        let mut body: String = texts.iter().map(|t| delta(t)).collect();
        body.push_str("data: [DONE]\n\n");
        let chunks = drive_body(body).await;
        let (text, outcome) = text_and_outcome(&chunks);
        assert_eq!(text, texts.concat(), "{n} events in one read");
        assert_eq!(
            outcome.map(|o| o.status),
            Some(OutcomeStatus::Completed),
            "{n}"
        );
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

#[tokio::test]
async fn events_cut_across_more_reads_than_a_batch_arrive_whole() {
    let texts: Vec<String> = (0..40).map(|i| format!("t{i} é\"q\" ")).collect();
    let mut body: Vec<u8> = texts
        .iter()
        .map(|t| delta(t).replace("\n", "\r\n"))
        .collect::<String>()
        .into_bytes();
    body.extend_from_slice(b"data: [DONE]\r\n\r\n");
    // Reads of 7 bytes: lines, CRLFs and multi-byte characters are cut everywhere, and there
    // are far more reads than one batch.
    let reads: Vec<Vec<u8>> = body.chunks(7).map(<[u8]>::to_vec).collect();
    assert!(reads.len() > 10 * BATCH);
    let chunks = drive_reads(reads).await;
    let (text, outcome) = text_and_outcome(&chunks);
    assert_eq!(text, texts.concat());
    assert_eq!(outcome.map(|o| o.status), Some(OutcomeStatus::Completed));
}

#[tokio::test]
async fn a_last_blank_line_ended_by_cr_completes_the_response() {
    let body = format!("{}data: [DONE]\r", delta("x"));
    let chunks = drive_reads(vec![body.into_bytes(), b"\r".to_vec()]).await;
    let (text, outcome) = text_and_outcome(&chunks);
    assert_eq!(text, "x");
    assert_eq!(outcome.map(|o| o.status), Some(OutcomeStatus::Completed));
}

#[tokio::test]
async fn bytes_that_are_not_utf8_end_the_stream_as_malformed() {
    let mut bad = delta("ok ").into_bytes();
    bad.extend_from_slice(b"data: {\"choices\": \xFF}\n\n");
    let chunks = drive_reads(vec![bad, delta("never").into_bytes()]).await;
    let (text, outcome) = text_and_outcome(&chunks);
    assert_eq!(text, "ok ");
    let outcome = outcome.unwrap();
    assert_eq!(outcome.status, OutcomeStatus::Malformed, "{outcome:?}");
    assert!(
        outcome.describe().contains("UTF-8"),
        "{}",
        outcome.describe()
    );
}
