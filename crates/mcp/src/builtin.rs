//! Servers built into Cairn (seed §15.6): in-process, listed and called like any other
//! server, disabled cleanly when what they need is missing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::{ToolContext, ToolError};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::json;

use crate::config::{LoadedConfig, ServerConfig, TransportConfig};

/// A built-in server.
#[async_trait]
pub trait BuiltinServer: Send + Sync {
    /// `Err(reason)` when it cannot run here (the server is then `disabled` with that reason).
    fn availability(&self) -> Result<(), String>;
    /// Its tools.
    fn tools(&self) -> Vec<Tool>;
    /// Runs one call.
    async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        ctx: &ToolContext,
    ) -> Result<CallToolResult, ToolError>;
}

/// The built-in servers' default entries, added where the user has no server of that name
/// (`{"name": "ocr", "enabled": false}` turns one off).
pub fn with_builtin_defaults(mut loaded: LoadedConfig) -> LoadedConfig {
    loaded.fill(LoadedConfig {
        servers: vec![ServerConfig {
            name: "ocr".into(),
            transport: Some(TransportConfig::Builtin { kind: "ocr".into() }),
            enabled: true,
            startup_timeout: None,
            call_timeout: None,
            max_call_timeout: None,
            source: PathBuf::from("(built in)"),
        }],
        warnings: Vec::new(),
    });
    loaded
}

/// The implementation of a built-in kind, if there is one.
pub fn builtin_for(
    kind: &str,
    tesseract: Option<&Path>,
) -> Option<std::sync::Arc<dyn BuiltinServer>> {
    match kind {
        "ocr" => Some(std::sync::Arc::new(Ocr::new(tesseract))),
        _ => None,
    }
}

/// OCR through the `tesseract` command: `recognize {path, lang?}`.
pub struct Ocr {
    program: Option<PathBuf>,
}

impl Ocr {
    /// Uses `tesseract` (an explicit path, else the one on `PATH`).
    pub fn new(explicit: Option<&Path>) -> Self {
        let program = match explicit {
            Some(p) => Some(p.to_path_buf()).filter(|p| p.is_file()),
            None => find_on_path("tesseract"),
        };
        Ocr { program }
    }
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

#[async_trait]
impl BuiltinServer for Ocr {
    fn availability(&self) -> Result<(), String> {
        match &self.program {
            Some(_) => Ok(()),
            None => Err("tesseract is not installed, so built-in OCR is off (install tesseract-ocr to enable it)".into()),
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Image file (PNG, JPEG, TIFF, …), relative to the workspace."},
                "lang": {"type": "string", "description": "Tesseract language code(s), e.g. `eng` or `eng+deu`."}
            },
            "required": ["path"]
        });
        let obj = schema.as_object().cloned().unwrap_or_default();
        vec![Tool::new(
            "recognize",
            "Extracts the text of an image file with OCR (tesseract).",
            obj,
        )]
    }

    async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        ctx: &ToolContext,
    ) -> Result<CallToolResult, ToolError> {
        if tool != "recognize" {
            return Err(ToolError::InvalidArguments(format!(
                "the OCR server has no tool `{tool}`"
            )));
        }
        let Some(program) = &self.program else {
            return Err(ToolError::Failed("tesseract is not installed".into()));
        };
        let rel = arguments
            .get("path")
            .and_then(|v| v.as_str())
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| ToolError::InvalidArguments("`path` (string) is required".into()))?;
        let path = ctx.workspace.join(rel);
        if !path.is_file() {
            return Err(ToolError::NotFound(path.display().to_string()));
        }
        let mut cmd = tokio::process::Command::new(program);
        cmd.arg(&path).arg("stdout").kill_on_drop(true);
        if let Some(lang) = arguments
            .get("lang")
            .and_then(|v| v.as_str())
            .filter(|l| !l.is_empty())
        {
            cmd.arg("-l").arg(lang);
        }
        let out = tokio::select! {
            r = tokio::time::timeout(Duration::from_secs(120), cmd.output()) => match r {
                Ok(Ok(o)) => o,
                Ok(Err(e)) => return Err(ToolError::io("cannot run tesseract", e)),
                Err(_) => return Err(ToolError::Timeout { ms: 120_000, detail: " (tesseract)".into() }),
            },
            _ = ctx.cancel.cancelled() => return Err(ToolError::Interrupted),
        };
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                "tesseract failed ({}): {}",
                out.status,
                err.trim()
            ))]));
        }
        let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(CallToolResult::success(vec![ContentBlock::text(
            if text.is_empty() {
                "(no text found)".to_string()
            } else {
                text
            },
        )]))
    }
}
