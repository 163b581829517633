//! Servers built into Cairn (seed §15.6): in-process, listed and called like any other
//! server, disabled cleanly when what they need is missing.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use cairn_engine::{ToolContext, ToolError};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool};
use serde_json::json;

use crate::config::{LoadedConfig, ServerConfig, TransportConfig};
use crate::ocr_model::OcrModel;

/// A built-in server.
#[async_trait]
pub trait BuiltinServer: Send + Sync {
    /// `Err(reason)` when it cannot run here (the server is then `disabled` with that reason).
    fn availability(&self) -> Result<(), crate::ServerError>;
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
            held: None,
        }],
        warnings: Vec::new(),
    });
    loaded
}

/// The implementation of a built-in kind, if there is one. `tesseract`: explicit program
/// (else `PATH`); `model`: the multimodal fallback of OCR.
pub fn builtin_for(
    kind: &str,
    tesseract: Option<&Path>,
    model: Option<OcrModel>,
) -> Option<std::sync::Arc<dyn BuiltinServer>> {
    match kind {
        "ocr" => Some(std::sync::Arc::new(Ocr::new(tesseract, model))),
        _ => None,
    }
}

/// How the OCR server reads text.
enum OcrBackend {
    /// The `tesseract` command (images and, with its PDF-capable builds, more).
    Tesseract(PathBuf),
    /// A multimodal model (PNG, JPEG, GIF, WebP).
    Model(OcrModel),
    /// Neither is available: the server is disabled.
    None,
}

/// `rel` resolved (links followed) to a file inside the workspace or a folder granted to the
/// session, and not kept from reading by a deny rule: the OCR server reads only what the
/// file tools could.
fn inside_readable(ctx: &ToolContext, rel: &str) -> Result<PathBuf, ToolError> {
    let joined = ctx.workspace.join(rel);
    let path = match joined.canonicalize() {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::NotFound(joined.display().to_string()))
        }
        Err(e) => return Err(ToolError::Failed(format!("{}: {e}", joined.display()))),
    };
    let workspace = ctx
        .workspace
        .canonicalize()
        .unwrap_or_else(|_| ctx.workspace.clone());
    let granted = ctx
        .host
        .granted_directories()
        .into_iter()
        .filter_map(|(d, _)| Path::new(&d).canonicalize().ok());
    let inside = path.starts_with(&workspace) || granted.into_iter().any(|d| path.starts_with(d));
    if !inside {
        return Err(ToolError::OutsideWorkspace(format!(
            "{rel} is outside the workspace (it resolves to {}); OCR reads only workspace files",
            path.display()
        )));
    }
    if let Some(rule) = ctx.host.read_denials().denied(&path) {
        return Err(ToolError::Failed(format!(
            "{rel} is kept from reading by the rule `{}`",
            rule.text
        )));
    }
    if !path.is_file() {
        return Err(ToolError::NotFound(path.display().to_string()));
    }
    Ok(path)
}

/// OCR (`recognize {path, lang?}`) through `tesseract` when it is installed, else through a
/// multimodal model, else disabled with the reason.
pub struct Ocr {
    backend: OcrBackend,
}

impl Ocr {
    /// Uses `tesseract` (an explicit path, else the one in the system folders), else `model`.
    pub fn new(explicit: Option<&Path>, model: Option<OcrModel>) -> Self {
        let program = match explicit {
            Some(p) => Some(p.to_path_buf()).filter(|p| p.is_file()),
            None => find_in_system("tesseract"),
        };
        let model = model.filter(|m| !m.model.trim().is_empty());
        let backend = match (program, model) {
            (Some(p), _) => OcrBackend::Tesseract(p),
            (None, Some(m)) => OcrBackend::Model(m),
            (None, None) => OcrBackend::None,
        };
        Ocr { backend }
    }

    /// `tesseract`, `model <id>` or `none`: what recognises text.
    pub fn backend_name(&self) -> String {
        match &self.backend {
            OcrBackend::Tesseract(_) => "tesseract".into(),
            OcrBackend::Model(m) => format!("model {}", m.model),
            OcrBackend::None => "none".into(),
        }
    }
}

/// `name` in the system folders, never on `PATH`: `~/.cargo/bin`, `~/.local/bin` or a
/// workspace folder on it may hold a program planted under that name.
fn find_in_system(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/usr/local/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

#[async_trait]
impl BuiltinServer for Ocr {
    fn availability(&self) -> Result<(), crate::ServerError> {
        match &self.backend {
            OcrBackend::None => Err(crate::ServerError::Unavailable(
                "built-in OCR is off: tesseract is not installed and no multimodal model is \
                 configured (install tesseract-ocr, or use a vision-capable session model or \
                 set CAIRN_VISION_MODEL)"
                    .into(),
            )),
            _ => Ok(()),
        }
    }

    fn tools(&self) -> Vec<Tool> {
        let by = match &self.backend {
            OcrBackend::Model(m) => format!("the multimodal model {}", m.model),
            _ => "tesseract".into(),
        };
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Image file (PNG, JPEG, TIFF, …), relative to the workspace."},
                "lang": {"type": "string", "description": "Tesseract language code(s), e.g. `eng` or `eng+deu` (ignored by the model fallback)."}
            },
            "required": ["path"]
        });
        let obj = schema.as_object().cloned().unwrap_or_default();
        vec![Tool::new(
            "recognize",
            format!("Extracts the text of an image file with OCR ({by})."),
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
        let rel = arguments
            .get("path")
            .and_then(|v| v.as_str())
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| ToolError::InvalidArguments("`path` (string) is required".into()))?;
        let path = inside_readable(ctx, rel)?;
        let lang = arguments
            .get("lang")
            .and_then(|v| v.as_str())
            .filter(|l| !l.is_empty());
        match &self.backend {
            OcrBackend::Tesseract(program) => tesseract(program, &path, lang, ctx).await,
            OcrBackend::Model(m) => {
                let text = m.recognize(&path, rel, ctx).await?;
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
            }
            OcrBackend::None => Err(ToolError::Failed(
                "built-in OCR is off: neither tesseract nor a multimodal model is available".into(),
            )),
        }
    }
}

/// `tesseract IMAGE stdout [-l LANG]`, bounded to two minutes.
async fn tesseract(
    program: &Path,
    path: &Path,
    lang: Option<&str>,
    ctx: &ToolContext,
) -> Result<CallToolResult, ToolError> {
    // Inside the session's sandbox when there is one, with none of Cairn's environment (API
    // keys): the image is untrusted input.
    let mut argv = vec![
        program.display().to_string(),
        path.display().to_string(),
        "stdout".to_string(),
    ];
    if let Some(lang) = lang {
        argv.extend(["-l".to_string(), lang.to_string()]);
    }
    let (mut cmd, wrapped) = ctx.host.helper_command(argv)?;
    if let Some(data) = std::env::var_os("TESSDATA_PREFIX") {
        cmd.env("TESSDATA_PREFIX", data);
    }
    let _guard = wrapped.guard;
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
