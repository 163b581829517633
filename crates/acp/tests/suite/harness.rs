//! An agent in this process over in-memory pipes against the mock model, and the SDK's
//! client side driving it: updates are collected, permission requests answered by policy.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, InitializeResponse, NewSessionRequest, NewSessionResponse,
    PromptRequest, PromptResponse, ReadTextFileRequest, ReadTextFileResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, ByteStreams, Client, Error};
use cairn_acp::{AcpAgent, AcpConfig, LlmFactory};
use cairn_runtime::llm_setup::{client_for, Face, LlmSetup, ProviderChoice};
use cairn_runtime::RunOptions;
use cairn_testkit::MockLlmServer;
use tokio::sync::Notify;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// How the client answers permission requests.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Selects the option with this id.
    Select(&'static str),
    /// Answers `cancelled`.
    Cancel,
}

/// What the client saw.
#[derive(Default)]
pub struct Seen {
    pub updates: Mutex<Vec<SessionNotification>>,
    pub permissions: Mutex<Vec<RequestPermissionRequest>>,
    /// Paths the agent read through `fs/read_text_file`.
    pub reads: Mutex<Vec<PathBuf>>,
    /// The unsaved buffer the client serves (`None`: an error, "no buffer").
    pub buffer: Mutex<Option<String>>,
    pub changed: Notify,
}

impl Seen {
    pub fn updates(&self) -> Vec<SessionUpdate> {
        self.updates
            .lock()
            .unwrap()
            .iter()
            .map(|n| n.update.clone())
            .collect()
    }

    /// Waits (at most 10 s) until `pred` holds over the updates.
    pub async fn wait_for(&self, what: &str, pred: impl Fn(&[SessionUpdate]) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let notified = self.changed.notified();
            if pred(&self.updates()) {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                panic!("timed out waiting for {what}: {:#?}", self.updates());
            }
        }
    }

    /// The text of the agent message chunks.
    pub fn text(&self) -> String {
        self.updates()
            .iter()
            .filter_map(|u| match u {
                SessionUpdate::AgentMessageChunk(c) => match &c.content {
                    ContentBlock::Text(t) => Some(t.text.clone()),
                    _ => None,
                },
                _ => None,
            })
            .collect()
    }

    pub fn clear(&self) {
        self.updates.lock().unwrap().clear();
        self.permissions.lock().unwrap().clear();
    }
}

/// The mock model's client for a session's options (no key, no environment).
pub fn mock_llm() -> LlmFactory {
    Arc::new(|o: &RunOptions| -> Option<LlmSetup> {
        let choice = ProviderChoice {
            provider: "openai".into(),
            model: o.model.clone().unwrap_or_else(|| "m".into()),
            base_url: o.base_url.clone().unwrap_or_default(),
            reasoning: String::new(),
        };
        let keys = cairn_secrets::MemoryKeyStore::new();
        let env = |_: &str| None;
        let client = client_for(&choice, &keys, &env, Face::Cli).ok()?;
        Some(LlmSetup {
            client,
            provider: "openai".into(),
            model: choice.model,
            blocked: None,
        })
    })
}

/// An agent and a client connected to it.
pub struct Harness {
    pub cx: ConnectionTo<Agent>,
    pub seen: Arc<Seen>,
    pub answer: Arc<Mutex<Answer>>,
    pub mock: MockLlmServer,
    pub ws: tempfile::TempDir,
    pub state: PathBuf,
    pub _state_dir: Option<tempfile::TempDir>,
    pub agent: AcpAgent,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    client: Option<tokio::task::JoinHandle<()>>,
    served: Option<tokio::task::JoinHandle<Result<(), cairn_acp::AcpError>>>,
}

/// The options of a test agent: the mock's endpoint, no sandbox, interactive.
pub fn options(mock: &MockLlmServer, state: &Path) -> RunOptions {
    RunOptions {
        state_dir: Some(state.to_path_buf()),
        model: Some("m".into()),
        base_url: Some(mock.base_url()),
        sandbox: Some(cairn_policy::sandbox::SandboxMode::Off),
        ..RunOptions::default()
    }
}

impl Harness {
    /// A harness over a new mock, workspace and state dir.
    pub async fn start() -> Harness {
        let mock = MockLlmServer::start().await.unwrap();
        let ws = cairn_testkit::temp_workspace().unwrap();
        let state = tempfile::tempdir().unwrap();
        let opts = options(&mock, state.path());
        let mut h = Harness::on(opts, mock, ws).await;
        h.state = state.path().to_path_buf();
        h._state_dir = Some(state);
        h
    }

