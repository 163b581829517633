//! The server's state: its settings, the session host, the sessions it has open, and how a
//! session is opened (created, or a stored one reopened with its history, mode and
//! allowlists).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use axum::http::StatusCode;
use cairn_engine::{Approver, FixedApprover};
use cairn_protocol::{ApprovalDecision, Mode};
use cairn_runtime::host::{Answerer, Host, HostError, OpenSession, Pending};
use cairn_runtime::{ConfigScope, RunOptions, RuntimeError, SavedSession, VcsMode};
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::approver::TimedApprover;
use crate::config::{ApprovePolicy, ServeConfig};
use crate::error::{from_store, ApiError};
use crate::live::Live;
use crate::tenants::Tenant;

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What opening a session asks for (`POST /v1/sessions`, or a stored session reopened).
#[derive(Debug, Default, Clone)]
pub struct OpenRequest {
    /// The workspace (new sessions).
    pub workspace: Option<PathBuf>,
    /// The stored session to reopen.
    pub session_id: Option<String>,
    /// `discuss` · `plan` · `interactive` · `auto`.
    pub mode: Option<Mode>,
    /// Model id.
    pub model: Option<String>,
    /// Provider name.
    pub provider: Option<String>,
    /// Endpoint.
    pub base_url: Option<String>,
    /// `ask` or `deny` (`None`: the server's).
    pub approve: Option<ApprovePolicy>,
    /// `--allow-command` prefixes.
    pub allow_commands: Vec<String>,
    /// Iteration cap.
    pub max_iterations: Option<u32>,
    /// Context window override.
    pub context_window: Option<u64>,
    /// Snapshots.
    pub vcs: VcsMode,
    /// The name to give a new session.
    pub name: Option<String>,
}

/// The server.
pub struct App {
    /// Its settings.
    pub cfg: ServeConfig,
    /// Where sessions live.
    pub state_dir: PathBuf,
    /// The session host.
    pub host: Host,
    /// The bearer token.
    pub token: String,
    /// The TCP port (for the `Host` check); `None` on a unix socket.
    pub port: Option<u16>,
    /// Sessions open here.
    lives: Mutex<HashMap<String, Arc<Live>>>,
    /// The server-wide turn cap.
    pub turns: Option<Arc<Semaphore>>,
    /// This process's event-id prefix.
    pub epoch: String,
    /// Cancelled when the server shuts down.
    pub stopping: CancellationToken,
    /// Serialises opening sessions (the open-session count).
    opening: tokio::sync::Mutex<()>,
    /// The tenants (`--tenants`), empty in single-user mode.
    pub tenants: Vec<Arc<Tenant>>,
}

impl App {
    /// A server with no session open.
    pub fn new(cfg: ServeConfig, state_dir: PathBuf, token: String, port: Option<u16>) -> App {
        let turns = cfg.max_turns.map(|n| Arc::new(Semaphore::new(n.max(1))));
        App {
            cfg,
            state_dir,
            host: Host::new(),
            token,
            port,
            lives: Mutex::default(),
            turns,
            epoch: uuid::Uuid::new_v4().simple().to_string()[..12].to_string(),
            stopping: CancellationToken::new(),
            opening: tokio::sync::Mutex::new(()),
            tenants: Vec::new(),
        }
    }

    /// The session `id` if it is open here, whoever's.
    pub fn live_any(&self, id: &str) -> Option<Arc<Live>> {
        lock(&self.lives).get(id).cloned()
    }

    /// Every session open here, whoever's.
    pub fn lives_all(&self) -> Vec<Arc<Live>> {
        lock(&self.lives).values().cloned().collect()
    }

    /// The session `id`, opened from the store when it is not open (history, mode and
    /// allowlists restored); `409 session_locked` when another process has it.
    pub async fn open_stored(ctx: &Ctx, id: &str) -> Result<Arc<Live>, ApiError> {
        if let Some(l) = ctx.live(id) {
            l.touch();
            return Ok(l);
        }
        cairn_runtime::store::validate_id(id).map_err(|_| ApiError::no_session(id))?;
        let store = cairn_runtime::SessionStore::new(&ctx.state_dir);
        store.load(id).map_err(from_store)?;
        App::open(
            ctx,
            OpenRequest {
                session_id: Some(id.to_string()),
                ..OpenRequest::default()
            },
        )
        .await
    }

