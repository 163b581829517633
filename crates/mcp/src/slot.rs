//! One configured server over its lifetime: start, status, crash detection with backoff
//! restarts, tool-list refreshes, calls, close. The manager owns one slot per server.

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use cairn_engine::{ToolContext, ToolError, ToolOutput};
use futures::FutureExt;
use rmcp::model::{JsonObject, Tool};
use tokio::sync::watch;

use crate::builtin::BuiltinServer;
use crate::config::{ServerConfig, TransportConfig};
use crate::connection::{secs, with_stderr, CallFailure, CallTimeouts, Connection};
use crate::handler::Handler;
use crate::listing::Listing;
use crate::options::{ManagerOptions, ServerInfo, ServerStatus};
use crate::result::{is_error, result_text};
use crate::ServerError;

/// Something about the server changed (status or tools).
pub type Notify = Arc<dyn Fn() + Send + Sync>;

/// An uptime after which a crash no longer counts against the restart budget.
const HEALTHY_UPTIME: Duration = Duration::from_secs(60);

#[derive(Default)]
struct SlotState {
    conn: Option<Arc<Connection>>,
    tools: Vec<Tool>,
    /// What was wrong with the last tool listing (skipped or repaired entries).
    warnings: Vec<String>,
    generation: u64,
    restarts: u32,
    restart_pending: bool,
    closed: bool,
    ready_at: Option<Instant>,
    startup_ms: Option<u64>,
    pid: Option<u32>,
    /// Scopes a call was refused for (403 `insufficient_scope`) since the last start.
    needs_scope: Option<String>,
    /// The server's `instructions` from its last start.
    instructions: Option<String>,
    /// The server's prompts from its last start.
    prompts: Vec<crate::prompts::PromptInfo>,
}

/// One server.
pub struct Slot {
    /// Its configuration.
    pub config: ServerConfig,
    opts: Arc<ManagerOptions>,
    state: Mutex<SlotState>,
    status: watch::Sender<ServerStatus>,
    notify: Notify,
    connect_lock: tokio::sync::Mutex<()>,
    builtin: Option<Arc<dyn BuiltinServer>>,
    /// The calls running now, which hear the server's log messages.
    log_listeners: crate::server_log::Listeners,
}

impl Slot {
    /// A slot; disabled servers (or unavailable built-ins) start out `disabled`.
    pub fn new(
        config: ServerConfig,
        opts: Arc<ManagerOptions>,
        notify: Notify,
        builtin: Option<Arc<dyn BuiltinServer>>,
    ) -> Arc<Slot> {
        let initial = if let Some(reason) = &config.held {
            ServerStatus::Disabled {
                reason: reason.clone(),
            }
        } else if !config.enabled {
            ServerStatus::Disabled {
                reason: "disabled in the config".into(),
            }
        } else if config.transport.is_none() {
            ServerStatus::Disabled {
                reason: "nothing to start".into(),
            }
        } else {
            match (&config.transport, &builtin) {
                (Some(TransportConfig::Builtin { kind }), None) => ServerStatus::Disabled {
                    reason: format!("no built-in server named `{kind}`"),
                },
                (_, Some(b)) => match b.availability() {
                    Ok(()) => ServerStatus::Starting,
                    Err(reason) => ServerStatus::Disabled {
                        reason: reason.to_string(),
                    },
                },
                _ => ServerStatus::Starting,
            }
        };
        Arc::new(Slot {
            config,
            opts,
            state: Mutex::new(SlotState::default()),
            status: watch::channel(initial).0,
            notify,
            connect_lock: tokio::sync::Mutex::new(()),
            builtin,
            log_listeners: Default::default(),
        })
    }

    /// Configured name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Current status.
    pub fn status(&self) -> ServerStatus {
        self.status.borrow().clone()
    }

