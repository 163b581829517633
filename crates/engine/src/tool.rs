//! The tool contract: typed metadata, JSON schema, cancellable execution.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use cairn_policy::PermissionSubject;
use cairn_protocol::{ContentPart, ToolMeta, ToolSchema};
use tokio_util::sync::CancellationToken;

use crate::host::ToolHost;

/// Everything a tool call may use besides its arguments.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// Workspace root: the permission boundary (absolute, canonical).
    pub workspace: PathBuf,
    /// Cairn's state dir for this session (tool results, task logs).
    pub state_dir: PathBuf,
    /// Tool call id.
    pub call_id: String,
    /// Cancelled when the turn is interrupted or the call times out.
    pub cancel: CancellationToken,
    /// The session: partial output, questions, plans, directory grants, todos.
    pub host: ToolHost,
}

impl ToolContext {
    /// A context with a detached host (no session behind it).
    pub fn new(
        workspace: PathBuf,
        state_dir: PathBuf,
        call_id: impl Into<String>,
        cancel: CancellationToken,
    ) -> Self {
        ToolContext {
            workspace,
            state_dir,
            call_id: call_id.into(),
            cancel,
            host: ToolHost::detached(),
        }
    }
}

/// A successful tool result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutput {
    /// Text handed to the model.
    pub content: String,
    /// Workspace-relative paths this call created or changed.
    pub produced_files: Vec<String>,
    /// Image parts handed back to the model with the text (`read_image`); usually empty.
    pub images: Vec<ContentPart>,
}

impl ToolOutput {
    /// A result with text only.
    pub fn text(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            produced_files: Vec::new(),
            images: Vec::new(),
        }
    }

    /// A result with text and image parts.
    pub fn with_images(content: impl Into<String>, images: Vec<ContentPart>) -> Self {
        ToolOutput {
            images,
            ..ToolOutput::text(content)
        }
    }
}

/// Why a tool call failed; the model sees `{error, error_type}`.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// Arguments missing, of the wrong type, or not valid JSON.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// A path resolves outside the workspace.
    #[error("path is outside the workspace: {0}")]
    OutsideWorkspace(String),
    /// File or directory not found.
    #[error("not found: {0}")]
    NotFound(String),
    /// The call ran past its time limit; `detail` says what was cleaned up and what it printed.
    #[error("timed out after {ms} ms{detail}")]
    Timeout {
        /// The limit that was hit.
        ms: u64,
        /// Extra text for the model (partial output), starting with a separator; may be empty.
        detail: String,
    },
    /// The call was interrupted.
    #[error("interrupted")]
    Interrupted,
    /// An I/O failure.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// Any other failure, with a message for the model.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// The `error_type` the model sees.
    pub fn error_type(&self) -> &'static str {
        match self {
            ToolError::InvalidArguments(_) => "invalid_arguments",
            ToolError::OutsideWorkspace(_) => "outside_workspace",
            ToolError::NotFound(_) => "not_found",
            ToolError::Timeout { .. } => "timeout",
            ToolError::Interrupted => "interrupted",
            ToolError::Io { .. } => "io_error",
            ToolError::Failed(_) => "failed",
        }
    }

    /// An I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        ToolError::Io {
            context: context.into(),
            source,
        }
    }
}

/// A tool the model can call.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Name, description and JSON Schema of the arguments.
    fn schema(&self) -> ToolSchema;
    /// Category, risk and approval metadata.
    fn meta(&self) -> ToolMeta;
    /// The paths a call with `args` would create, change, move or delete, when that is more
    /// than its `path` argument (a patch names its files inside its text). The permission
    /// engine checks every one against the workspace, protected folders and path rules.
    /// `None` (the default): the `path` argument is the only target.
    fn write_targets(&self, _args: &serde_json::Value) -> Option<Vec<String>> {
        None
    }
    /// What a call with `args` asks permission for: the command it runs, the URL it reaches,
    /// the paths it reads or writes, and whether the tool runs commands at all (only then is
    /// "always allow this command" offered). The permission engine and the rules match this,
    /// never argument names. The default reads the conventional names for the tool's
    /// capability tags ([`PermissionSubject::from_arguments`]); built-in tools name theirs.
    fn permission_subject(&self, args: &serde_json::Value) -> PermissionSubject {
        PermissionSubject::from_arguments(&self.meta().capabilities, args, self.write_targets(args))
    }
    /// Runs one call. Long-running tools must stop promptly when `ctx.cancel` fires: one still
    /// running a second after the user interrupted is abandoned. File changes go through
    /// [`ToolContext::write_files`], so an abandoned call writes nothing more and what it wrote
    /// is still reported.
    async fn execute(
        &self,
        args: serde_json::Value,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError>;
}

/// A shared tool handle.
pub type ToolHandle = Arc<dyn Tool>;

/// Parses typed arguments out of a JSON value, mapping failures to [`ToolError::InvalidArguments`].
pub fn parse_args<T: serde::de::DeserializeOwned>(args: serde_json::Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|e| ToolError::InvalidArguments(e.to_string()))
}
