//! Why a tool call failed: the error every tool returns and the model sees.

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
