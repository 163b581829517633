//! The scripted mock LLM server: axum on 127.0.0.1, one queued reply per model request.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::Response;
use axum::Router;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::frame::{Frame, RenderCtx};
use crate::reply::{openai_error, Fault, Reply};

/// Largest request body the mock accepts.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Pause before a connection drop so the chunks sent so far reach the client.
const FLUSH_GRACE: Duration = Duration::from_millis(50);

/// One request the mock received.
#[derive(Clone, Debug, PartialEq)]
pub struct CapturedRequest {
    /// Request path, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers with lower-case names, in order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (a JSON string holding the raw text when the body is not JSON).
    pub body: serde_json::Value,
}

impl CapturedRequest {
    /// The first header with this (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The bearer token of the `Authorization` header.
    pub fn bearer(&self) -> Option<&str> {
        self.header("authorization")?.strip_prefix("Bearer ")
    }

    /// Whether this request hit the Chat Completions endpoint.
    pub fn is_chat(&self) -> bool {
        self.path.ends_with("/chat/completions")
    }

    /// Whether this request hit the Responses endpoint.
    pub fn is_responses(&self) -> bool {
        self.path.ends_with("/responses")
    }

    /// Whether this request hit the Anthropic Messages endpoint.
    pub fn is_anthropic(&self) -> bool {
        self.path.ends_with("/messages")
    }

    /// The credential sent: the bearer token, else Anthropic's `x-api-key`.
    pub fn api_key(&self) -> Option<&str> {
        self.bearer().or_else(|| self.header("x-api-key"))
    }
}

/// State shared between the handle and the server task.
struct Shared {
    script: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<CapturedRequest>>,
    count: watch::Sender<usize>,
    responses_on: AtomicBool,
    next_id: AtomicU64,
    models: Mutex<Option<Vec<String>>>,
    /// When set, `GET …/models` answers this status (e.g. 401: the key is refused).
    models_status: Mutex<Option<u16>>,
    model_lists: Mutex<Vec<CapturedRequest>>,
    /// When on, a request finding the script empty waits for the next push.
    hold: AtomicBool,
    /// Bumped on every push (wakes held requests).
    pushed: watch::Sender<u64>,
    /// Session-naming requests, answered apart from the script ([`crate::naming`]).
    naming: Mutex<Vec<CapturedRequest>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A scripted mock of an OpenAI-compatible server (Chat Completions and Responses SSE).
pub struct MockLlmServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for MockLlmServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockLlmServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl MockLlmServer {
    /// Starts a server with an empty script; `/v1/responses` answers 404 until enabled.
    pub async fn start() -> std::io::Result<MockLlmServer> {
        Self::with_script(Vec::new()).await
    }

