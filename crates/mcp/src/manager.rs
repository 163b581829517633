//! The MCP manager (seed §15.1, §15.5): servers start in parallel in the background, each with
//! its own status; tools are pushed into attached registries whenever they change; calls,
//! refreshes and a bounded `close_all`. Dropping the last handle kills every server.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use cairn_engine::{ToolHandle, ToolRegistry};
use rmcp::model::Tool;
use tokio::sync::watch;

use crate::builtin::builtin_for;
use crate::config::{ServerConfig, TransportConfig};
use crate::lazy::{self, CALL_TOOL, SEARCH_TOOL};
use crate::naming;
use crate::options::{LazyMode, ManagerOptions, ServerInfo, ServerStatus};
use crate::slot::Slot;
use crate::tool::McpTool;

/// Why a manager operation failed.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// No server of that name is configured.
    #[error("no MCP server named `{0}` is configured")]
    UnknownServer(String),
    /// The server did not start or is disabled.
    #[error("MCP server `{name}`: {reason}")]
    Unavailable {
        /// The server.
        name: String,
        /// Why.
        reason: crate::ServerError,
    },
}

/// Where tools are registered: an engine session (its registry is re-read before every LLM
/// request), or anything else holding a [`ToolRegistry`].
pub trait RegistryTarget: Send + Sync {
    /// Runs `f` on the registry.
    fn update(&self, f: &mut dyn FnMut(&mut ToolRegistry));
}

impl RegistryTarget for cairn_engine::Session {
    fn update(&self, f: &mut dyn FnMut(&mut ToolRegistry)) {
        self.with_tools(|r| f(r));
    }
}

