//! One live connection: transport set-up under a startup deadline, `tools/list`, calls with
//! progress-extended timeouts and cancellation, and a bounded close.

use std::time::{Duration, Instant};

use futures::StreamExt;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, CancelledNotificationParam, ClientRequest, JsonObject,
    Request, ServerResult,
};
use rmcp::service::{ClientInitializeError, PeerRequestOptions, RoleClient, ServiceError};
use rmcp::transport::IntoTransport;
use rmcp::Peer;
use tokio::sync::watch;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::config::TransportConfig;
use crate::handler::Handler;
use crate::listing::{self, ListError, Listing};
use crate::process::{self, ChildProc};
use crate::stderr_log::clean_lines;
use crate::ServerError;

/// Lines of stderr quoted in failure reasons.
pub const STDERR_LINES_IN_REASON: usize = 20;
/// Bytes of stderr quoted in failure reasons.
pub const STDERR_BYTES_IN_REASON: usize = 2048;
/// Characters of the last stderr line put on a reason's first line.
const STDERR_IN_FIRST_LINE: usize = 200;

/// A connected server.
pub struct Connection {
    peer: Peer<RoleClient>,
    cancel: CancellationToken,
    _guard: DropGuard,
    child: Option<ChildProc>,
    progress: ProgressDispatcher,
    done: watch::Receiver<bool>,
    /// Tools Cairn answers itself from the server's resources ([`crate::resources`]).
    resource_tools: std::sync::Mutex<Vec<String>>,
    /// Tools the server offers only as tasks (seen on a stdio server's output).
    task_only: crate::task_only::TaskOnly,
}

/// A connection and the tools the server listed.
pub struct Started {
    /// The connection.
    pub conn: Connection,
    /// `tools/list`, every page, with what was wrong with it.
    pub listing: Listing,
}

/// Limits of one call.
#[derive(Debug, Clone, Copy)]
pub struct CallTimeouts {
    /// Time allowed without a response or progress.
    pub idle: Duration,
    /// Total time allowed.
    pub max: Duration,
}

/// Why a call did not produce a result.
#[derive(Debug)]
pub enum CallFailure {
    /// Nothing (no answer, no progress) within `idle`, or over `max` in total.
    Timeout {
        /// The limit that fired.
        after: Duration,
        /// Whether it was the total cap (progress kept coming).
        total: bool,
    },
    /// The connection closed (the server exited or dropped the stream).
    Closed,
    /// The turn was interrupted; a cancellation was sent.
    Interrupted,
    /// The server answered with a JSON-RPC error, or something unexpected.
    Protocol(String),
    /// The server refused the call with 403 `insufficient_scope`: the login lacks the scopes
    /// it names (when it names them).
    NeedsScope(Option<String>),
}