    /// Starts a server that serves these replies in order.
    pub async fn with_script(replies: Vec<Reply>) -> std::io::Result<MockLlmServer> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            script: Mutex::new(replies.into()),
            requests: Mutex::new(Vec::new()),
            count: watch::channel(0).0,
            responses_on: AtomicBool::new(false),
            next_id: AtomicU64::new(1),
            models: Mutex::new(None),
            models_status: Mutex::new(None),
            model_lists: Mutex::new(Vec::new()),
            hold: AtomicBool::new(false),
            pushed: watch::channel(0).0,
            naming: Mutex::default(),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                eprintln!("mock LLM server stopped: {e}");
            }
        });
        Ok(MockLlmServer { shared, addr, task })
    }

    /// The OpenAI-style base URL: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Appends a reply to the script.
    pub fn push(&self, reply: Reply) {
        lock(&self.shared.script).push_back(reply);
        self.shared.pushed.send_modify(|n| *n += 1);
    }

    /// When on, a request that finds the script empty is held until a reply is pushed
    /// (instead of failing with "mock script exhausted"): tests decide when the agent goes on.
    pub fn hold_when_empty(&self, on: bool) {
        self.shared.hold.store(on, Ordering::SeqCst);
        self.shared.pushed.send_modify(|n| *n += 1);
    }

    /// Number of scripted replies not served yet.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.script).len()
    }

    /// When on, `/v1/responses` serves the script too (else it answers 404).
    pub fn enable_responses_api(&self, on: bool) {
        self.shared.responses_on.store(on, Ordering::SeqCst);
    }

    /// Makes `GET /v1/models` list these ids (until then it answers 404, as some servers do).
    pub fn serve_models(&self, ids: &[&str]) {
        *lock(&self.shared.models) = Some(ids.iter().map(|s| s.to_string()).collect());
    }

    /// Makes `GET /v1/models` answer `status` with an OpenAI-style error (401: a refused key).
    pub fn refuse_models(&self, status: u16) {
        *lock(&self.shared.models_status) = Some(status);
    }

    /// The `GET …/models` requests received (kept apart from [`Self::requests`], which
    /// holds model requests only).
    pub fn model_list_requests(&self) -> Vec<CapturedRequest> {
        lock(&self.shared.model_lists).clone()
    }

    /// Session-naming requests received so far (not in [`MockLlmServer::requests`]).
    pub fn naming_requests(&self) -> Vec<CapturedRequest> {
        lock(&self.shared.naming).clone()
    }

    /// Every request received so far, in order (session-naming requests apart).
    pub fn requests(&self) -> Vec<CapturedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// Waits until at least `n` requests arrived or `timeout` passed; returns them all.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<CapturedRequest> {
        let mut rx = self.shared.count.subscribe();
        let _ = tokio::time::timeout(timeout, rx.wait_for(|c| *c >= n)).await;
        self.requests()
    }
}

impl Drop for MockLlmServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Captures every request, then routes it.
async fn handle(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .unwrap_or_default();
    let body: serde_json::Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| serde_json::Value::String(String::from_utf8_lossy(&bytes).into()));
    let captured = CapturedRequest {
        path: parts.uri.path().to_string(),
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into(),
                )
            })
            .collect(),
        body,
    };
    if parts.method == Method::GET && captured.path.trim_end_matches('/').ends_with("/models") {
        lock(&shared.model_lists).push(captured.clone());
        if let Some(code) = *lock(&shared.models_status) {
            let status = StatusCode::from_u16(code).unwrap_or(StatusCode::UNAUTHORIZED);
            let body = openai_error(
                "Incorrect API key provided",
                "invalid_request_error",
                None,
                None,
            );
            return plain(status, body, None);
        }
        let Some(ids) = lock(&shared.models).clone() else {
            return not_found(&captured.path);
        };
        let data: Vec<serde_json::Value> = ids
            .iter()
            .map(|id| serde_json::json!({"id": id, "object": "model", "owned_by": "mock"}))
            .collect();
        let body = serde_json::json!({"object": "list", "data": data}).to_string();
        return plain(StatusCode::OK, body, None);
    }
    let naming = (parts.method == Method::POST)
        .then(|| crate::naming::title_for(&captured.body))
        .flatten();
    if naming.is_none() {
        lock(&shared.requests).push(captured.clone());
        shared.count.send_modify(|c| *c += 1);
    } else {
        lock(&shared.naming).push(captured.clone());
    }

    let path = captured.path.trim_end_matches('/');
    let is_chat = path.ends_with("/chat/completions");
    let is_responses = path.ends_with("/responses");
    let is_anthropic = path.ends_with("/messages");
    if parts.method != Method::POST || !(is_chat || is_responses || is_anthropic) {
        return not_found(&captured.path);
    }
    if is_responses && !shared.responses_on.load(Ordering::SeqCst) {
        return not_found(&captured.path);
    }
    let mut pushed = shared.pushed.subscribe();
    let reply = loop {
        if let Some(title) = &naming {
            break Reply::text(title);
        }
        if let Some(r) = lock(&shared.script).pop_front() {
            break r;
        }
        if !shared.hold.load(Ordering::SeqCst) || pushed.changed().await.is_err() {
            return plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                "mock script exhausted".into(),
                None,
            );
        }
    };
    if let Some(f) = reply.fault.as_ref().filter(|f| f.is_http_error()) {
        return http_fault(f, captured.api_key().unwrap_or(""), is_anthropic);
    }
    let n = shared.next_id.fetch_add(1, Ordering::SeqCst);
    let ctx = RenderCtx {
        id: if is_chat {
            format!("chatcmpl-mock{n}")
        } else if is_anthropic {
            format!("msg_mock{n}")
        } else {
            format!("resp_mock{n}")
        },
        model: captured.body["model"]
            .as_str()
            .unwrap_or("mock-model")
            .to_string(),
        created: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        include_usage: captured.body["stream_options"]["include_usage"] == serde_json::json!(true),
        include_encrypted: captured.body["include"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "reasoning.encrypted_content")),
    };
    let frames = if is_chat {
        crate::chat::render(&reply, &ctx)
    } else if is_anthropic {
        crate::anthropic::render(&reply, &ctx)
    } else {
        crate::responses::render(&reply, &ctx)
    };
    sse(frames, reply.delay)
}