impl RegistryTarget for Mutex<ToolRegistry> {
    fn update(&self, f: &mut dyn FnMut(&mut ToolRegistry)) {
        f(&mut self.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// One tool as the model may see it.
#[derive(Clone)]
pub(crate) struct PlannedTool {
    pub registered: String,
    pub slot: Arc<Slot>,
    pub tool: Tool,
}

pub(crate) struct Inner {
    pub opts: Arc<ManagerOptions>,
    slots: RwLock<Vec<Arc<Slot>>>,
    targets: Mutex<Vec<Arc<dyn RegistryTarget>>>,
    /// Tools loaded by searches in lazy mode, oldest first.
    pub loaded: Mutex<Vec<String>>,
    changes: watch::Sender<u64>,
}

/// Handle on the manager; clones share it.
#[derive(Clone)]
pub struct McpManager {
    inner: Arc<Inner>,
}

/// A handle that does not keep the manager alive (for things the manager's targets own).
#[derive(Clone)]
pub struct WeakMcpManager(Weak<Inner>);

impl WeakMcpManager {
    /// The manager, if it still exists.
    pub fn upgrade(&self) -> Option<McpManager> {
        self.0.upgrade().map(|inner| McpManager { inner })
    }
}

impl McpManager {
    /// A manager for these servers (nothing starts until [`McpManager::start_all`]).
    pub fn new(servers: Vec<ServerConfig>, opts: ManagerOptions) -> Self {
        let opts = Arc::new(opts);
        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| {
            let slots = servers
                .into_iter()
                .map(|config| {
                    let w = weak.clone();
                    let notify: crate::slot::Notify = Arc::new(move || {
                        if let Some(inner) = w.upgrade() {
                            inner.changed();
                        }
                    });
                    let builtin = match &config.transport {
                        Some(TransportConfig::Builtin { kind }) => {
                            builtin_for(kind, opts.tesseract.as_deref(), opts.ocr_model.clone())
                        }
                        _ => None,
                    };
                    Slot::new(config, opts.clone(), notify, builtin)
                })
                .collect();
            Inner {
                opts: opts.clone(),
                slots: RwLock::new(slots),
                targets: Mutex::new(Vec::new()),
                loaded: Mutex::new(Vec::new()),
                changes: watch::channel(0).0,
            }
        });
        McpManager { inner }
    }

    /// A weak handle.
    pub fn downgrade(&self) -> WeakMcpManager {
        WeakMcpManager(Arc::downgrade(&self.inner))
    }

    /// Starts every enabled server in the background, all at once; returns immediately.
    pub fn start_all(&self) {
        for slot in self.inner.slots() {
            if slot.is_startable() && matches!(slot.status(), ServerStatus::Starting) {
                let s = slot.clone();
                tokio::spawn(async move {
                    let _ = s.start().await;
                });
            }
        }
    }

    /// Starts every enabled server in parallel and waits: (ready, [(failed, reason)]).
    pub async fn connect_all(&self) -> (Vec<String>, Vec<(String, crate::ServerError)>) {
        let slots: Vec<Arc<Slot>> = self
            .inner
            .slots()
            .into_iter()
            .filter(|s| s.is_startable())
            .collect();
        let results = futures::future::join_all(slots.iter().map(|s| s.start())).await;
        let mut ok = Vec::new();
        let mut failed = Vec::new();
        for (s, r) in slots.iter().zip(results) {
            match r {
                Ok(()) => ok.push(s.name().to_string()),
                Err(e) => failed.push((s.name().to_string(), e)),
            }
        }
        (ok, failed)
    }

    /// Starts one server (if needed) and waits for it.
    pub async fn connect_server(&self, name: &str) -> Result<(), McpError> {
        let slot = self.slot(name)?;
        slot.start().await.map_err(|reason| McpError::Unavailable {
            name: name.to_string(),
            reason,
        })
    }

    /// Disconnects, reconnects and re-registers one server's tools.
    pub async fn refresh(&self, name: &str) -> Result<(), McpError> {
        let slot = self.slot(name)?;
        slot.refresh()
            .await
            .map_err(|reason| McpError::Unavailable {
                name: name.to_string(),
                reason,
            })
    }

    /// Waits until no server is starting, or `within` passes; true when all settled.
    pub async fn wait_settled(&self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        let mut rx = self.inner.changes.subscribe();
        loop {
            let starting = self
                .inner
                .slots()
                .iter()
                .any(|s| matches!(s.status(), ServerStatus::Starting));
            if !starting {
                return true;
            }
            tokio::select! {
                r = rx.changed() => if r.is_err() { return false },
                _ = tokio::time::sleep_until(deadline) => return false,
            }
        }
    }

    /// Registers the current tools into `target` now and after every change.
    pub fn attach(&self, target: Arc<dyn RegistryTarget>) {
        target.update(&mut |r| self.sync_into(r));
        self.inner
            .targets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(target);
    }

    /// Makes `registry`'s MCP tools match the servers' current tools: stale `mcp__*` tools and
    /// meta tools are removed, current ones (or, in lazy mode, the two meta tools plus the
    /// tools searches loaded) registered.
    pub fn sync_into(&self, registry: &mut ToolRegistry) {
        self.inner.sync_into(registry);
    }

    /// Every server with its status, tools and process id.
    pub fn status(&self) -> Vec<ServerInfo> {
        self.inner.slots().iter().map(|s| s.info()).collect()
    }

    /// A connected stdio server's stderr tail and the bytes its log holds.
    pub fn stderr_tail(&self, name: &str, max_chars: usize) -> Option<(String, usize)> {
        self.slot(name).ok()?.stderr_tail(max_chars)
    }

    /// The registered names of every tool, whether or not lazy mode offers them.
    pub fn tool_names(&self) -> Vec<String> {
        self.inner
            .plan()
            .into_iter()
            .map(|p| p.registered)
            .collect()
    }

    /// Whether lazy loading is in effect now.
    pub fn is_lazy(&self) -> bool {
        self.inner.is_lazy(&self.inner.plan())
    }

    /// A counter that moves whenever a status or a tool list changes (for UIs).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// Stops every server in parallel, bounded by the shutdown grace (voluntary exit, SIGTERM,
    /// SIGKILL), and removes their tools from attached registries.
    pub async fn close_all(&self) {
        let slots = self.inner.slots();
        let bound = self.inner.opts.shutdown_grace * 2 + Duration::from_secs(3);
        let all = futures::future::join_all(slots.iter().map(|s| s.close()));
        if tokio::time::timeout(bound, all).await.is_err() {
            tracing::warn!("MCP servers did not stop in time; killing them");
        }
        for s in &slots {
            s.kill_now();
        }
        self.inner.changed();
    }

    /// Every ready server's prompts, in config order.
    pub fn prompts(&self) -> Vec<crate::prompts::PromptInfo> {
        self.inner
            .slots()
            .iter()
            .flat_map(|s| s.prompts())
            .collect()
    }

    /// The names of the configured servers.
    pub fn server_names(&self) -> Vec<String> {
        self.inner
            .slots()
            .iter()
            .map(|s| s.config.name.clone())
            .collect()
    }

    /// Reads resource `uri` through server `server` (an `@server:uri` mention).
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<String, String> {
        match self.inner.slots().iter().find(|s| s.config.name == server) {
            Some(slot) => slot.read_resource(uri).await,
            None => Err(format!("no MCP server is named `{server}`")),
        }
    }

    /// Expands the prompt command `/command args` (`mcp__server__prompt`) into a user turn's
    /// text; `None` when no ready server offers that command.
    pub async fn expand_prompt(&self, command: &str, args: &str) -> Option<Result<String, String>> {
        for slot in self.inner.slots() {
            if let Some(p) = slot.prompts().into_iter().find(|p| p.command == command) {
                let bound = match crate::prompts::bind(&p, args) {
                    Ok(b) => b,
                    Err(e) => return Some(Err(e)),
                };
                return Some(
                    slot.get_prompt(&p.name, bound)
                        .await
                        .map_err(|e| format!("/{command}: {e}")),
                );
            }
        }
        None
    }

    /// Each ready server's `instructions` (server name, text), in config order.
    pub fn instructions(&self) -> Vec<(String, String)> {
        self.inner
            .slots()
            .iter()
            .filter_map(|s| Some((s.name().to_string(), s.instructions()?)))
            .collect()
    }

    /// Calls `tool` (the server's own name for it) of server `server` as the engine would.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: rmcp::model::JsonObject,
        ctx: &cairn_engine::ToolContext,
    ) -> Result<cairn_engine::ToolOutput, cairn_engine::ToolError> {
        let slot = self
            .slot(server)
            .map_err(|e| cairn_engine::ToolError::Failed(e.to_string()))?;
        slot.call(tool, arguments, ctx).await
    }

    fn slot(&self, name: &str) -> Result<Arc<Slot>, McpError> {
        self.inner
            .slots()
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| McpError::UnknownServer(name.to_string()))
    }
}

