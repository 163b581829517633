//! The mock server itself, driven with raw reqwest.

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

/// `(event, data)` pairs of an SSE body.
fn named_events(body: &str) -> Vec<(String, Value)> {
    body.split("\n\n")
        .filter_map(|block| {
            let mut event = String::new();
            let mut data = None;
            for line in block.lines() {
                if let Some(e) = line.strip_prefix("event: ") {
                    event = e.to_string();
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data =
                        Some(serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.into())));
                }
            }
            data.map(|d| (event, d))
        })
        .collect()
}

async fn post_anthropic(server: &MockLlmServer, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/messages", server.base_url()))
        .header("x-api-key", "sk-ant-test-key-123")
        .header("anthropic-version", "2023-06-01")
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn anthropic_messages_stream_thinking_text_tool_use_and_usage() {
    let server = MockLlmServer::with_script(vec![Reply::text("Hello")
        .with_reasoning("think")
        .with_signature("sig-1")
        .with_redacted_thinking("opaque")
        .with_tool_call("toolu_1", "ls", json!({"path": "."}))
        .with_usage_details(1000, 50, 600, 0)
        .with_cache_write(300)
        .chunk_size(2)])
    .await
    .unwrap();
    let resp = post_anthropic(
        &server,
        json!({"model": "claude-x", "stream": true, "max_tokens": 10, "messages": []}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let events = named_events(&resp.text().await.unwrap());
    let kinds: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert_eq!(&kinds[kinds.len() - 2..], ["message_delta", "message_stop"]);
    for (e, d) in &events {
        assert_eq!(d["type"], e.as_str(), "event name matches the data type");
    }
    let start = &events[0].1["message"];
    assert_eq!(start["id"], "msg_mock1");
    assert_eq!(
        start["usage"]["input_tokens"], 100,
        "1000 - 600 read - 300 written"
    );
    assert_eq!(start["usage"]["cache_read_input_tokens"], 600);
    assert_eq!(start["usage"]["cache_creation_input_tokens"], 300);
    let deltas = |t: &str, field: &str| -> String {
        events
            .iter()
            .filter(|(_, d)| d["delta"]["type"] == t)
            .map(|(_, d)| d["delta"][field].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(deltas("thinking_delta", "thinking"), "think");
    assert_eq!(deltas("signature_delta", "signature"), "sig-1");
    assert_eq!(deltas("text_delta", "text"), "Hello");
    assert_eq!(
        deltas("input_json_delta", "partial_json"),
        r#"{"path":"."}"#
    );
    assert!(
        events
            .iter()
            .filter(|(_, d)| d["delta"]["type"] == "input_json_delta")
            .count()
            > 3
    );
    let blocks: Vec<&Value> = events
        .iter()
        .filter(|(e, _)| e == "content_block_start")
        .map(|(_, d)| &d["content_block"])
        .collect();
    let types: Vec<&str> = blocks.iter().map(|b| b["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["thinking", "redacted_thinking", "text", "tool_use"]);
    assert_eq!(blocks[1]["data"], "opaque");
    let end = &events[events.len() - 2].1;
    assert_eq!(end["delta"]["stop_reason"], "tool_use");
    assert_eq!(end["usage"]["output_tokens"], 50);
    let captured = &server.requests()[0];
    assert!(captured.is_anthropic());
    assert_eq!(captured.api_key(), Some("sk-ant-test-key-123"));
}

#[tokio::test]
async fn anthropic_errors_have_anthropic_shape() {
    let server = MockLlmServer::with_script(vec![
        Reply::fault(Fault::unauthorized()),
        Reply::fault(Fault::insufficient_quota()),
        Reply::fault(Fault::overloaded()),
        Reply::text("part").then_fault(Fault::stream_error("overloaded_error", "Overloaded")),
        Reply::text("x").with_stop_reason("max_tokens"),
    ])
    .await
    .unwrap();
    let body = json!({"model": "claude-x", "stream": true, "messages": []});
    let r = post_anthropic(&server, body.clone()).await;
    assert_eq!(r.status(), 401);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "authentication_error");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("sk-ant-test-key-123"),
        "echoes the key"
    );
    let r = post_anthropic(&server, body.clone()).await;
    assert_eq!(r.status(), 400);
    assert!(r
        .text()
        .await
        .unwrap()
        .contains("credit balance is too low"));
    let r = post_anthropic(&server, body.clone()).await;
    assert_eq!(r.status(), 529);
    assert!(r.text().await.unwrap().contains("overloaded_error"));
    let r = post_anthropic(&server, body.clone()).await;
    let events = named_events(&r.text().await.unwrap());
    let (e, d) = events.last().unwrap();
    assert_eq!(
        (e.as_str(), &d["error"]["type"]),
        ("error", &json!("overloaded_error"))
    );
    let r = post_anthropic(&server, body).await;
    let events = named_events(&r.text().await.unwrap());
    assert_eq!(
        events[events.len() - 2].1["delta"]["stop_reason"],
        "max_tokens"
    );
}

#[tokio::test]
async fn responses_encrypted_reasoning_only_when_included() {
    let server = MockLlmServer::with_script(vec![
        Reply::text("a").with_reasoning("r").with_signature("enc-1"),
        Reply::text("b").with_reasoning("r"),
    ])
    .await
    .unwrap();
    server.enable_responses_api(true);
    let item = |body: String| -> Value {
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|v| v["type"] == "response.output_item.done" && v["item"]["type"] == "reasoning")
            .map(|v| v["item"].clone())
            .unwrap()
    };
    let with = json!({"model": "gpt-5", "stream": true, "input": [], "include": ["reasoning.encrypted_content"]});
    let r = post(&server, "/responses", with).await;
    assert_eq!(item(r.text().await.unwrap())["encrypted_content"], "enc-1");
    let r = post(
        &server,
        "/responses",
        json!({"model": "gpt-5", "stream": true, "input": []}),
    )
    .await;
    assert!(item(r.text().await.unwrap())
        .get("encrypted_content")
        .is_none());
}

#[tokio::test]
async fn socks5_proxy_relays_to_loopback_only() {
    let server = MockLlmServer::with_script(vec![Reply::text("through")])
        .await
        .unwrap();
    let proxy = cairn_testkit::Socks5Proxy::start().await.unwrap();
    let client = reqwest::Client::builder()
        .proxy(reqwest::Proxy::all(proxy.url()).unwrap())
        .build()
        .unwrap();
    let resp = client
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&chat_body())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(resp.text().await.unwrap().contains("\"thro\""));
    assert_eq!(proxy.connects(), 1);
}
