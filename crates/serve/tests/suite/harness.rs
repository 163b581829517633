//! A server in this process on 127.0.0.1 against the mock model, and a client for it.

use std::sync::Arc;
use std::time::Duration;

use cairn_runtime::llm_setup::{client_for, Face, LlmSetup, ProviderChoice};
use cairn_serve::{LlmSource, Running, ServeConfig};
use cairn_testkit::MockLlmServer;
use futures::StreamExt;
use serde_json::{json, Value};

/// Builds sessions' clients against the mock, with no key and no environment.
struct MockLlm;

impl LlmSource for MockLlm {
    fn build(&self, model: &str, provider: &str, base_url: Option<&str>) -> Option<LlmSetup> {
        let choice = ProviderChoice {
            provider: provider.to_string(),
            model: model.to_string(),
            base_url: base_url.unwrap_or_default().to_string(),
            reasoning: String::new(),
        };
        let keys = cairn_secrets::MemoryKeyStore::new();
        let env = |_: &str| None;
        let client = client_for(&choice, &keys, &env, Face::Cli).ok()?;
        Some(LlmSetup {
            client,
            provider: provider.to_string(),
            model: model.to_string(),
            blocked: None,
        })
    }
}

/// A running server and what it runs on.
pub struct Server {
    pub running: Option<Running>,
    pub base: String,
    pub token: String,
    pub http: reqwest::Client,
    pub mock: MockLlmServer,
    pub ws: tempfile::TempDir,
    pub state: tempfile::TempDir,
    pub dir: tempfile::TempDir,
}

/// The config of a test server on `dir` and `state` against `mock`.
pub fn config(mock: &MockLlmServer, dir: &std::path::Path, state: &std::path::Path) -> ServeConfig {
    ServeConfig {
        listen: Some("127.0.0.1:0".into()),
        token_file: Some(dir.join("serve.token")),
        state_dir: Some(state.to_path_buf()),
        model: Some("m".into()),
        base_url: Some(mock.base_url()),
        sandbox: Some(cairn_policy::sandbox::SandboxMode::Off),
        llm: Some(Arc::new(MockLlm)),
        ..ServeConfig::default()
    }
}

impl Server {
    /// A server with the default test config changed by `tweak`.
    pub async fn start(tweak: impl FnOnce(&mut ServeConfig)) -> Server {
        let mock = MockLlmServer::start().await.unwrap();
        let ws = cairn_testkit::temp_workspace().unwrap();
        let state = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = config(&mock, dir.path(), state.path());
        tweak(&mut cfg);
        Self::on(cfg, mock, ws, state, dir).await
    }

    /// A server from `cfg` over these folders.
    pub async fn on(
        cfg: ServeConfig,
        mock: MockLlmServer,
        ws: tempfile::TempDir,
        state: tempfile::TempDir,
        dir: tempfile::TempDir,
    ) -> Server {
        let running = cairn_serve::start(cfg).await.unwrap();
        let base = format!("http://{}", running.listen);
        let token = running.token.clone();
        Server {
            running: Some(running),
            base,
            token,
            http: reqwest::Client::new(),
            mock,
            ws,
            state,
            dir,
        }
    }

    /// Stops the server, keeping the folders and the mock.
    pub async fn stop(&mut self) {
        if let Some(r) = self.running.take() {
            r.shutdown().await;
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn get(&self, path: &str) -> reqwest::RequestBuilder {
        self.http.get(self.url(path)).bearer_auth(&self.token)
    }

    pub fn post(&self, path: &str, body: Value) -> reqwest::RequestBuilder {
        self.http
            .post(self.url(path))
            .bearer_auth(&self.token)
            .json(&body)
    }

    /// `GET` as JSON, asserting `200`.
    /// Posts `text` as a message to session `id` (a run, attached) and returns the response.
    pub async fn message(&self, id: &str, text: &str) -> reqwest::Response {
        self.post(
            &format!("/v1/sessions/{id}/messages"),
            json!({ "text": text }),
        )
        .send()
        .await
        .unwrap()
    }

    /// Opens session `id`'s event stream.
    pub async fn events(&self, id: &str) -> reqwest::Response {
        self.get(&format!("/v1/sessions/{id}/events"))
            .send()
            .await
            .unwrap()
    }

    /// Waits until the list at `path` (`…/approvals` or `…/questions`, under `key`) holds a
    /// request, and returns the first.
    pub async fn first_pending(&self, path: &str, key: &str) -> Value {
        assert!(
            eventually(|| async {
                self.get_json(path).await[key]
                    .as_array()
                    .is_some_and(|a| !a.is_empty())
            })
            .await,
            "nothing pending at {path}"
        );
        self.get_json(path).await[key][0].clone()
    }

    pub async fn get_json(&self, path: &str) -> Value {
        let r = self.get(path).send().await.unwrap();
        assert_eq!(r.status(), 200, "GET {path}");
        r.json().await.unwrap()
    }

    /// Opens a session in the workspace in `mode`; returns its id.
    pub async fn session(&self, mode: &str) -> String {
        let r = self
            .post(
                "/v1/sessions",
                json!({"workspace": self.ws.path(), "mode": mode}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
        let v: Value = r.json().await.unwrap();
        v["id"].as_str().unwrap().to_string()
    }

    /// Posts `text` attached and reads its stream to the end.
    pub async fn turn(&self, id: &str, text: &str) -> Vec<Sse> {
        let r = self
            .post(
                &format!("/v1/sessions/{id}/messages"),
                json!({"text": text}),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        read_all(r).await
    }
}

/// One SSE event.
#[derive(Debug, Clone)]
pub struct Sse {
    pub event: String,
    pub id: Option<String>,
    pub data: Value,
}

fn parse(block: &str) -> Option<Sse> {
    let mut event = None;
    let mut id = None;
    let mut data = None;
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("event: ") {
            event = Some(v.to_string());
        } else if let Some(v) = line.strip_prefix("id: ") {
            id = Some(v.to_string());
        } else if let Some(v) = line.strip_prefix("data: ") {
            data = Some(serde_json::from_str(v).unwrap());
        }
    }
    Some(Sse {
        event: event?,
        id,
        data: data?,
    })
}

/// Reads SSE events until `done` says so (or the stream ends), at most 30 s.
pub async fn read_until(resp: reqwest::Response, mut done: impl FnMut(&[Sse]) -> bool) -> Vec<Sse> {
    let mut stream = resp.bytes_stream();
    let mut buf = String::new();
    let mut out = Vec::new();
    let read = async {
        while let Some(chunk) = stream.next().await {
            let Ok(chunk) = chunk else { break };
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(at) = buf.find("\n\n") {
                let block: String = buf.drain(..at + 2).collect();
                if let Some(e) = parse(&block) {
                    out.push(e);
                    if done(&out) {
                        return;
                    }
                }
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .expect("the stream ended in time");
    out
}

/// Reads an SSE response to its end.
pub async fn read_all(resp: reqwest::Response) -> Vec<Sse> {
    read_until(resp, |_| false).await
}

/// The event types, in order.
pub fn types(events: &[Sse]) -> Vec<&str> {
    events.iter().map(|e| e.event.as_str()).collect()
}

/// Waits (polling, at most 10 s) until `f` holds.
pub async fn eventually<F, Fut>(mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let until = tokio::time::Instant::now() + Duration::from_secs(10);
    while tokio::time::Instant::now() < until {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}
