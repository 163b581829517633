//! Shared helpers for the integration tests: a temp workspace and tool calls through `Tool`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_engine::{ToolContext, ToolError, ToolHandle, ToolOutput};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// A temporary workspace (canonical path) with a sibling directory outside it.
pub struct Ws {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub state: PathBuf,
}

impl Ws {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let root = base.join("ws");
        let outside = base.join("outside");
        let state = base.join("state");
        for d in [&root, &outside, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        Ws {
            _dir: dir,
            root,
            outside,
            state,
        }
    }

    pub fn ctx(&self) -> ToolContext {
        self.ctx_with(CancellationToken::new())
    }

    pub fn ctx_with(&self, cancel: CancellationToken) -> ToolContext {
        ToolContext {
            workspace: self.root.clone(),
            state_dir: self.state.clone(),
            call_id: "call-1".into(),
            cancel,
            host: cairn_engine::ToolHost::detached(),
        }
    }

    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        p
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.join(rel)).unwrap()
    }

    pub async fn call(&self, tool: &ToolHandle, args: Value) -> Result<ToolOutput, ToolError> {
        tool.execute(args, self.ctx()).await
    }
}

/// The core tool called `name` (tools from one `core_tools()` call share a task registry).
pub fn tool(tools: &[ToolHandle], name: &str) -> ToolHandle {
    tools
        .iter()
        .find(|t| t.schema().name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
        .clone()
}

pub use cairn_testkit::process::{alive, gone_within};

/// The first line of `text` that parses as a pid.
pub fn first_pid(text: &str) -> u32 {
    text.lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {text:?}"))
}

pub fn exists(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok()
}

/// A session over `ws` with these tools, approver and mode, driven by `llm`.
pub fn session(
    ws: &Ws,
    llm: &cairn_engine::testing::FakeLlm,
    tools: Vec<ToolHandle>,
    approver: std::sync::Arc<dyn cairn_engine::Approver>,
    mode: cairn_protocol::Mode,
) -> cairn_engine::Session {
    let mut config =
        cairn_engine::EngineConfig::new(ws.root.clone(), ws.state.clone(), "fake-model");
    config.mode = mode;
    let mut registry = cairn_engine::ToolRegistry::new();
    registry.register_all(tools);
    cairn_engine::Session::builder(config, std::sync::Arc::new(llm.clone()))
        .tools(registry)
        .approver(approver)
        .build()
}

/// Collects a turn's events, failing if it takes longer than 60 s.
pub async fn collect(mut s: cairn_engine::EventStream) -> Vec<cairn_protocol::Event> {
    let mut out = Vec::new();
    let r = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(e) = s.recv().await {
            out.push(e);
        }
    })
    .await;
    assert!(
        r.is_ok(),
        "turn did not end in time; events so far: {out:?}"
    );
    out
}

/// The tool results the LLM saw in its last request, by tool name.
pub fn tool_results(llm: &cairn_engine::testing::FakeLlm) -> Vec<(String, String)> {
    llm.requests()
        .last()
        .map(|r| {
            r.messages
                .iter()
                .filter_map(|m| match m {
                    cairn_protocol::Message::Tool(t) => Some((t.name.clone(), t.content.clone())),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A thread exchanging a folder and a symbolic link (`renameat2(RENAME_EXCHANGE)`) as fast as
/// it can, so the name is always there, a folder one moment and a link the next.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub struct LinkFlipper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<usize>,
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
impl LinkFlipper {
    /// Creates the link `alt` to `to`, then keeps exchanging it with the folder `dir`.
    pub fn start(dir: &Path, alt: &Path, to: &Path) -> Self {
        use nix::fcntl::{renameat2, RenameFlags, AT_FDCWD};
        use std::sync::atomic::Ordering;
        std::os::unix::fs::symlink(to, alt).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (dir, alt, flag) = (dir.to_path_buf(), alt.to_path_buf(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut flips = 0usize;
            while !flag.load(Ordering::Relaxed) {
                renameat2(AT_FDCWD, &dir, AT_FDCWD, &alt, RenameFlags::RENAME_EXCHANGE).unwrap();
                flips += 1;
            }
            flips
        });
        LinkFlipper { stop, thread }
    }

    /// Stops flipping; returns how many exchanges were made.
    pub fn stop(self) -> usize {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}