impl Connection {
    /// Connects under `startup` (spawn, `initialize`, `tools/list`); on failure everything started
    /// is torn down and the reason (with stderr for stdio servers) is returned.
    pub async fn connect(
        transport: &TransportConfig,
        workspace: &std::path::Path,
        startup: Duration,
        stderr_cap: usize,
        handler: Handler,
        sandbox: Option<&dyn cairn_engine::CommandWrapper>,
        auth: Option<&dyn crate::auth::AccessTokens>,
    ) -> Result<Started, ServerError> {
        let deadline = Instant::now() + startup;
        let progress = handler.progress();
        match transport {
            TransportConfig::Stdio {
                program,
                args,
                env,
                cwd,
            } => {
                let dir = match cwd {
                    Some(c) if c.is_absolute() => c.clone(),
                    Some(c) => workspace.join(c),
                    None => workspace.to_path_buf(),
                };
                let spawned = process::spawn(program, args, env, &dir, stderr_cap, sandbox)
                    .map_err(|e| ServerError::Start(format!("cannot start `{program}`: {e}")))?;
                let child = spawned.child;
                let task_only = crate::task_only::TaskOnly::default();
                let stdout = crate::task_only::Sniffed::new(spawned.stdout, task_only.clone());
                let result = establish(
                    handler,
                    (stdout, spawned.stdin),
                    deadline,
                    startup,
                    Some(&child),
                    &task_only,
                )
                .await;
                match result {
                    Ok((peer, cancel, done, listing)) => Ok(Started {
                        conn: Connection {
                            peer,
                            _guard: cancel.clone().drop_guard(),
                            cancel,
                            child: Some(child),
                            progress,
                            done,
                            resource_tools: std::sync::Mutex::new(listing.resource_tools.clone()),
                            task_only,
                        },
                        listing,
                    }),
                    Err(reason) => {
                        child.kill_now();
                        child.wait_exit(Duration::from_millis(500)).await;
                        child.stderr().wait_closed(Duration::from_millis(200)).await;
                        Err(reason.map_reason(|r| with_stderr(r, &child)))
                    }
                }
            }
            TransportConfig::Http { url, headers } => {
                let login = |e: crate::auth::AuthError| ServerError::LoginNeeded(e.to_string());
                let bearer = match auth {
                    Some(a) => a.bearer(url).await.map_err(login)?,
                    None => None,
                };
                let t = crate::http::streamable_http(url, headers, bearer.as_deref())?;
                let first = finish(handler.clone(), t, deadline, startup, progress.clone()).await;
                match (first, auth) {
                    // The token was refused though it had not expired: refresh once, retry.
                    (Err(ServerError::LoginNeeded(_)), Some(a)) if bearer.is_some() => {
                        let fresh = a.rejected(url).await.map_err(login)?;
                        let t = crate::http::streamable_http(url, headers, Some(&fresh))?;
                        finish(handler, t, deadline, startup, progress).await
                    }
                    (r, _) => r,
                }
            }
            TransportConfig::Sse { url, headers } => {
                let t = crate::sse::SseTransport::connect(url, headers, deadline).await?;
                finish(handler, t, deadline, startup, progress).await
            }
            TransportConfig::Builtin { kind } => Err(ServerError::Start(format!(
                "built-in server `{kind}` has no transport"
            ))),
        }
    }

    /// The `instructions` the server gave in its `initialize` answer, if any.
    pub fn instructions(&self) -> Option<String> {
        self.peer
            .peer_info()
            .and_then(|i| i.instructions.clone())
            .filter(|t| !t.trim().is_empty())
    }

    /// A call of a tool Cairn answers from the server's resources; `None` for the server's
    /// own tools.
    async fn resource_call(
        &self,
        tool: &str,
        arguments: Option<&JsonObject>,
    ) -> Option<Result<CallToolResult, CallFailure>> {
        let ours = self
            .resource_tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .any(|t| t == tool);
        if !ours {
            return None;
        }
        let text = if tool == crate::resources::LIST {
            crate::resources::list(&self.peer).await
        } else {
            match arguments
                .and_then(|a| a.get("uri"))
                .and_then(|u| u.as_str())
            {
                Some(uri) => crate::resources::read(&self.peer, uri).await,
                None => Err("read_resource needs `uri`".into()),
            }
        };
        Some(match text {
            Ok(t) => Ok(CallToolResult::success(vec![
                rmcp::model::ContentBlock::text(t),
            ])),
            Err(e) => Err(CallFailure::Protocol(e)),
        })
    }

    /// Asks the server for log messages at `level` and above, when it declared logging.
    pub async fn set_log_level(&self, server: &str, level: &str) {
        crate::server_log::set_level(server, &self.peer, level).await;
    }

    /// The server's prompts (none when it declared none or listing failed).
    pub async fn prompts(&self, server: &str) -> Vec<crate::prompts::PromptInfo> {
        crate::prompts::list(server, &self.peer).await
    }

