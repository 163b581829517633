#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]
//! Shared helpers for the engine's integration tests.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cairn_engine::testing::{FakeLlm, FnTool};
use cairn_engine::{EngineConfig, EventStream, RetryPolicy, Session, ToolOutput, ToolRegistry};
use cairn_protocol::{Event, Mode, RiskLevel, ToolMeta};

/// A temp dir that is removed on drop.
pub struct TempDir(pub PathBuf);
impl TempDir {
    pub fn new() -> Self {
        let p = std::env::temp_dir().join(format!("cairn-engine-test-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn config(dir: &TempDir, mode: Mode) -> EngineConfig {
    let mut c = EngineConfig::new(dir.0.clone(), dir.0.join(".state"), "fake-model");
    c.mode = mode;
    c.retry = RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_secs(2),
    };
    c
}

pub fn session(dir: &TempDir, mode: Mode, llm: &FakeLlm, registry: ToolRegistry) -> Session {
    Session::builder(config(dir, mode), Arc::new(llm.clone()))
        .tools(registry)
        .build()
}

/// Collects a turn's events, failing if it takes longer than 20 s.
pub async fn collect(mut s: EventStream) -> Vec<Event> {
    let mut out = Vec::new();
    let r = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(e) = s.recv().await {
            out.push(e);
        }
    })
    .await;
    assert!(
        r.is_ok(),
        "turn did not end in time; events so far: {:?}",
        types(&out)
    );
    out
}

pub fn types(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.type_name()).collect()
}

pub fn turn_end(events: &[Event]) -> &cairn_protocol::TurnEnd {
    match events.last() {
        Some(Event::TurnEnd(t)) => t,
        other => panic!("last event is not turn_end: {other:?}"),
    }
}

pub fn finished(events: &[Event]) -> Vec<&cairn_protocol::ToolFinished> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::ToolFinished(f) => Some(f),
            _ => None,
        })
        .collect()
}

/// A read-only tool `wait` that finishes once the returned gate is notified (a test acts
/// while a turn runs: steering, interrupts).
pub fn gated_wait_tool() -> (Arc<FnTool>, Arc<tokio::sync::Notify>) {
    let gate = Arc::new(tokio::sync::Notify::new());
    let g = gate.clone();
    let tool = FnTool::new("wait", ToolMeta::read_only("t"), move |_, _| {
        let g = g.clone();
        async move {
            g.notified().await;
            Ok(ToolOutput::text("waited"))
        }
    });
    (tool, gate)
}

/// A read-only tool that echoes its arguments.
pub fn echo_tool(name: &str) -> Arc<FnTool> {
    FnTool::new(name, ToolMeta::read_only("test"), |args, _ctx| async move {
        Ok(ToolOutput::text(format!("echo {args}")))
    })
}

/// A mutating tool that writes `content` to `path` in the workspace.
pub fn write_tool() -> Arc<FnTool> {
    FnTool::new(
        "write_file",
        ToolMeta::mutating("file", RiskLevel::Medium, &["write"]),
        |args, ctx| async move {
            let path = args["path"].as_str().unwrap_or("x").to_string();
            std::fs::write(
                ctx.workspace.join(&path),
                args["content"].as_str().unwrap_or(""),
            )
            .map_err(|e| cairn_engine::ToolError::io("write", e))?;
            Ok(ToolOutput {
                content: "written".into(),
                produced_files: vec![path],
                images: Vec::new(),
                stale_files: Vec::new(),
            })
        },
    )
}
