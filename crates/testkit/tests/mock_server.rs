//! The mock server itself, driven with raw reqwest.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use cairn_testkit::{Fault, MockLlmServer, Reply};
use serde_json::{json, Value};

async fn post(server: &MockLlmServer, path: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}{path}", server.base_url()))
        .bearer_auth("sk-test-key-123456")
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// JSON payloads of the `data:` lines (non-JSON lines kept as strings).
fn data_lines(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.to_string())))
        .collect()
}

fn chat_body() -> Value {
    json!({"model": "gpt-test", "stream": true, "stream_options": {"include_usage": true}, "messages": []})
}

#[tokio::test]
async fn chat_text_tool_calls_usage_and_done() {
    let server = MockLlmServer::with_script(vec![Reply::text("Hello world")
        .with_reasoning("hmm")
        .with_tool_call("call_1", "read_file", json!({"path": "src/lib.rs"}))
        .with_usage(10, 5)
        .chunk_size(3)])
    .await
    .unwrap();
    let resp = post(&server, "/chat/completions", chat_body()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let events = data_lines(&resp.text().await.unwrap());
    assert_eq!(events.last().unwrap(), &json!("[DONE]"));
    let deltas: Vec<&Value> = events
        .iter()
        .filter_map(|e| e["choices"].get(0))
        .map(|c| &c["delta"])
        .collect();
    let text: String = deltas
        .iter()
        .filter_map(|d| d["content"].as_str())
        .collect();
    assert_eq!(text, "Hello world");
    assert!(
        deltas
            .iter()
            .filter(|d| d["content"].as_str().is_some_and(|s| !s.is_empty()))
            .count()
            >= 4
    );
    let reasoning: String = deltas
        .iter()
        .filter_map(|d| d["reasoning_content"].as_str())
        .collect();
    assert_eq!(reasoning, "hmm");
    let args: String = deltas
        .iter()
        .filter_map(|d| d["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&args).unwrap(),
        json!({"path": "src/lib.rs"})
    );
    assert!(deltas.iter().any(|d| d["tool_calls"][0]["id"] == "call_1"));
    let finish: Vec<&Value> = events
        .iter()
        .filter_map(|e| e["choices"].get(0))
        .map(|c| &c["finish_reason"])
        .filter(|f| !f.is_null())
        .collect();
    assert_eq!(finish, vec![&json!("tool_calls")]);
    let usage = events
        .iter()
        .find(|e| !e["usage"].is_null() && e.get("usage").is_some())
        .unwrap();
    assert_eq!(usage["usage"]["prompt_tokens"], 10);
    assert_eq!(usage["model"], "gpt-test");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].bearer(), Some("sk-test-key-123456"));
    assert_eq!(reqs[0].body["model"], "gpt-test");
}

#[tokio::test]
async fn responses_endpoint_is_404_until_enabled_and_then_streams_events() {
    let server = MockLlmServer::start().await.unwrap();
    server.push(
        Reply::text("hi there")
            .with_reasoning("think")
            .with_tool_call("c9", "grep", json!({"pattern": "x"}))
            .with_usage(7, 3),
    );
    let body = json!({"model": "gpt-5", "stream": true, "input": []});
    let resp = post(&server, "/responses", body.clone()).await;
    assert_eq!(resp.status(), 404);
    assert_eq!(server.remaining(), 1, "a 404 does not consume the script");

    server.enable_responses_api(true);
    let text = post(&server, "/responses", body)
        .await
        .text()
        .await
        .unwrap();
    let events = data_lines(&text);
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"response.created"));
    assert_eq!(kinds.last(), Some(&"response.completed"));
    for k in [
        "response.output_text.delta",
        "response.reasoning_summary_text.delta",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.output_item.done",
    ] {
        assert!(kinds.contains(&k), "missing {k}");
    }
    assert!(text.contains("event: response.output_text.delta\n"));
    let delta_text: String = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(delta_text, "hi there");
    let added_call = events
        .iter()
        .find(|e| e["type"] == "response.output_item.added" && e["item"]["type"] == "function_call")
        .unwrap();
    assert_eq!(added_call["item"]["call_id"], "c9");
    assert_eq!(added_call["item"]["name"], "grep");
    let completed = events.last().unwrap();
    assert_eq!(completed["response"]["usage"]["input_tokens"], 7);
    let seqs: Vec<u64> = events
        .iter()
        .filter_map(|e| e["sequence_number"].as_u64())
        .collect();
    assert_eq!(seqs, (0..events.len() as u64).collect::<Vec<_>>());
}