/// A streamed `text/event-stream` response playing these frames.
fn sse(frames: Vec<Frame>, delay: Duration) -> Response {
    let frames = if delay.is_zero() {
        crate::frame::coalesce(frames)
    } else {
        frames
    };
    let steps = futures::stream::unfold(
        (frames.into_iter(), false),
        move |(mut it, started)| async move {
            let frame = it.next()?;
            match frame {
                Frame::Event(text) => {
                    if started && !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    Some((Ok(Bytes::from(text)), (it, true)))
                }
                Frame::Stall(d) => {
                    tokio::time::sleep(d).await;
                    Some((Ok(Bytes::new()), (it, started)))
                }
                Frame::Abort => {
                    // Let hyper flush what was sent so far before tearing the connection down.
                    tokio::time::sleep(FLUSH_GRACE).await;
                    let err = std::io::Error::other("mock: connection dropped");
                    Some((Err(err), (it, started)))
                }
            }
        },
    );
    // hyper tears the connection down (no final chunk) at the first error.
    let mut resp = Response::new(Body::from_stream(steps));
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// The HTTP error answer for a status-level fault, shaped like the endpoint's provider.
fn http_fault(f: &Fault, api_key: &str, anthropic: bool) -> Response {
    let (status, body, retry_after) = http_fault_parts(f, api_key);
    if !anthropic {
        return plain(status, body, retry_after);
    }
    let (code, body) = crate::anthropic::http_error(status.as_u16(), &body);
    let status = StatusCode::from_u16(code).unwrap_or(status);
    plain(status, body, retry_after)
}

/// Status, body and `Retry-After` of a status-level fault, OpenAI-shaped.
fn http_fault_parts(f: &Fault, api_key: &str) -> (StatusCode, String, Option<u64>) {
    match f {
        Fault::ContextLengthExceeded => (
            StatusCode::BAD_REQUEST,
            openai_error(
                "This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.",
                "invalid_request_error",
                Some("context_length_exceeded"),
                Some("messages"),
            ),
            None,
        ),
        Fault::Status {
            code,
            retry_after,
            body,
        } => {
            let status = StatusCode::from_u16(*code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let body = body.clone().unwrap_or_else(|| {
                openai_error(&format!("mock status {code}"), "mock_error", None, None)
            });
            (status, body.replace("{api_key}", api_key), *retry_after)
        }
        _ => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "mock: not an HTTP fault".into(),
            None,
        ),
    }
}

/// OpenAI's answer to an unknown route.
fn not_found(path: &str) -> Response {
    let msg = format!("Invalid URL (POST {path})");
    plain(
        StatusCode::NOT_FOUND,
        openai_error(&msg, "invalid_request_error", None, None),
        None,
    )
}

/// A complete, non-streamed response.
fn plain(status: StatusCode, body: String, retry_after: Option<u64>) -> Response {
    let json = body.trim_start().starts_with('{');
    let mut resp = Response::new(Body::from(body));
    *resp.status_mut() = status;
    let h: &mut HeaderMap = resp.headers_mut();
    let ct = if json {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
    if let Some(secs) = retry_after {
        h.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    resp
}