    /// Opens a session (new, or stored) and starts its worker.
    pub async fn open(ctx: &Ctx, req: OpenRequest) -> Result<Arc<Live>, ApiError> {
        let this = &ctx.app;
        if this.stopping.is_cancelled() {
            return Err(shutting_down());
        }
        let _one = this.opening.lock().await;
        if let Some(id) = req.session_id.as_deref() {
            if let Some(l) = ctx.live(id) {
                return Ok(l);
            }
            if this.live_any(id).is_some() {
                return Err(ApiError::no_session(id));
            }
        }
        let max = ctx
            .tenant
            .as_ref()
            .and_then(|t| t.max_sessions)
            .unwrap_or(this.cfg.max_sessions);
        if ctx.lives().len() >= max {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_sessions",
                format!("{max} sessions are open (--max-sessions)"),
            ));
        }
        let app = ctx.clone();
        let name = req.name.clone();
        let live = tokio::task::spawn_blocking(move || app.app.open_blocking(&app, req))
            .await
            .map_err(ApiError::internal)??;
        if let Some(n) = name.filter(|n| !n.trim().is_empty()) {
            live.handle.rename(n.trim()).map_err(from_store)?;
        }
        lock(&this.lives).insert(live.id(), live.clone());
        tokio::spawn(crate::runs::worker(live.clone(), this.turns.clone()));
        Ok(live)
    }

    fn open_blocking(&self, ctx: &Ctx, req: OpenRequest) -> Result<Arc<Live>, ApiError> {
        let cfg = &self.cfg;
        let pending = Arc::new(Pending::new());
        let workspace = req.workspace.clone().or_else(|| {
            let id = req.session_id.as_deref()?;
            let saved = cairn_runtime::SessionStore::new(&ctx.state_dir)
                .load(id)
                .ok()?;
            Some(PathBuf::from(saved.workspace))
        });
        if let (Some(t), Some(w)) = (&ctx.tenant, &workspace) {
            if !w.starts_with(&t.root) {
                return Err(ApiError::new(
                    StatusCode::FORBIDDEN,
                    "workspace_forbidden",
                    "the workspace is outside this tenant's root",
                ));
            }
        }
        let policy = req.approve.unwrap_or(cfg.approve);
        let approver: Arc<dyn Approver> = match policy {
            ApprovePolicy::Ask => Arc::new(TimedApprover::new(
                pending.clone(),
                workspace.clone().unwrap_or_default(),
                cfg.approval_timeout,
                ctx.tenant.as_ref().map(|t| t.root.clone()),
            )),
            ApprovePolicy::Deny => Arc::new(FixedApprover(ApprovalDecision::Deny)),
            ApprovePolicy::Allow => Arc::new(FixedApprover(ApprovalDecision::Once)),
        };
        let model = req.model.clone().or_else(|| cfg.model.clone());
        let mut provider = req.provider.clone().or_else(|| cfg.provider.clone());
        let mut base_url = req.base_url.clone().or_else(|| cfg.base_url.clone());
        let mut sandbox = cfg.sandbox;
        let mut hidden = Vec::new();
        // A tenant's session reads no configuration of the server's account, and the
        // workspace's own only with trustProjectConfig (serve.md, Tenants).
        let config = ctx.tenant.as_ref().map_or(ConfigScope::default(), |t| {
            ConfigScope::tenant(t.trust_project_config)
        });
        let llm = match (&ctx.tenant, &model) {
            (Some(t), Some(m)) => {
                let name = req.provider.clone().unwrap_or_else(|| "openai".into());
                let setup = crate::tenants::llm(t, &name, m)?;
                provider = Some(name);
                base_url = None;
                sandbox = Some(cairn_policy::sandbox::SandboxMode::Required);
                hidden = crate::tenants::hidden_for(
                    &self.tenants,
                    t,
                    &cfg.tenants.clone().unwrap_or_default(),
                );
                Some(setup)
            }
            (None, Some(m)) => cfg.llm.as_ref().and_then(|src| {
                src.build(
                    m,
                    provider.as_deref().unwrap_or("openai"),
                    base_url.as_deref(),
                )
            }),
            _ => None,
        };
        let options = RunOptions {
            workspace: req.workspace.clone(),
            state_dir: Some(ctx.state_dir.clone()),
            session_id: req.session_id.clone(),
            model,
            provider,
            base_url,
            mode: req.mode,
            allowed_commands: req.allow_commands.clone(),
            max_iterations: req.max_iterations,
            context_window: req.context_window,
            vcs: req.vcs,
            sandbox,
            sandbox_hidden: hidden,
            sandbox_network: cfg.sandbox_network,
            config,
            ..RunOptions::default()
        };
        let handle = self
            .host
            .open(OpenSession {
                options,
                llm,
                answerer: Answerer::Custom(approver),
                terminals: None,
            })
            .map_err(open_error)?;
        Ok(Arc::new(Live::new(
            handle,
            pending,
            &self.epoch,
            cfg.approval_timeout,
            ctx.tenant.as_ref().map(|t| t.id.clone()),
        )))
    }

    /// Closes session `id` here: interrupts, drops the queue, denies what waits, saves.
    pub async fn close(&self, id: &str) -> Result<(), ApiError> {
        let Some(live) = lock(&self.lives).remove(id) else {
            return Ok(());
        };
        live.drop_queue();
        live.pending.close();
        let closed = self.host.close(id).await;
        // The run's stream ends with its `run_end` before the session's streams close.
        if tokio::time::timeout(std::time::Duration::from_secs(2), live.runs_ended())
            .await
            .is_err()
        {
            tracing::warn!(session = %id, "the run did not end in time");
        }
        live.closed.cancel();
        live.hub.close();
        closed.map(|_| ()).map_err(from_store)
    }

    /// Closes every session (shutdown).
    pub async fn close_all(&self) {
        let ids: Vec<String> = lock(&self.lives).keys().cloned().collect();
        let closing = ids.iter().map(|id| self.close(id));
        for r in futures::future::join_all(closing).await {
            if let Err(e) = r {
                tracing::warn!(error = %e.message, "closing a session");
            }
        }
    }

    /// The session view of an open session.
    pub fn view_live(&self, live: &Live) -> Value {
        let saved = live.handle.saved();
        let w = live.pending.waiting();
        let mut v = summary(&saved);
        let m = v.as_object_mut();
        if let Some(m) = m {
            m.insert("model".into(), json!(live.handle.model()));
            m.insert("mode".into(), json!(live.handle.mode()));
            m.insert("state".into(), json!(live.state()));
            m.insert("queued".into(), json!(live.queued()));
            m.insert(
                "pending".into(),
                json!({"approvals": w.approvals, "questions": w.questions + w.plans + w.directories}),
            );
            m.insert("lastStatus".into(), json!(live.handle.last_status()));
        }
        v
    }

    /// The session view of a stored session not open here.
    pub fn view_stored(&self, saved: &SavedSession) -> Value {
        let mut v = summary(saved);
        if let Some(m) = v.as_object_mut() {
            m.insert("mode".into(), json!(saved.permissions.mode));
            m.insert("state".into(), json!("closed"));
            m.insert("queued".into(), json!(0));
            m.insert("pending".into(), json!({"approvals": 0, "questions": 0}));
            m.insert(
                "lastStatus".into(),
                json!(self.host.last_status(&saved.session_id)),
            );
        }
        v
    }
}