    /// Gets prompt `name` with `arguments`, rendered as a user turn's text.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: rmcp::model::JsonObject,
    ) -> Result<String, String> {
        crate::prompts::get(&self.peer, name, arguments).await
    }

    /// Reads resource `uri` through the server, as text (binary parts named).
    pub async fn read_resource(&self, uri: &str) -> Result<String, String> {
        crate::resources::read(&self.peer, uri).await
    }

    /// The server process, for stdio servers.
    pub fn child(&self) -> Option<&ChildProc> {
        self.child.as_ref()
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        *self.done.borrow() || self.peer.is_transport_closed()
    }

    /// A receiver that turns `true` when the connection ends.
    pub fn done_receiver(&self) -> watch::Receiver<bool> {
        self.done.clone()
    }

    /// Resolves when the connection ends.
    pub async fn closed(&self) {
        let mut rx = self.done.clone();
        let _ = rx.wait_for(|d| *d).await;
    }

    /// Lists every tool again (tolerantly: see [`listing::list_tools`]).
    pub async fn list_tools(&self, within: Duration) -> Result<Listing, ServerError> {
        match tokio::time::timeout(within, listing::list_tools(&self.peer, &self.task_only)).await {
            Ok(Ok(l)) => {
                *self
                    .resource_tools
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = l.resource_tools.clone();
                Ok(l)
            }
            Ok(Err(e)) => Err(ServerError::Listing(e.to_string())),
            Err(_) => Err(ServerError::Listing(format!(
                "tools/list did not answer within {}",
                secs(within)
            ))),
        }
    }

    /// Calls `tool`; progress notifications extend `idle` (up to `max`) and are handed to
    /// `on_progress` as text; `cancel` sends `notifications/cancelled` and returns.
    pub async fn call(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
        limits: CallTimeouts,
        cancel: &CancellationToken,
        on_progress: &mut (dyn FnMut(String) -> futures::future::BoxFuture<'static, ()> + Send),
    ) -> Result<CallToolResult, CallFailure> {
        if let Some(r) = self.resource_call(tool, arguments.as_ref()).await {
            return r;
        }
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(Request::new(params));
        let options = PeerRequestOptions::with_timeout(limits.idle)
            .reset_timeout_on_progress()
            .with_max_total_timeout(limits.max);
        let handle = match self.peer.send_request_with_option(request, options).await {
            Ok(h) => h,
            Err(e) => return Err(failure(e, limits)),
        };
        let id = handle.id.clone();
        let mut progress = self.progress.subscribe(handle.progress_token.clone()).await;
        let response = handle.await_response();
        tokio::pin!(response);
        loop {
            tokio::select! {
                // Progress first: a notification sent before the answer is shown before it.
                biased;
                Some(p) = progress.next() => on_progress(progress_line(p)).await,
                r = &mut response => {
                    // Notifications are dispatched on another task and may trail the answer
                    // by a moment; hand over the ones already on their way.
                    while let Ok(Some(p)) =
                        tokio::time::timeout(PROGRESS_TRAIL, progress.next()).await
                    {
                        on_progress(progress_line(p)).await;
                    }
                    return match r {
                        Ok(ServerResult::CallToolResult(result)) => Ok(result),
                        Ok(ServerResult::EmptyResult(_)) => Ok(CallToolResult::success(Vec::new())),
                        Ok(other) => Err(CallFailure::Protocol(format!(
                            "unexpected answer to tools/call: {}",
                            serde_json::to_string(&other).unwrap_or_default().chars().take(300).collect::<String>()
                        ))),
                        Err(e) => Err(failure(e, limits)),
                    };
                }
                _ = cancel.cancelled() => {
                    let note = CancelledNotificationParam::new(Some(id), Some("interrupted by the user".into()));
                    let _ = tokio::time::timeout(Duration::from_millis(500), self.peer.notify_cancelled(note)).await;
                    return Err(CallFailure::Interrupted);
                }
            }
        }
    }

    /// Closes the session (stdin is closed for stdio servers), then stops the process within
    /// the bounds of [`ChildProc::shutdown`].
    pub async fn close(&self, grace: Duration) {
        self.cancel.cancel();
        let mut done = self.done.clone();
        let _ = tokio::time::timeout(grace, done.wait_for(|d| *d)).await;
        if let Some(c) = &self.child {
            c.shutdown(grace).await;
        }
    }

    /// Kills a stdio server's process group now.
    pub fn kill_now(&self) {
        self.cancel.cancel();
        if let Some(c) = &self.child {
            c.kill_now();
        }
    }
}

