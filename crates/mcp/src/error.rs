//! Why an MCP server could not be configured, started, listed or used.

/// An MCP server failure; its text is the reason shown in server status and listings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerError {
    /// The server could not be started or connected (spawn, handshake, startup deadline,
    /// exit during startup).
    #[error("{0}")]
    Start(String),
    /// A transport setting (URL, header, HTTP client) is unusable.
    #[error("{0}")]
    Transport(String),
    /// A `tools/list` reply or one of its entries is unusable.
    #[error("{0}")]
    Listing(String),
    /// A variable or secret in the config could not be resolved.
    #[error("{0}")]
    Config(String),
    /// The server is disabled or cannot run here.
    #[error("{0}")]
    Unavailable(String),
    /// The manager or the server was closed.
    #[error("{0}")]
    Closed(String),
    /// The HTTP server wants a login (OAuth) that Cairn does not have or that expired.
    #[error("{0}")]
    LoginNeeded(String),
}

impl ServerError {
    /// The same kind of error with its text changed by `f` (e.g. the server's stderr added).
    pub fn map_reason(self, f: impl FnOnce(String) -> String) -> ServerError {
        match self {
            ServerError::Start(r) => ServerError::Start(f(r)),
            ServerError::Transport(r) => ServerError::Transport(f(r)),
            ServerError::Listing(r) => ServerError::Listing(f(r)),
            ServerError::Config(r) => ServerError::Config(f(r)),
            ServerError::Unavailable(r) => ServerError::Unavailable(f(r)),
            ServerError::Closed(r) => ServerError::Closed(f(r)),
            ServerError::LoginNeeded(r) => ServerError::LoginNeeded(f(r)),
        }
    }
}
