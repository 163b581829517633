//! The one error type of every command: the runtime's [`Problem`] (a stable code the page
//! can branch on and localise, the message shown when it has no better text, what it may
//! offer to do), with the conversions only the app has (Tauri, its tasks).

use cairn_runtime::problem::Problem;
pub use cairn_runtime::problem::{ProblemAction, ProblemCode as ErrorCode};
use serde::Serialize;

/// A failed command, as the page receives it (the runtime's [`Problem`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[serde(transparent)]
#[error(transparent)]
pub struct IpcError(pub Problem);

impl std::ops::Deref for IpcError {
    type Target = Problem;
    fn deref(&self) -> &Problem {
        &self.0
    }
}

impl IpcError {
    /// An error of `code` explained by `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> IpcError {
        IpcError(Problem::new(code, message))
    }

    /// The request is wrong.
    pub fn invalid(message: impl Into<String>) -> IpcError {
        IpcError::new(ErrorCode::Invalid, message)
    }

    /// What the request names does not exist.
    pub fn not_found(message: impl Into<String>) -> IpcError {
        IpcError::new(ErrorCode::NotFound, message)
    }

    /// Something failed that the user cannot fix here.
    pub fn internal(message: impl std::fmt::Display) -> IpcError {
        IpcError::new(ErrorCode::Internal, message.to_string())
    }

    /// The window has no workspace open.
    pub fn no_workspace() -> IpcError {
        IpcError::new(
            ErrorCode::NoWorkspace,
            "No workspace is open in this window.",
        )
    }

    /// The window has no session open.
    pub fn no_session() -> IpcError {
        IpcError::new(
            ErrorCode::NoSession,
            "No session is open in this window: open a workspace and start a chat.",
        )
    }

    /// A turn is running.
    pub fn busy() -> IpcError {
        IpcError::new(ErrorCode::Busy, "A turn is running: stop it first (Esc).")
    }
}

/// What a command returns.
pub type IpcResult<T> = Result<T, IpcError>;

/// The runtime's errors reach the page as the runtime words them ([`Problem`]).
macro_rules! as_problem {
    ($($t:ty),* $(,)?) => {
        $(impl From<$t> for IpcError {
            fn from(e: $t) -> Self {
                IpcError(e.into())
            }
        })*
    };
}

as_problem! {
    Problem,
    cairn_runtime::host::HostError,
    cairn_runtime::host::SubmitError,
    cairn_runtime::RuntimeError,
    cairn_runtime::worktrees::Error,
    cairn_runtime::StoreError,
    cairn_runtime::timeline::CheckpointError,
    cairn_runtime::timeline::TimelineError,
    cairn_runtime::attach::AttachError,
    cairn_providers::secrets::SecretError,
    crate::settings::SettingsError,
    cairn_tools::terminal::TerminalError,
}

impl From<tokio::task::JoinError> for IpcError {
    fn from(e: tokio::task::JoinError) -> Self {
        IpcError::internal(format!("a background task failed: {e}"))
    }
}

impl From<tauri::Error> for IpcError {
    fn from(e: tauri::Error) -> Self {
        IpcError::new(ErrorCode::Unavailable, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_page_gets_a_code_and_a_message() {
        let v = serde_json::to_value(IpcError::busy()).unwrap();
        assert_eq!(v["code"], "busy");
        assert_eq!(v["message"], "A turn is running: stop it first (Esc).");
        let blocked: IpcError = cairn_runtime::host::HostError::Blocked("no API key".into()).into();
        assert_eq!(blocked.code, ErrorCode::Blocked);
        assert_eq!(blocked.to_string(), "no API key");
    }
}