/// How long progress notifications may trail a tool's answer and still be shown.
const PROGRESS_TRAIL: Duration = Duration::from_millis(30);

/// One progress notification as a line of tool output.
fn progress_line(p: rmcp::model::ProgressNotificationParam) -> String {
    let mut line = match p.total {
        Some(t) => format!("progress {}/{}", p.progress, t),
        None => format!("progress {}", p.progress),
    };
    if let Some(m) = p.message.filter(|m| !m.is_empty()) {
        line.push_str(": ");
        line.push_str(&m);
    }
    line
}

fn failure(e: ServiceError, limits: CallTimeouts) -> CallFailure {
    match e {
        ServiceError::Timeout { timeout } => CallFailure::Timeout {
            after: timeout,
            total: timeout == limits.max && limits.max != limits.idle,
        },
        ref e @ ServiceError::TransportSend(_) if insufficient_scope(e).is_some() => {
            CallFailure::NeedsScope(insufficient_scope(e).flatten())
        }
        ref e @ ServiceError::TransportSend(_) if auth_refused(e) => CallFailure::Protocol(
            "the server refused this call: the login lacks a scope it needs, or it expired; log \
             in again (`cairn mcp login <server> --scope \"…\"` with the scopes it names)"
                .into(),
        ),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => CallFailure::Closed,
        ServiceError::McpError(e) => {
            CallFailure::Protocol(format!("error {}: {}", e.code.0, e.message))
        }
        other => CallFailure::Protocol(other.to_string()),
    }
}

type Established = (
    Peer<RoleClient>,
    CancellationToken,
    watch::Receiver<bool>,
    Listing,
);

async fn finish<T, E, A>(
    handler: Handler,
    transport: T,
    deadline: Instant,
    startup: Duration,
    progress: ProgressDispatcher,
) -> Result<Started, ServerError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let (peer, cancel, done, listing) = establish(
        handler,
        transport,
        deadline,
        startup,
        None,
        &Default::default(),
    )
    .await?;
    Ok(Started {
        conn: Connection {
            peer,
            _guard: cancel.clone().drop_guard(),
            cancel,
            child: None,
            progress,
            done,
            resource_tools: std::sync::Mutex::new(listing.resource_tools.clone()),
            task_only: Default::default(),
        },
        listing,
    })
}

/// Why the handshake failed, and whether it was the connection ending (then a stdio server's
/// exit is the better explanation).
struct StartFailure {
    reason: String,
    closed: bool,
    /// The server answered 401/403 with a Bearer challenge: a login is needed.
    login: bool,
}

impl From<ClientInitializeError> for StartFailure {
    fn from(e: ClientInitializeError) -> Self {
        let closed = matches!(
            e,
            ClientInitializeError::ConnectionClosed(_)
                | ClientInitializeError::TransportError { .. }
                | ClientInitializeError::ExpectedInitResponse(None)
        );
        if e.auth_challenge().is_some() || e.is_authorization_required() {
            return StartFailure {
                reason: "the server needs a login".into(),
                closed: false,
                login: true,
            };
        }
        StartFailure {
            reason: format!("initialize failed: {e}"),
            closed,
            login: false,
        }
    }
}

impl From<ListError> for StartFailure {
    fn from(e: ListError) -> Self {
        if auth_refused(&e) {
            return StartFailure {
                reason: "the server needs a login".into(),
                closed: false,
                login: true,
            };
        }
        StartFailure {
            closed: e.is_closed(),
            reason: e.to_string(),
            login: false,
        }
    }
}