#[tokio::test]
async fn script_exhausted_and_http_faults() {
    let server = MockLlmServer::with_script(vec![
        Reply::fault(Fault::rate_limited(7)),
        Reply::fault(Fault::unauthorized()),
        Reply::fault(Fault::ContextLengthExceeded),
        Reply::fault(Fault::server_error()),
    ])
    .await
    .unwrap();
    let r = post(&server, "/chat/completions", chat_body()).await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "7");
    let r = post(&server, "/chat/completions", chat_body()).await;
    assert_eq!(r.status(), 401);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "invalid_api_key");
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("sk-test-key-123456"));
    let r = post(&server, "/chat/completions", chat_body()).await;
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "context_length_exceeded");
    assert_eq!(
        post(&server, "/chat/completions", chat_body())
            .await
            .status(),
        500
    );
    let r = post(&server, "/chat/completions", chat_body()).await;
    assert_eq!(r.status(), 500);
    assert!(r.text().await.unwrap().contains("mock script exhausted"));
    assert_eq!(server.requests().len(), 5);
}

#[tokio::test]
async fn drop_mid_stream_aborts_the_body_after_some_chunks() {
    let server = MockLlmServer::with_script(vec![
        Reply::text("partial text").then_fault(Fault::DropMidStream)
    ])
    .await
    .unwrap();
    let mut resp = post(&server, "/chat/completions", chat_body()).await;
    assert_eq!(resp.status(), 200);
    let mut got = String::new();
    let err = loop {
        match resp.chunk().await {
            Ok(Some(b)) => got.push_str(&String::from_utf8_lossy(&b)),
            Ok(None) => panic!("stream ended cleanly"),
            Err(e) => break e,
        }
    };
    assert!(err.is_body() || err.is_decode(), "{err:?}");
    assert!(got.contains("\"content\":\"part\""));
    assert!(!got.contains("[DONE]"));
    assert!(!got.contains("finish_reason\":\"stop"));
}

#[tokio::test]
async fn stall_sends_headers_then_nothing() {
    let server =
        MockLlmServer::with_script(vec![Reply::fault(Fault::Stall(Duration::from_secs(5)))])
            .await
            .unwrap();
    let start = Instant::now();
    let mut resp = post(&server, "/chat/completions", chat_body()).await;
    assert!(start.elapsed() < Duration::from_secs(2));
    // The role chunk arrives, then nothing.
    let first = tokio::time::timeout(Duration::from_secs(2), resp.chunk())
        .await
        .unwrap()
        .unwrap();
    assert!(first.is_some());
    let next = tokio::time::timeout(Duration::from_millis(300), resp.chunk()).await;
    assert!(next.is_err(), "expected a stall");
}

#[tokio::test]
async fn malformed_chunk_then_normal_end_and_delays() {
    let server = MockLlmServer::with_script(vec![
        Reply::fault(Fault::MalformedChunk),
        Reply::text_chunks(vec!["a".into(), "b".into(), "c".into()])
            .delay_between_chunks(Duration::from_millis(40)),
    ])
    .await
    .unwrap();
    let text = post(&server, "/chat/completions", chat_body())
        .await
        .text()
        .await
        .unwrap();
    assert!(data_lines(&text)
        .iter()
        .any(|v| v.is_string() && v != &json!("[DONE]")));
    assert!(text.ends_with("data: [DONE]\n\n"));
    let start = Instant::now();
    let text = post(&server, "/chat/completions", chat_body())
        .await
        .text()
        .await
        .unwrap();
    assert!(start.elapsed() >= Duration::from_millis(120));
    let content: Vec<String> = data_lines(&text)
        .iter()
        .filter_map(|e| {
            e["choices"][0]["delta"]["content"]
                .as_str()
                .map(String::from)
        })
        .filter(|s| !s.is_empty())
        .collect();
    assert_eq!(content, vec!["a", "b", "c"]);
}

#[tokio::test]
async fn wait_for_requests_and_unknown_paths() {
    let server = MockLlmServer::start().await.unwrap();
    let url = server.base_url();
    assert!(url.starts_with("http://127.0.0.1:"));
    assert_eq!(url, format!("http://{}/v1", server.addr()));
    let s = reqwest::Client::new();
    let h = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        s.post(format!("{url}/embeddings"))
            .body("not json")
            .send()
            .await
            .unwrap()
            .status()
    });
    let reqs = server.wait_for_requests(1, Duration::from_secs(5)).await;
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].body, json!("not json"));
    assert_eq!(h.await.unwrap(), 404);
    let none = server.wait_for_requests(2, Duration::from_millis(50)).await;
    assert_eq!(none.len(), 1);
    let ws = cairn_testkit::temp_workspace().unwrap();
    assert!(ws.path().is_dir());
}
