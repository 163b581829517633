#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]
//! Helpers for the integration tests: test-server configs, short timeouts, a registry target,
//! tool calls, and process checks through /proc.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cairn_engine::{ToolContext, ToolError, ToolOutput, ToolRegistry};
use cairn_mcp::{ManagerOptions, McpManager, ServerConfig, TransportConfig};
use tokio_util::sync::CancellationToken;

/// The test server binary.
pub fn server_bin() -> String {
    env!("CARGO_BIN_EXE_cairn-mcp-test-server").to_string()
}

/// A unique marker argument, so a test can find its own server processes in /proc.
pub fn marker() -> String {
    format!(
        "--marker=cairn-test-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

/// A stdio test server named `name` with these faults.
pub fn stdio_server(name: &str, faults: &[&str], extra_args: &[&str]) -> ServerConfig {
    let mut args: Vec<String> = faults.iter().map(|f| format!("--fault={f}")).collect();
    args.extend(extra_args.iter().map(|a| a.to_string()));
    ServerConfig {
        name: name.into(),
        transport: Some(TransportConfig::Stdio {
            program: server_bin(),
            args,
            env: Default::default(),
            cwd: None,
        }),
        enabled: true,
        startup_timeout: None,
        call_timeout: None,
        max_call_timeout: None,
        source: PathBuf::from("(test)"),
        held: None,
    }
}

/// Options with short limits for tests.
pub fn options(workspace: &Path) -> ManagerOptions {
    let mut o = ManagerOptions::new(workspace.to_path_buf());
    o.startup_timeout = Duration::from_secs(10);
    o.call_timeout = Duration::from_secs(10);
    o.max_call_timeout = Duration::from_secs(30);
    o.shutdown_grace = Duration::from_millis(300);
    o.restart_backoff = Duration::from_millis(100);
    o.lazy.mode = cairn_mcp::LazyMode::Off;
    o
}

/// A manager with a registry attached.
pub struct Harness {
    pub manager: McpManager,
    pub registry: Arc<Mutex<ToolRegistry>>,
    pub dir: tempfile::TempDir,
}

impl Harness {
    pub fn new(servers: Vec<ServerConfig>, tweak: impl FnOnce(&mut ManagerOptions)) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(dir.path());
        tweak(&mut o);
        let manager = McpManager::new(servers, o);
        let registry = Arc::new(Mutex::new(ToolRegistry::new()));
        manager.attach(registry.clone());
        Harness {
            manager,
            registry,
            dir,
        }
    }

    pub fn names(&self) -> Vec<String> {
        self.registry.lock().unwrap().names()
    }

    pub fn ctx(&self) -> ToolContext {
        ToolContext::new(
            self.dir.path().to_path_buf(),
            self.dir.path().to_path_buf(),
            "call-1",
            CancellationToken::new(),
        )
    }

    /// Calls a registered tool the way the engine does.
    pub async fn call(&self, name: &str, args: serde_json::Value) -> Result<ToolOutput, ToolError> {
        let handle = self
            .registry
            .lock()
            .unwrap()
            .get(name)
            .map(|t| t.handle.clone());
        let Some(handle) = handle else {
            panic!("{name} is not registered: {:?}", self.names());
        };
        handle.execute(args, self.ctx()).await
    }

    pub fn pid(&self, server: &str) -> Option<u32> {
        self.manager
            .status()
            .into_iter()
            .find(|s| s.name == server)
            .and_then(|s| s.pid)
    }
}

pub use cairn_testkit::process::{alive, eventually, processes_with};