impl Inner {
    pub fn slots(&self) -> Vec<Arc<Slot>> {
        self.slots.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn changed(self: &Arc<Self>) {
        self.changes.send_modify(|n| *n += 1);
        let targets = self
            .targets
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for t in targets {
            t.update(&mut |r| self.sync_into(r));
        }
    }

    /// Every exposed tool with its registered name, in config then listing order.
    pub fn plan(&self) -> Vec<PlannedTool> {
        let mut taken = HashSet::new();
        let mut out = Vec::new();
        for slot in self.slots() {
            for tool in slot.exposed_tools() {
                let registered = naming::tool_name(slot.name(), &tool.name, &mut taken);
                out.push(PlannedTool {
                    registered,
                    slot: slot.clone(),
                    tool,
                });
            }
        }
        out
    }

    pub fn is_lazy(&self, plan: &[PlannedTool]) -> bool {
        let l = &self.opts.lazy;
        match l.mode {
            LazyMode::On => true,
            LazyMode::Off => false,
            LazyMode::Auto => {
                let chars: usize = plan
                    .iter()
                    .map(|p| {
                        p.registered.len()
                            + p.tool.description.as_deref().map_or(0, str::len)
                            + serde_json::to_string(&*p.tool.input_schema).map_or(0, |s| s.len())
                    })
                    .sum();
                plan.len() > l.threshold_tools || chars > l.threshold_chars
            }
        }
    }

    fn sync_into(self: &Arc<Self>, registry: &mut ToolRegistry) {
        let plan = self.plan();
        let lazy = self.is_lazy(&plan);
        let mut wanted: Vec<ToolHandle> = Vec::new();
        if lazy {
            if !plan.is_empty() || self.slots().iter().any(|s| s.is_startable()) {
                wanted.extend(lazy::meta_tools(Arc::downgrade(self)));
            }
            let loaded = self
                .loaded
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            for p in plan.iter().filter(|p| loaded.contains(&p.registered)) {
                wanted.push(Arc::new(McpTool::new(
                    p.registered.clone(),
                    &p.tool,
                    p.slot.clone(),
                )));
            }
        } else {
            for p in &plan {
                wanted.push(Arc::new(McpTool::new(
                    p.registered.clone(),
                    &p.tool,
                    p.slot.clone(),
                )));
            }
        }
        let names: HashSet<String> = wanted.iter().map(|t| t.schema().name).collect();
        for existing in registry.names() {
            let ours =
                existing.starts_with("mcp__") || existing == SEARCH_TOOL || existing == CALL_TOOL;
            if ours && !names.contains(&existing) {
                registry.remove(&existing);
            }
        }
        registry.register_all(wanted);
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        for s in self.slots.read().unwrap_or_else(|e| e.into_inner()).iter() {
            s.kill_now();
        }
    }
}