    /// Watches status changes.
    pub fn watch_status(&self) -> watch::Receiver<ServerStatus> {
        self.status.subscribe()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, SlotState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_status(&self, s: ServerStatus) {
        self.status.send_replace(s);
        (self.notify)();
    }

    /// Whether this server should be started at all.
    pub fn is_startable(&self) -> bool {
        !matches!(self.status(), ServerStatus::Disabled { .. }) && !self.state().closed
    }

    /// Tools to register: the listed ones while ready or while a restart is pending.
    pub fn exposed_tools(&self) -> Vec<Tool> {
        let st = self.state();
        let live = matches!(self.status(), ServerStatus::Ready { .. }) || st.restart_pending;
        if live && !st.closed {
            st.tools.clone()
        } else {
            Vec::new()
        }
    }

    /// Starts the server unless it is running; `Err` carries the reason it failed.
    pub async fn start(self: &Arc<Self>) -> Result<(), ServerError> {
        let _one_at_a_time = self.connect_lock.lock().await;
        if let ServerStatus::Disabled { reason } = self.status() {
            return Err(ServerError::Unavailable(reason));
        }
        let gen = {
            let mut st = self.state();
            if st.closed {
                return Err(ServerError::Closed("the MCP manager is closed".into()));
            }
            if st.conn.as_ref().is_some_and(|c| !c.is_closed()) {
                return Ok(());
            }
            st.generation += 1;
            st.generation
        };
        self.set_status(ServerStatus::Starting);
        let started = Instant::now();
        let startup = self
            .config
            .startup_timeout
            .unwrap_or(self.opts.startup_timeout);
        if let Some(b) = &self.builtin {
            let listing = Listing {
                tools: b.tools(),
                ..Listing::default()
            };
            return self.became_ready(gen, None, listing, started);
        }
        let Some(transport) = self.config.transport.clone() else {
            return Err(ServerError::Start("nothing to start".into()));
        };
        let weak = Arc::downgrade(self);
        let on_changed: crate::handler::ToolsChanged = Arc::new(move || {
            if let Some(slot) = weak.upgrade() {
                tokio::spawn(async move { slot.reload_tools(gen).await });
            }
        });
        let weak = Arc::downgrade(self);
        let on_log: crate::server_log::LogSink = Arc::new(move |p| {
            if let Some(slot) = weak.upgrade() {
                slot.log_listeners.deliver(&slot.config.name, p);
            }
        });
        let weak = Arc::downgrade(self);
        let running: crate::asks::RunningCall =
            Arc::new(move || weak.upgrade().and_then(|slot| slot.log_listeners.latest()));
        let handler = Handler::new(&self.config.name, self.opts.workspace.clone(), on_changed)
            .with_log_sink(on_log)
            .with_running_call(running);
        let sandbox = self
            .opts
            .sandbox
            .as_ref()
            .filter(|s| (s.applies)(&self.config.source))
            .map(|s| s.wrapper.clone());
        let result = Connection::connect(
            &transport,
            &self.opts.workspace,
            startup,
            self.opts.stderr_log_bytes,
            handler,
            sandbox.as_deref(),
            self.opts.auth.as_deref(),
        )
        .await;
        let name = &self.config.name;
        let result = result.map_err(|e| match e {
            ServerError::LoginNeeded(r) => {
                ServerError::LoginNeeded(format!("{r}: {}{name}`", crate::auth::LOGIN_HINT))
            }
            other => other,
        });
        match result {
            Ok(s) => {
                let conn = Arc::new(s.conn);
                conn.set_log_level(name, &self.opts.log_level).await;
                let prompts = conn.prompts(name).await;
                self.state().prompts = prompts;
                self.became_ready(gen, Some(conn), s.listing, started)
            }
            Err(reason) => {
                let still_ours = {
                    let st = self.state();
                    !st.closed && st.generation == gen
                };
                if still_ours {
                    tracing::warn!(server = %self.config.name, %reason, "MCP server failed to start");
                    self.set_status(ServerStatus::Failed {
                        reason: reason.to_string(),
                    });
                }
                Err(reason)
            }
        }
    }

    fn became_ready(
        self: &Arc<Self>,
        gen: u64,
        conn: Option<Arc<Connection>>,
        listing: Listing,
        started: Instant,
    ) -> Result<(), ServerError> {
        let (tools, warnings) = self.checked(listing);
        let count = tools.len();
        {
            let mut st = self.state();
            if st.closed || st.generation != gen {
                if let Some(c) = &conn {
                    c.kill_now();
                }
                return Err(ServerError::Closed("closed while starting".into()));
            }
            st.pid = conn.as_ref().and_then(|c| c.child().map(|p| p.pid()));
            st.conn = conn.clone();
            st.tools = tools;
            st.warnings = warnings;
            st.ready_at = Some(Instant::now());
            st.needs_scope = None;
            st.instructions = conn.as_ref().and_then(|c| c.instructions());
            st.startup_ms = Some(started.elapsed().as_millis() as u64);
            st.restart_pending = false;
        }
        if let Some(conn) = conn {
            let weak = Arc::downgrade(self);
            let mut done = conn.done_receiver();
            drop(conn);
            tokio::spawn(async move {
                let _ = done.wait_for(|d| *d).await;
                if let Some(slot) = weak.upgrade() {
                    slot.connection_lost(gen).await;
                }
            });
        }
        self.set_status(ServerStatus::Ready { tools: count });
        Ok(())
    }

    async fn connection_lost(self: Arc<Self>, gen: u64) {
        let (conn, uptime) = {
            let mut st = self.state();
            if st.closed || st.generation != gen {
                return;
            }
            (st.conn.take(), st.ready_at.map(|t| t.elapsed()))
        };
        let mut reason = "the connection closed".to_string();
        if let Some(c) = &conn {
            if let Some(child) = c.child() {
                reason = match child.wait_exit(Duration::from_secs(1)).await {
                    Some(e) => format!("the server exited ({})", e.description),
                    None => "the server closed its output".into(),
                };
                reason = with_stderr(reason, child);
            }
            c.kill_now();
        }
        drop(conn);
        {
            let mut st = self.state();
            if st.closed || st.generation != gen {
                return;
            }
            if uptime.is_some_and(|u| u >= HEALTHY_UPTIME) {
                st.restarts = 0;
            }
        }
        tracing::warn!(server = %self.config.name, %reason, "MCP server stopped");
        self.restart_with_backoff(reason).await;
    }

    /// Restarts after a crash, doubling the delay each time, until the budget is spent.
    async fn restart_with_backoff(self: Arc<Self>, mut reason: String) {
        loop {
            let next = {
                let mut st = self.state();
                if st.closed {
                    return;
                }
                if st.restarts >= self.opts.max_restarts {
                    st.restart_pending = false;
                    st.tools.clear();
                    None
                } else {
                    st.restarts += 1;
                    st.restart_pending = true;
                    let factor = 2u32.saturating_pow(st.restarts - 1);
                    let delay = self
                        .opts
                        .restart_backoff
                        .saturating_mul(factor)
                        .min(self.opts.max_backoff);
                    Some((st.restarts, delay))
                }
            };
            let Some((n, delay)) = next else {
                self.set_status(ServerStatus::Failed {
                    reason: format!(
                        "{reason}\n(gave up after {} restarts)",
                        self.opts.max_restarts
                    ),
                });
                return;
            };
            self.set_status(ServerStatus::Failed {
                reason: format!(
                    "{reason}\n(restarting in {}, attempt {n} of {})",
                    secs(delay),
                    self.opts.max_restarts
                ),
            });
            tokio::time::sleep(delay).await;
            match self.start().await {
                Ok(()) => return,
                Err(r) => reason = r.to_string(),
            }
        }
    }

    async fn reload_tools(self: Arc<Self>, gen: u64) {
        let conn = {
            let st = self.state();
            if st.closed || st.generation != gen {
                return;
            }
            st.conn.clone()
        };
        let Some(conn) = conn else { return };
        let within = self
            .config
            .startup_timeout
            .unwrap_or(self.opts.startup_timeout);
        match conn.list_tools(within).await {
            Ok(listing) => {
                let (tools, warnings) = self.checked(listing);
                let n = tools.len();
                {
                    let mut st = self.state();
                    if st.closed || st.generation != gen {
                        return;
                    }
                    st.tools = tools;
                    st.warnings = warnings;
                }
                self.set_status(ServerStatus::Ready { tools: n });
            }
            Err(e) => {
                tracing::warn!(server = %self.config.name, "cannot refresh the tool list: {e}")
            }
        }
    }

    /// The listing's tools without repeated names, and its warnings (each logged).
    fn checked(&self, listing: Listing) -> (Vec<Tool>, Vec<String>) {
        let Listing {
            tools,
            mut warnings,
            ..
        } = listing;
        let tools = dedupe(tools, &mut warnings);
        for w in &warnings {
            tracing::warn!(server = %self.config.name, "MCP tool list: {w}");
        }
        (tools, warnings)
    }

    /// A connection to call through, waiting (cancellably, up to the startup timeout) while
    /// the server is starting or restarting.
    pub(crate) async fn ready_connection(
        &self,
        ctx: &ToolContext,
    ) -> Result<Option<Arc<Connection>>, ToolError> {
        let wait = self
            .config
            .startup_timeout
            .unwrap_or(self.opts.startup_timeout)
            + self.opts.max_backoff.min(Duration::from_secs(5));
        let deadline = tokio::time::Instant::now() + wait;
        let mut rx = self.watch_status();
        loop {
            {
                let st = self.state();
                if st.closed {
                    return Err(ToolError::Failed(format!(
                        "MCP server `{}` is shut down",
                        self.config.name
                    )));
                }
                match &*rx.borrow_and_update() {
                    ServerStatus::Ready { .. } => {
                        if self.builtin.is_some() {
                            return Ok(None);
                        }
                        if let Some(c) = st.conn.as_ref().filter(|c| !c.is_closed()) {
                            return Ok(Some(c.clone()));
                        }
                    }
                    ServerStatus::Disabled { reason } => {
                        return Err(ToolError::Failed(format!(
                            "MCP server `{}` is disabled: {reason}",
                            self.config.name
                        )))
                    }
                    ServerStatus::Failed { reason } if !st.restart_pending => {
                        return Err(ToolError::Failed(format!(
                            "MCP server `{}` is not available: {reason}",
                            self.config.name
                        )))
                    }
                    _ => {}
                }
            }
            tokio::select! {
                r = rx.changed() => if r.is_err() {
                    return Err(ToolError::Failed(format!("MCP server `{}` is gone", self.config.name)));
                },
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(ToolError::Failed(format!(
                        "MCP server `{}` did not become ready within {} ({})",
                        self.config.name, secs(wait), self.status().label()
                    )));
                }
                _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
            }
        }
    }