    /// A harness whose agent opens sessions with `options`.
    pub async fn on(options: RunOptions, mock: MockLlmServer, ws: tempfile::TempDir) -> Harness {
        let state = options.state_dir.clone().unwrap_or_default();
        let agent = AcpAgent::new(AcpConfig {
            options,
            llm: Some(mock_llm()),
        });
        let (client_io, agent_io) = tokio::io::duplex(1 << 20);
        let (agent_read, agent_write) = tokio::io::split(agent_io);
        let a = agent.clone();
        let served = tokio::spawn(async move { a.serve(agent_read, agent_write).await });
        let (client_read, client_write) = tokio::io::split(client_io);
        let seen = Arc::new(Seen::default());
        let answer = Arc::new(Mutex::new(Answer::Select("allow_once")));
        let (cx_tx, cx_rx) = tokio::sync::oneshot::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (s1, s2, s3, a1) = (seen.clone(), seen.clone(), seen.clone(), answer.clone());
        let client = tokio::spawn(async move {
            let transport = ByteStreams::new(client_write.compat_write(), client_read.compat());
            let _ = Client
                .v1()
                .name("test-client")
                .on_receive_notification(
                    async move |n: SessionNotification, _cx| {
                        s1.updates.lock().unwrap().push(n);
                        s1.changed.notify_waiters();
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_request(
                    async move |r: RequestPermissionRequest, responder, _cx| {
                        s2.permissions.lock().unwrap().push(r);
                        s2.changed.notify_waiters();
                        let outcome = match a1.lock().unwrap().clone() {
                            Answer::Select(id) => RequestPermissionOutcome::Selected(
                                SelectedPermissionOutcome::new(id),
                            ),
                            Answer::Cancel => RequestPermissionOutcome::Cancelled,
                        };
                        responder.respond(RequestPermissionResponse::new(outcome))
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |r: ReadTextFileRequest, responder, _cx| {
                        s3.reads.lock().unwrap().push(r.path.clone());
                        let buffer = s3.buffer.lock().unwrap().clone();
                        match buffer {
                            Some(text) => responder.respond(ReadTextFileResponse::new(text)),
                            None => responder.respond_with_error(Error::invalid_params()),
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .connect_with(transport, async move |cx| {
                    let _ = cx_tx.send(cx.clone());
                    let _ = stop_rx.await;
                    Ok(())
                })
                .await;
        });
        let cx = cx_rx.await.unwrap();
        Harness {
            cx,
            seen,
            answer,
            mock,
            ws,
            state,
            _state_dir: None,
            agent,
            stop: Some(stop_tx),
            client: Some(client),
            served: Some(served),
        }
    }

    /// `initialize` at protocol v1.
    pub async fn initialize(&self) -> InitializeResponse {
        self.cx
            .send_request(InitializeRequest::new(ProtocolVersion::V1))
            .block_task()
            .await
            .unwrap()
    }

    /// `initialize` offering `fs/read_text_file`.
    pub async fn initialize_with_buffers(&self) -> InitializeResponse {
        let caps = agent_client_protocol::v1::schema::ClientCapabilities::new().fs(
            agent_client_protocol::v1::schema::FileSystemCapabilities::new().read_text_file(true),
        );
        self.cx
            .send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
            .block_task()
            .await
            .unwrap()
    }

    /// `initialize`, then a session in the workspace; returns its response.
    pub async fn session(&self) -> NewSessionResponse {
        self.initialize().await;
        self.new_session(self.ws.path()).await.unwrap()
    }

    pub async fn new_session(&self, cwd: &Path) -> Result<NewSessionResponse, Error> {
        self.cx
            .send_request(NewSessionRequest::new(cwd.to_path_buf()))
            .block_task()
            .await
    }

    /// `session/prompt` with `text`.
    pub async fn prompt(&self, sid: &str, text: &str) -> Result<PromptResponse, Error> {
        self.cx
            .send_request(PromptRequest::new(
                sid.to_string(),
                vec![ContentBlock::from(text.to_string())],
            ))
            .block_task()
            .await
    }

    pub fn answer_with(&self, a: Answer) {
        *self.answer.lock().unwrap() = a;
    }

    /// Ends the client's connection (the agent sees its input end) and waits for the agent.
    pub async fn finish(mut self) -> Result<(), cairn_acp::AcpError> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(c) = self.client.take() {
            let _ = c.await;
        }
        match self.served.take() {
            Some(s) => tokio::time::timeout(Duration::from_secs(10), s)
                .await
                .expect("the agent ends when its input ends")
                .unwrap(),
            None => Ok(()),
        }
    }
}
