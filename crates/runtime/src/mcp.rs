//! MCP servers in assembled sessions: `<workspace>/.agent/mcp.json` plus the user-level file
//! (and the built-in OCR default) load when a session opens; servers start in the background;
//! their tools are pushed into the session's registry as they become ready. The first LLM
//! request of the session waits a short, bounded grace for servers still starting
//! (`CAIRN_MCP_STARTUP_GRACE_MS`, default 3000), so fast servers' tools are in it while a slow
//! or hung server never holds the turn longer than that. `CAIRN_MCP=0` turns MCP off.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cairn_engine::{LlmChunk, LlmClient, LlmRequest, Session, ToolRegistry};
use cairn_mcp::config::{NoSecrets, ProcessEnv, SecretLookup};
use cairn_mcp::manager::WeakMcpManager;
use cairn_mcp::{ConfigWarning, ManagerOptions, McpManager, VarContext};
use futures::stream::BoxStream;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

/// Default wait of the first request for servers still starting.
const DEFAULT_GRACE_MS: u64 = 3000;

/// A session's MCP servers: kept alive by [`crate::assemble::Assembled`]; dropping it kills them.
#[derive(Default)]
pub struct McpSession {
    manager: Option<McpManager>,
    warnings: Vec<ConfigWarning>,
    held: Vec<String>,
    skipped: Vec<crate::skipped::SkippedView>,
}

impl McpSession {
    /// Project servers held back for lack of trust, each as a sentence for the user.
    pub fn untrusted(&self) -> &[String] {
        &self.held
    }

    /// Project servers held back for lack of trust, as typed facts.
    pub fn skipped(&self) -> &[crate::skipped::SkippedView] {
        &self.skipped
    }

    /// The manager (status, refresh, close), when any server is configured.
    pub fn manager(&self) -> Option<&McpManager> {
        self.manager.as_ref()
    }

    /// Problems found in the config files (also logged as warnings).
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// Stops every server (bounded; no process is left behind).
    pub async fn close(&self) {
        if let Some(m) = &self.manager {
            m.close_all().await;
        }
    }
}

/// The OS keyring for `${keyring:NAME}` in MCP configs (entries under the `cairn` service).
struct Keyring;

impl SecretLookup for Keyring {
    fn secret(&self, name: &str) -> Result<Option<String>, cairn_mcp::ServerError> {
        use cairn_secrets::KeyStore;
        cairn_secrets::OsKeyStore::new()
            .get(name)
            .map(|k| k.map(|k| k.expose().to_string()))
            .map_err(|e| cairn_mcp::ServerError::Config(e.to_string()))
    }
}

/// Loads the configs, starts the servers in the background and attaches the session's
/// registry; `llm` is the session's client, wrapped so the first request waits the grace.
/// A project's stdio servers run inside `sandbox` (the session's) when there is one.
pub fn attach(
    session: &Session,
    workspace: &Path,
    llm: Arc<dyn LlmClient>,
    sandbox: Option<Arc<dyn cairn_engine::CommandWrapper>>,
) -> McpSession {
    attach_in(
        session,
        workspace,
        llm,
        sandbox,
        &crate::config_scope::ConfigScope::default(),
        &[],
    )
}