    /// Calls `tool` with `arguments`; every failure is a clear [`ToolError`] for the model.
    pub async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let server = &self.config.name;
        let conn = self.ready_connection(ctx).await?;
        let Some(conn) = conn else {
            return match &self.builtin {
                Some(b) => {
                    let r = b.call(tool, arguments, ctx).await?;
                    finish(server, tool, &r, self.opts.images_to_model)
                }
                None => Err(ToolError::Failed(format!(
                    "MCP server `{server}` has no connection"
                ))),
            };
        };
        let idle = self.config.call_timeout.unwrap_or(self.opts.call_timeout);
        let max = self
            .config
            .max_call_timeout
            .unwrap_or(self.opts.max_call_timeout)
            .max(idle);
        let host = ctx.host.clone();
        let mut on_progress = move |line: String| {
            let host = host.clone();
            async move { host.output(line).await }.boxed()
        };
        // Always an object: some servers read fields of `arguments` without checking it exists.
        let args = Some(arguments);
        let _listening = self.log_listeners.listen(ctx.host.clone());
        match conn
            .call(
                tool,
                args,
                CallTimeouts { idle, max },
                &ctx.cancel,
                &mut on_progress,
            )
            .await
        {
            Ok(r) => finish(server, tool, &r, self.opts.images_to_model),
            Err(CallFailure::Interrupted) => Err(ToolError::Interrupted),
            Err(CallFailure::Timeout { after, total }) => Err(ToolError::Timeout {
                ms: after.as_millis() as u64,
                detail: if total {
                    format!(" (MCP server `{server}`, tool `{tool}`: the maximum call time, even with progress; the call was cancelled)")
                } else {
                    format!(" (MCP server `{server}`, tool `{tool}`: no answer and no progress; the call was cancelled)")
                },
            }),
            Err(CallFailure::Closed) => {
                let why = match conn.child() {
                    Some(child) => {
                        let what = match child.wait_exit(Duration::from_secs(1)).await {
                            Some(e) => format!("exited during the call ({})", e.description),
                            None => "closed the connection during the call".into(),
                        };
                        with_stderr(what, child)
                    }
                    None => "closed the connection during the call".into(),
                };
                Err(ToolError::Failed(format!("MCP server `{server}` {why}")))
            }
            Err(CallFailure::Protocol(m)) => Err(ToolError::Failed(format!(
                "MCP server `{server}` rejected the call to `{tool}`: {m}"
            ))),
            Err(CallFailure::NeedsScope(scope)) => Err(self.needs_scope(tool, scope).await),
        }
    }

    /// A call refused for a missing scope: remembered with the login (the next one asks for
    /// it: a step-up), shown in the server's status, and said in words.
    async fn needs_scope(&self, tool: &str, scope: Option<String>) -> ToolError {
        let server = &self.config.name;
        if let (Some(auth), Some(TransportConfig::Http { url, .. })) =
            (&self.opts.auth, &self.config.transport)
        {
            if let Err(e) = auth.wants(url, scope.as_deref()).await {
                tracing::warn!(server = %server, "could not remember the scopes a call needs: {e}");
            }
        }
        let named = scope.clone().unwrap_or_else(|| "more".into());
        self.state().needs_scope = Some(named.clone());
        (self.notify)();
        ToolError::Failed(format!(
            "MCP server `{server}` refused the call to `{tool}`: the login lacks the permission \
             it needs (scopes: {named}). Grant it by logging in again ({}{server}` or Connect \
             in Settings), then retry.",
            crate::auth::LOGIN_HINT
        ))
    }

    /// Disconnects and starts again (restart budget reset).
    pub async fn refresh(self: &Arc<Self>) -> Result<(), ServerError> {
        let conn = {
            let mut st = self.state();
            st.generation += 1;
            st.restarts = 0;
            st.restart_pending = false;
            st.conn.take()
        };
        if let Some(c) = conn {
            c.close(self.opts.shutdown_grace).await;
        }
        self.start().await
    }

    /// Stops for good (bounded: see [`Connection::close`]).
    pub async fn close(&self) {
        let conn = {
            let mut st = self.state();
            st.closed = true;
            st.generation += 1;
            st.tools.clear();
            st.restart_pending = false;
            st.conn.take()
        };
        if let Some(c) = conn {
            c.close(self.opts.shutdown_grace).await;
        }
        if !matches!(self.status(), ServerStatus::Disabled { .. }) {
            self.status.send_replace(ServerStatus::Disabled {
                reason: "shut down".into(),
            });
        }
    }

    /// Kills the server's process group now (drop paths).
    pub fn kill_now(&self) {
        let mut st = self.state();
        st.closed = true;
        st.generation += 1;
        if let Some(c) = st.conn.take() {
            c.kill_now();
        }
    }

    /// The server's prompts while it is ready.
    pub fn prompts(&self) -> Vec<crate::prompts::PromptInfo> {
        let st = self.state();
        if st.conn.is_none() {
            return Vec::new();
        }
        st.prompts.clone()
    }

    /// Gets prompt `name` with `arguments` as a user turn's text.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: rmcp::model::JsonObject,
    ) -> Result<String, String> {
        let conn = self.state().conn.clone();
        match conn {
            Some(c) => c.get_prompt(name, arguments).await,
            None => Err(format!("MCP server `{}` is not running", self.config.name)),
        }
    }

    /// Reads resource `uri` through the server (`resources/read`), as text.
    pub async fn read_resource(&self, uri: &str) -> Result<String, String> {
        let conn = self.state().conn.clone();
        match conn {
            Some(c) => c.read_resource(uri).await,
            None => Err(format!("MCP server `{}` is not running", self.config.name)),
        }
    }

    /// The server's `instructions` while it is ready (as it gave them: callers bound them).
    pub fn instructions(&self) -> Option<String> {
        let st = self.state();
        st.conn.as_ref()?;
        st.instructions.clone()
    }

    /// The listing for the UI and `cairn mcp list`.
    pub fn info(&self) -> ServerInfo {
        let st = self.state();
        ServerInfo {
            name: self.config.name.clone(),
            transport: self
                .config
                .transport
                .as_ref()
                .map(|t| t.kind().to_string())
                .unwrap_or_default(),
            target: self
                .config
                .transport
                .as_ref()
                .map(TransportConfig::describe)
                .unwrap_or_default(),
            status: self.status(),
            tools: st.tools.iter().map(|t| t.name.to_string()).collect(),
            warnings: st.warnings.clone(),
            pid: st.conn.as_ref().and_then(|_| st.pid),
            restarts: st.restarts,
            startup_ms: st.startup_ms,
            source: self.config.source.clone(),
            needs_scope: st.needs_scope.clone(),
        }
    }

    /// The last `max_chars` of a stdio server's stderr (`None` when not connected over stdio).
    pub fn stderr_tail(&self, max_chars: usize) -> Option<(String, usize)> {
        let st = self.state();
        let child = st.conn.as_ref()?.child()?;
        Some((child.stderr().tail(max_chars), child.stderr().len()))
    }

    /// A weak handle (for tasks that must not keep the slot alive).
    pub fn downgrade(self: &Arc<Self>) -> Weak<Slot> {
        Arc::downgrade(self)
    }
}

fn finish(
    server: &str,
    tool: &str,
    r: &rmcp::model::CallToolResult,
    images_to_model: bool,
) -> Result<ToolOutput, ToolError> {
    let text = result_text(r);
    if is_error(r) {
        let text = if text.trim().is_empty() {
            "(no details)".to_string()
        } else {
            text
        };
        return Err(ToolError::Failed(format!(
            "MCP tool `{tool}` on server `{server}` reported an error: {text}"
        )));
    }
    let text = if text.is_empty() {
        "(the tool returned no content)".to_string()
    } else {
        text
    };
    let images = if images_to_model {
        crate::result::image_parts(r)
    } else {
        Vec::new()
    };
    Ok(if images.is_empty() {
        ToolOutput::text(text)
    } else {
        ToolOutput::with_images(text, images)
    })
}

/// Keeps the first of tools listed twice under one name (a server bug), with a warning.
fn dedupe(tools: Vec<Tool>, warnings: &mut Vec<String>) -> Vec<Tool> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(tools.len());
    for t in tools {
        if seen.insert(t.name.to_string()) {
            out.push(t);
        } else {
            warnings.push(format!(
                "tool `{}` is listed twice; the first is used",
                t.name
            ));
        }
    }
    out
}