/// `cairn sessions --json`'s fields of a saved session.
fn summary(s: &SavedSession) -> Value {
    json!({
        "id": s.session_id,
        "name": s.name,
        "workspace": s.workspace,
        "model": s.model,
        "createdAt": s.created_at,
        "updatedAt": s.updated_at,
        "turns": s.turns,
        "worktree": s.worktree,
    })
}

/// `503 shutting_down`.
pub fn shutting_down() -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "shutting_down",
        "the server is shutting down",
    )
}

fn open_error(e: HostError) -> ApiError {
    match e {
        HostError::Runtime(RuntimeError::Store(s)) | HostError::Store(s) => from_store(s),
        HostError::Runtime(RuntimeError::GitDir(g)) => {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_workspace", g.to_string())
        }
        HostError::Runtime(RuntimeError::Config(m)) if m.starts_with("no model") => {
            ApiError::invalid(m)
        }
        HostError::Runtime(RuntimeError::Config(m)) => {
            ApiError::new(StatusCode::BAD_REQUEST, "invalid_workspace", m)
        }
        HostError::AlreadyOpen(id) => ApiError::conflict("session_busy", format!("{id} is open")),
        other => ApiError::internal(other),
    }
}

/// A request's view of the server: the caller's tenant (none in single-user mode) and
/// state dir; sessions of other tenants do not exist for it.
#[derive(Clone)]
pub struct Ctx {
    /// The server.
    pub app: Arc<App>,
    /// The caller's tenant.
    pub tenant: Option<Arc<Tenant>>,
    /// Where the caller's sessions live.
    pub state_dir: PathBuf,
}

/// The tenant the guard selected for a request.
#[derive(Clone)]
pub struct Caller(pub Option<Arc<Tenant>>);

impl std::ops::Deref for Ctx {
    type Target = App;
    fn deref(&self) -> &App {
        &self.app
    }
}

impl Ctx {
    /// The caller's session `id`, if it is open here.
    pub fn live(&self, id: &str) -> Option<Arc<Live>> {
        self.app
            .live_any(id)
            .filter(|l| l.tenant.as_deref() == self.tenant.as_ref().map(|t| t.id.as_str()))
    }

    /// The caller's sessions open here.
    pub fn lives(&self) -> Vec<Arc<Live>> {
        let me = self.tenant.as_ref().map(|t| t.id.as_str());
        self.app
            .lives_all()
            .into_iter()
            .filter(|l| l.tenant.as_deref() == me)
            .collect()
    }

    /// [`App::open_stored`] for the caller.
    pub async fn open_stored(&self, id: &str) -> Result<Arc<Live>, ApiError> {
        App::open_stored(self, id).await
    }

    /// [`App::open`] for the caller.
    pub async fn open(&self, req: OpenRequest) -> Result<Arc<Live>, ApiError> {
        App::open(self, req).await
    }
}

impl axum::extract::FromRequestParts<Arc<App>> for Ctx {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        app: &Arc<App>,
    ) -> Result<Self, Self::Rejection> {
        let tenant = match parts.extensions.get::<Caller>() {
            Some(Caller(t)) => t.clone(),
            None => {
                return Err(ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "unauthorized",
                    "send Authorization: Bearer <token>",
                ))
            }
        };
        let state_dir = tenant
            .as_ref()
            .map_or_else(|| app.state_dir.clone(), |t| t.state_dir.clone());
        Ok(Ctx {
            app: app.clone(),
            tenant,
            state_dir,
        })
    }
}