/// [`attach`] within `scope` ([`load_config_in`]), with the servers a face passed (`editor`).
pub fn attach_in(
    session: &Session,
    workspace: &Path,
    llm: Arc<dyn LlmClient>,
    sandbox: Option<Arc<dyn cairn_engine::CommandWrapper>>,
    scope: &crate::config_scope::ConfigScope,
    editor: &[crate::mcp_editor::EditorServer],
) -> McpSession {
    if std::env::var("CAIRN_MCP").is_ok_and(|v| v.trim() == "0") {
        return McpSession::default();
    }
    let mut loaded = load_config_in(workspace, scope);
    crate::mcp_editor::add_to(&mut loaded, editor);
    for w in &loaded.warnings {
        tracing::warn!("MCP config: {w}");
    }
    let held: Vec<String> = loaded
        .servers
        .iter()
        .filter_map(|s| {
            s.held
                .as_deref()
                .filter(|h| h.starts_with(crate::mcp_trust::UNTRUSTED))
                .map(|h| format!("MCP server `{}` is {h}", s.name))
        })
        .collect();
    let skipped: Vec<crate::skipped::SkippedView> = loaded
        .servers
        .iter()
        .filter(|s| {
            s.held
                .as_deref()
                .is_some_and(|h| h.starts_with(crate::mcp_trust::UNTRUSTED))
        })
        .map(|s| crate::skipped::SkippedView {
            kind: crate::skipped::SkippedKind::McpServer,
            name: s.name.clone(),
            file: s.source.display().to_string(),
        })
        .collect();
    if tokio::runtime::Handle::try_current().is_err() {
        tracing::warn!("MCP servers not started: no async runtime");
        return McpSession {
            manager: None,
            warnings: loaded.warnings,
            held,
            skipped,
        };
    }
    let mut options = ManagerOptions::from_env(workspace.to_path_buf());
    // OCR's fallback without tesseract: the session model when it sees images, else
    // `CAIRN_VISION_MODEL` (seed §15.6: the session's provider settings).
    options.ocr_model =
        crate::tooling::image_model(&crate::tooling::process_env, &llm, &session.model()).map(
            |v| cairn_mcp::OcrModel {
                llm: v.llm,
                model: v.model,
            },
        );
    // Images in tool results reach a model that sees images as images (as `read_image`'s).
    options.images_to_model =
        crate::tooling::model_has_vision(&crate::tooling::process_env, &session.model());
    options.sandbox = sandbox.map(|wrapper| {
        let user_file = scope.user(cairn_mcp::user_config_path());
        cairn_mcp::McpSandbox {
            wrapper,
            applies: Arc::new(move |source: &Path| {
                crate::mcp_trust::is_project_source(source, user_file.as_deref())
            }),
        }
    });
    options.auth = auth_in(&loaded, scope);
    let manager = McpManager::new(loaded.servers, options);
    let startable = manager
        .status()
        .iter()
        .any(|s| matches!(s.status, cairn_mcp::ServerStatus::Starting));
    if startable {
        manager.start_all();
        session.set_llm(Arc::new(McpGate {
            inner: llm,
            manager: manager.downgrade(),
            waited: Arc::new(AtomicBool::new(false)),
            grace: startup_grace(),
        }));
    }
    manager.attach(Arc::new(session.clone()));
    McpSession {
        manager: Some(manager),
        warnings: loaded.warnings,
        held,
        skipped,
    }
}

/// [`auth_for`] within `scope`: the user's logins are the user's, so a session without the user
/// config (a `cairn serve` tenant) has none, whatever URL its project names.
pub fn auth_in(
    loaded: &cairn_mcp::LoadedConfig,
    scope: &crate::config_scope::ConfigScope,
) -> Option<Arc<dyn cairn_mcp::auth::AccessTokens>> {
    if !scope.user_config {
        return None;
    }
    auth_for(loaded)
}

/// Logins for the HTTP servers, when any is configured (the keyring is not touched otherwise).
pub fn auth_for(
    loaded: &cairn_mcp::LoadedConfig,
) -> Option<Arc<dyn cairn_mcp::auth::AccessTokens>> {
    let any_http = loaded
        .servers
        .iter()
        .any(|s| s.enabled && matches!(s.transport, Some(cairn_mcp::TransportConfig::Http { .. })));
    if !any_http {
        return None;
    }
    match crate::mcp_auth::authenticator(&crate::tooling::process_env) {
        Ok((a, _)) => Some(Arc::new(a)),
        Err(e) => {
            tracing::warn!("MCP logins unavailable: {e}");
            None
        }
    }
}

/// The user-level file, the project file (with its imports) and the built-in defaults, with
/// `${VAR}`, `${env:VAR}`, `${keyring:NAME}` and `${workspaceFolder}` expanded; project
/// servers the user has not trusted are held back ([`crate::mcp_trust`]).
pub fn load_config(workspace: &Path) -> cairn_mcp::LoadedConfig {
    load_config_in(workspace, &crate::config_scope::ConfigScope::default())
}

