//! The one error type of every command: a stable code the page can branch on and localise,
//! and the message shown when it has no better text for the code.

use serde::Serialize;
use ts_rs::TS;

/// What kind of failure a command reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum ErrorCode {
    /// The window has no workspace open.
    NoWorkspace,
    /// The window has no session open.
    NoSession,
    /// A turn is running; stop it first.
    Busy,
    /// Turns cannot run now (no key, no model); the message says why.
    Blocked,
    /// The request itself is wrong (empty message, bad path, unknown name).
    Invalid,
    /// What the request names does not exist (session, rule, attachment).
    NotFound,
    /// The session is open in another window.
    OpenElsewhere,
    /// The user's configuration is unusable (workspace, provider, settings).
    Config,
    /// Session or settings files could not be read or written.
    Storage,
    /// The checkpoint store refused (restore, diff).
    Checkpoints,
    /// A platform facility is missing (clipboard, window, dialog).
    Unavailable,
    /// Refused to protect the user's work (a worktree with changes neither applied nor
    /// committed); the message names them and the request may be repeated with force.
    Refused,
    /// The folder is, or is inside, a repository's git directory; `openInstead` names the
    /// repository's work tree when it has one.
    GitDirectory,
    /// Something failed that the user cannot fix here.
    Internal,
}

/// A failed command, as the page receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
#[error("{message}")]
pub struct IpcError {
    /// The kind of failure.
    pub code: ErrorCode,
    /// A readable explanation (English; the page may show its own text for the code).
    pub message: String,
    /// A folder the page may offer to open instead (the work tree of a refused git
    /// directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub open_instead: Option<String>,
}

impl IpcError {
    /// An error of `code` explained by `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> IpcError {
        IpcError {
            code,
            message: message.into(),
            open_instead: None,
        }
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

impl From<cairn_runtime::host::HostError> for IpcError {
    fn from(e: cairn_runtime::host::HostError) -> Self {
        use cairn_runtime::host::HostError as H;
        use cairn_runtime::permissions::ProjectRuleError as P;
        let code = match &e {
            H::Runtime(r) => return from_runtime(r),
            H::Store(_) => ErrorCode::Storage,
            H::Closed(_) => ErrorCode::NoSession,
            H::Blocked(_) => ErrorCode::Blocked,
            H::AlreadyOpen(_) => ErrorCode::OpenElsewhere,
            H::NotPending(_) => ErrorCode::NotFound,
            H::NoAllowance(_) | H::ProjectRule(P::Unkeepable(_)) => ErrorCode::Invalid,
            H::ProjectRule(P::Runtime(r)) => return from_runtime(r),
        };
        IpcError::new(code, e.to_string())
    }
}

impl From<cairn_runtime::host::SubmitError> for IpcError {
    fn from(e: cairn_runtime::host::SubmitError) -> Self {
        use cairn_runtime::host::SubmitError as S;
        match e {
            S::Host(h) => h.into(),
            S::Store(s) => s.into(),
            S::Attach(a) => a.into(),
            S::Command(_) | S::Mention(_) => IpcError::invalid(e.to_string()),
        }
    }
}

impl From<cairn_runtime::RuntimeError> for IpcError {
    fn from(e: cairn_runtime::RuntimeError) -> Self {
        from_runtime(&e)
    }
}

/// A runtime error as the page receives it; a refused git directory offers its work tree.
fn from_runtime(e: &cairn_runtime::RuntimeError) -> IpcError {
    use cairn_runtime::RuntimeError as R;
    match e {
        R::Config(_) => IpcError::new(ErrorCode::Config, e.to_string()),
        R::Store(_) => IpcError::new(ErrorCode::Storage, e.to_string()),
        R::GitDir(refusal) => IpcError {
            code: ErrorCode::GitDirectory,
            message: e.to_string(),
            open_instead: refusal.work_tree.as_ref().map(|w| w.display().to_string()),
        },
    }
}

impl From<cairn_runtime::worktrees::Error> for IpcError {
    fn from(e: cairn_runtime::worktrees::Error) -> Self {
        use cairn_runtime::worktrees::Error as W;
        let code = match &e {
            W::Usage(_) => ErrorCode::Invalid,
            W::Refused(_) | W::Unapplied { .. } | W::NotKept { .. } => ErrorCode::Refused,
            _ => ErrorCode::Storage,
        };
        // The app's own words (its buttons, not the CLI's commands and flags).
        if let W::Unapplied { name, files, days } = &e {
            return IpcError::new(
                code,
                format!(
                    "Worktree {name} has changes neither applied nor committed: {}. Apply them \
                     to the folder, commit them on the branch, or remove it anyway (its last \
                     state stays restorable for {days} days).",
                    cairn_runtime::worktrees::listed(files)
                ),
            );
        }
        if let W::NotKept { name, files } = &e {
            return IpcError::new(
                code,
                format!(
                    "Worktree {name} holds what Cairn cannot keep when removing it: {}. Move it \
                     out of the worktree, or remove it anyway to lose it (its other files stay \
                     restorable).",
                    cairn_runtime::worktrees::listed(files)
                ),
            );
        }
        IpcError::new(code, e.to_string())
    }
}

impl From<cairn_runtime::StoreError> for IpcError {
    fn from(e: cairn_runtime::StoreError) -> Self {
        IpcError::new(ErrorCode::Storage, e.to_string())
    }
}

impl From<cairn_runtime::timeline::CheckpointError> for IpcError {
    fn from(e: cairn_runtime::timeline::CheckpointError) -> Self {
        IpcError::new(ErrorCode::Checkpoints, e.to_string())
    }
}

impl From<cairn_runtime::timeline::TimelineError> for IpcError {
    fn from(e: cairn_runtime::timeline::TimelineError) -> Self {
        let code = match &e {
            cairn_runtime::timeline::TimelineError::Outside(_) => ErrorCode::Invalid,
            cairn_runtime::timeline::TimelineError::Vcs(_) => ErrorCode::Checkpoints,
        };
        IpcError::new(code, e.to_string())
    }
}

impl From<cairn_runtime::attach::AttachError> for IpcError {
    fn from(e: cairn_runtime::attach::AttachError) -> Self {
        IpcError::invalid(e.to_string())
    }
}

impl From<cairn_providers::secrets::SecretError> for IpcError {
    fn from(e: cairn_providers::secrets::SecretError) -> Self {
        IpcError::new(ErrorCode::Unavailable, e.to_string())
    }
}

impl From<crate::settings::SettingsError> for IpcError {
    fn from(e: crate::settings::SettingsError) -> Self {
        IpcError::new(ErrorCode::Storage, e.to_string())
    }
}

impl From<cairn_tools::terminal::TerminalError> for IpcError {
    fn from(e: cairn_tools::terminal::TerminalError) -> Self {
        IpcError::new(ErrorCode::Unavailable, e.to_string())
    }
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
