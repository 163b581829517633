//! The agent's state: the session host, the client's capabilities, and the sessions this
//! connection opened (each with what a turn's updates need to remember).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_client_protocol::v1::schema::ClientCapabilities;
use agent_client_protocol::Error;
use cairn_runtime::host::{Answerer, Host, HostError, OpenSession, SessionHandle};

use crate::config::AcpConfig;

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The agent over one connection.
pub(crate) struct State {
    pub host: Host,
    pub config: AcpConfig,
    /// What the client said it can do (`initialize`).
    pub client: Mutex<ClientCapabilities>,
    /// Why the last session opened could not run turns (no key), if it could not.
    pub blocked: Mutex<Option<String>>,
    /// Sessions opened here, by id.
    lives: Mutex<HashMap<String, Arc<Live>>>,
}

/// How long a new session waits for its endpoint's model list.
const MODELS_WITHIN: std::time::Duration = std::time::Duration::from_secs(3);

/// A session opened over ACP.
pub(crate) struct Live {
    pub handle: Arc<SessionHandle>,
    /// A `session/prompt` is being answered.
    pub busy: Mutex<bool>,
    /// `read_file` reads the client's unsaved buffers.
    pub buffers: Mutex<bool>,
}

impl Live {
    /// Interrupts the turn of the prompt being answered; nothing when none is (an
    /// interrupt of an idle session would stop its next turn).
    pub fn interrupt(&self) {
        if *lock(&self.busy) {
            self.handle.interrupt();
        }
    }
}

impl State {
    pub fn new(config: AcpConfig) -> State {
        State {
            host: Host::new(),
            config,
            client: Mutex::new(ClientCapabilities::new()),
            blocked: Mutex::new(None),
            lives: Mutex::default(),
        }
    }

    /// The session `id` opened here; an `invalid_params` error naming it otherwise.
    pub fn live(&self, id: &str) -> Result<Arc<Live>, Error> {
        lock(&self.lives).get(id).cloned().ok_or_else(|| {
            invalid(format!(
                "unknown session `{id}` (open it with session/new or session/load)"
            ))
        })
    }

    /// Opens a session in `cwd` (new when `session_id` is `None`); blocking work runs off
    /// the dispatch loop's thread.
    pub async fn open(
        self: &Arc<Self>,
        cwd: PathBuf,
        session_id: Option<String>,
        mcp_servers: Vec<cairn_runtime::mcp_editor::EditorServer>,
    ) -> Result<Arc<Live>, Error> {
        if !cwd.is_absolute() {
            return Err(invalid(format!(
                "cwd must be an absolute path, got `{}`",
                cwd.display()
            )));
        }
        if let Some(id) = &session_id {
            if let Ok(l) = self.live(id) {
                return Ok(l);
            }
        }
        let mut options = self.config.options.clone();
        options.workspace = Some(cwd);
        options.session_id = session_id;
        options.mcp_servers = mcp_servers;
        let llm = self.config.llm.as_ref().and_then(|f| f(&options));
        let me = self.clone();
        let handle = tokio::task::spawn_blocking(move || {
            me.host.open(OpenSession {
                options,
                llm,
                answerer: Answerer::waiting(),
                terminals: None,
            })
        })
        .await
        .map_err(|e| Error::internal_error().data(e.to_string()))?
        .map_err(host_error)?;
        // The model option lists the endpoint's models (asked once per session, briefly).
        let base_url = self.config.options.base_url.clone().unwrap_or_default();
        handle.learn_models(&base_url, MODELS_WITHIN).await;
        let live = Arc::new(Live {
            handle: handle.clone(),
            busy: Mutex::new(false),
            buffers: Mutex::new(false),
        });
        lock(&self.lives).insert(handle.id(), live.clone());
        Ok(live)
    }

    /// Why session `h` cannot run turns: a blocked LLM, or (with the runtime's own client)
    /// no key for a provider that needs one, checked as the app checks it (the CLI would
    /// send the request without a key and let the endpoint refuse it).
    pub fn key_problem(&self, h: &SessionHandle) -> Option<String> {
        if let Some(reason) = h.blocked() {
            return Some(reason);
        }
        if self.config.llm.is_some() {
            return None;
        }
        let env = |n: &str| cairn_runtime::secret_env::var(n);
        let keys = cairn_runtime::keys::key_store_from_env(&env);
        let choice = cairn_runtime::llm_setup::ProviderChoice {
            provider: h.provider(),
            model: h.model(),
            base_url: self.config.options.base_url.clone().unwrap_or_default(),
            reasoning: String::new(),
        };
        use cairn_runtime::llm_setup::Blocked;
        match cairn_runtime::llm_setup::client_for(
            &choice,
            keys.as_ref(),
            &env,
            cairn_runtime::llm_setup::Face::App,
        ) {
            Err(b @ (Blocked::NoKey { .. } | Blocked::KeyringDown { .. } | Blocked::Key(_))) => {
                Some(b.to_string())
            }
            _ => None,
        }
    }

    /// Interrupts every session whose prompt is being answered.
    pub fn interrupt_all(&self) {
        let all: Vec<Arc<Live>> = lock(&self.lives).values().cloned().collect();
        for live in all {
            live.interrupt();
        }
    }

    /// Closes session `id` (saved); false when it was not open here.
    pub async fn close(&self, id: &str) -> Result<bool, Error> {
        let gone = lock(&self.lives).remove(id);
        if gone.is_none() {
            return Ok(false);
        }
        self.host
            .close(id)
            .await
            .map_err(|e| Error::internal_error().data(e.to_string()))
    }
}

/// An `invalid_params` error with `message` as its message.
pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(
        agent_client_protocol::ErrorCode::INVALID_PARAMS,
        message.into(),
    )
}

/// A host refusal as a JSON-RPC error whose message says what to do.
pub(crate) fn host_error(e: HostError) -> Error {
    let message = e.to_string();
    match e {
        HostError::Closed(_) | HostError::NotPending(_) | HostError::NoAllowance(_) => {
            invalid(message)
        }
        _ => Error::new(agent_client_protocol::ErrorCode::INVALID_REQUEST, message),
    }
}