/// Whether an HTTP 401 or 403 (a Bearer challenge) is among `e`'s causes: servers may let
/// `initialize` through and guard only what follows.
fn auth_refused(e: &(dyn std::error::Error + 'static)) -> bool {
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    let mut cur = Some(e);
    while let Some(c) = cur {
        if c.downcast_ref::<AuthRequiredError>().is_some()
            || c.downcast_ref::<InsufficientScopeError>().is_some()
        {
            return true;
        }
        cur = c.source();
    }
    false
}

/// The scope a 403 `insufficient_scope` among `e`'s causes names (`Some(None)`: it names none).
fn insufficient_scope(e: &(dyn std::error::Error + 'static)) -> Option<Option<String>> {
    use rmcp::transport::streamable_http_client::InsufficientScopeError;
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(s) = c.downcast_ref::<InsufficientScopeError>() {
            let named = s.get_required_scope().map(str::to_string).or_else(|| {
                crate::auth::Challenge::parse(&s.www_authenticate_header).and_then(|c| c.scope)
            });
            return Some(named);
        }
        cur = c.source();
    }
    None
}

/// `initialize` + `tools/list` before `deadline`; a stdio child's exit ends the wait at once.
async fn establish<T, E, A>(
    handler: Handler,
    transport: T,
    deadline: Instant,
    startup: Duration,
    child: Option<&ChildProc>,
    task_only: &crate::task_only::TaskOnly,
) -> Result<Established, ServerError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let cancel = CancellationToken::new();
    let work = async {
        let running =
            rmcp::service::serve_client_with_ct(handler, transport, cancel.clone()).await?;
        let listing = listing::list_tools(running.peer(), task_only).await?;
        Ok::<_, StartFailure>((running, listing))
    };
    let exited = async {
        match child {
            Some(c) => c.wait_exit(Duration::from_secs(24 * 3600)).await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        r = tokio::time::timeout_at(deadline.into(), work) => match r {
            Ok(r) => r,
            Err(_) => Err(StartFailure {
                reason: format!("did not finish starting (initialize + tools/list) within {}; stopped", secs(startup)),
                closed: false,
                login: false,
            }),
        },
        Some(exit) = exited => Err(StartFailure {
            reason: format!("exited during startup ({})", exit.description),
            closed: false,
            login: false,
        }),
    };
    match outcome {
        Ok((running, listing)) => {
            let peer = running.peer().clone();
            let (tx, rx) = watch::channel(false);
            tokio::spawn(async move {
                let _ = running.waiting().await;
                let _ = tx.send(true);
            });
            Ok((peer, cancel, rx, listing))
        }
        Err(failure) => {
            cancel.cancel();
            // A stdio server that died mid-handshake: report its exit rather than the pipe
            // error. (Closing the pipe ourselves, after a reply we could not use, makes a
            // healthy server exit too: that exit is no news, so the reason stays.)
            if let (true, Some(c)) = (failure.closed, child) {
                if let Some(exit) = c.wait_exit(Duration::from_millis(300)).await {
                    return Err(ServerError::Start(format!(
                        "exited during startup ({})",
                        exit.description
                    )));
                }
            }
            if failure.login {
                return Err(ServerError::LoginNeeded(failure.reason));
            }
            Err(ServerError::Start(failure.reason))
        }
    }
}

/// `reason` plus the end of the server's stderr, when there is any: its last line on the
/// first line (what one-line listings show), then up to the last 20 lines / 2 KB, with
/// escape sequences and control characters removed.
pub fn with_stderr(reason: String, child: &ChildProc) -> String {
    let raw = child.stderr().tail(STDERR_BYTES_IN_REASON * 2);
    stderr_reason(reason, &raw)
}

/// See [`with_stderr`].
pub fn stderr_reason(reason: String, raw_stderr: &str) -> String {
    let lines = clean_lines(raw_stderr, STDERR_LINES_IN_REASON, STDERR_BYTES_IN_REASON);
    let Some(last) = lines.last() else {
        return reason;
    };
    let mut first: String = last.chars().take(STDERR_IN_FIRST_LINE).collect();
    if first.len() < last.len() {
        first.push('…');
    }
    let mut out = format!("{reason}; stderr: {first}");
    if lines.len() > 1 {
        out.push_str(&format!(
            "\nstderr (last {} lines):\n{}",
            lines.len(),
            lines.join("\n")
        ));
    }
    out
}

/// `12 s` / `1.5 s` / `250 ms`.
pub fn secs(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}