/// [`load_config`] within `scope`. Without the user config: no user file, no imports from
/// other tools' (user-level) files, no keyring and no environment in `${…}`; the project's
/// servers not read under `Never`, started without the trust store under `Always`.
pub fn load_config_in(
    workspace: &Path,
    scope: &crate::config_scope::ConfigScope,
) -> cairn_mcp::LoadedConfig {
    if !scope.user_config {
        let env = std::collections::BTreeMap::<String, String>::new();
        let vars = VarContext {
            env: &env,
            secrets: &NoSecrets,
            workspace: Some(workspace),
        };
        let mut loaded = cairn_mcp::LoadedConfig::default();
        if scope.project_files() {
            loaded = cairn_mcp::load_config_file(&cairn_mcp::project_config_path(workspace), &vars);
            loaded.fill(cairn_mcp::load_config_file(
                &cairn_mcp::config::claude_project_config_path(workspace),
                &vars,
            ));
        }
        let mut loaded = cairn_mcp::with_builtin_defaults(loaded);
        if !scope.project_trusted(|| false) {
            crate::mcp_trust::hold_untrusted(&mut loaded, workspace);
        }
        return loaded;
    }
    let secrets: &dyn SecretLookup = if std::env::var("CAIRN_MCP_NO_KEYRING").is_ok() {
        &NoSecrets
    } else {
        &Keyring
    };
    let vars = VarContext {
        env: &ProcessEnv,
        secrets,
        workspace: Some(workspace),
    };
    let user = cairn_mcp::user_config_path();
    let mut loaded =
        cairn_mcp::with_builtin_defaults(cairn_mcp::load_all(workspace, user.as_deref(), &vars));
    if !scope.project_trusted(|| false) {
        crate::mcp_trust::hold_untrusted(&mut loaded, workspace);
    }
    if !scope.project_files() {
        let user = cairn_mcp::user_config_path();
        loaded
            .servers
            .retain(|s| !crate::mcp_trust::is_project_server_with(s, user.as_deref()));
    }
    loaded
}

/// How long the first model request waits for the MCP servers to start
/// (`CAIRN_MCP_STARTUP_GRACE_MS`).
pub fn startup_grace() -> Duration {
    let ms = std::env::var("CAIRN_MCP_STARTUP_GRACE_MS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(DEFAULT_GRACE_MS);
    Duration::from_millis(ms)
}

/// `inner` behind the MCP gate of `manager` (when there is one): a client set after the session
/// opened (a provider switch, a role with its own provider) keeps the servers' instructions.
pub fn gated(inner: Arc<dyn LlmClient>, manager: Option<&McpManager>) -> Arc<dyn LlmClient> {
    match manager {
        Some(m) => Arc::new(McpGate {
            inner,
            manager: m.downgrade(),
            waited: Arc::new(AtomicBool::new(true)),
            grace: startup_grace(),
        }),
        None => inner,
    }
}

/// Waits (once, bounded) for starting servers before the session's first LLM request, then
/// hands the request on with the MCP tools as they are now; every request carries the ready
/// servers' instructions at the end of its system message.
struct McpGate {
    inner: Arc<dyn LlmClient>,
    manager: WeakMcpManager,
    waited: Arc<AtomicBool>,
    grace: Duration,
}

impl LlmClient for McpGate {
    fn secrets(&self) -> Vec<String> {
        self.inner.secrets()
    }

    fn stream(
        &self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxStream<'static, LlmChunk> {
        if self.waited.swap(true, Ordering::SeqCst) {
            let mut request = request;
            if let Some(m) = self.manager.upgrade() {
                crate::mcp_instructions::append(&mut request, &m.instructions());
            }
            return self.inner.stream(request, cancel);
        }
        let (inner, manager, grace) = (self.inner.clone(), self.manager.clone(), self.grace);
        futures::stream::once(async move {
            let mut request = request;
            if let Some(m) = manager.upgrade() {
                tokio::select! {
                    _ = m.wait_settled(grace) => {}
                    _ = cancel.cancelled() => {}
                }
                request.tools = with_current_mcp_tools(request.tools, &m);
                crate::mcp_instructions::append(&mut request, &m.instructions());
            }
            inner.stream(request, cancel)
        })
        .flatten()
        .boxed()
    }
}

/// `tools` with the MCP tools replaced by the manager's current set.
fn with_current_mcp_tools(
    tools: Vec<cairn_protocol::ToolSchema>,
    manager: &McpManager,
) -> Vec<cairn_protocol::ToolSchema> {
    let mut scratch = ToolRegistry::new();
    manager.sync_into(&mut scratch);
    let mut out: Vec<_> = tools.into_iter().filter(|t| !is_mcp(&t.name)).collect();
    out.extend(scratch.schemas());
    out
}

fn is_mcp(name: &str) -> bool {
    name.starts_with("mcp__") || name == cairn_mcp::SEARCH_TOOL || name == cairn_mcp::CALL_TOOL
}
