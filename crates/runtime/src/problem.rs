//! One typed error model for every face: what went wrong as a stable code a face can branch
//! on and word in its own language, a readable message, and what the face may offer to do
//! about it (retry, open settings, choose a model, free space, show the log, open another
//! folder). The runtime's errors map to it here, once; the app sends it to its page as is,
//! the server and the CLI word it their way.

use serde::Serialize;
use ts_rs::TS;

use crate::host::{HostError, SubmitError};

/// What kind of failure a face reports (the app's `ErrorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/", rename = "ErrorCode")]
pub enum ProblemCode {
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

/// What a face may offer the user to do about a problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum ProblemAction {
    /// Try the same again (a transient failure).
    Retry,
    /// Open the settings (a key, a model, a provider, a setting to fix).
    OpenSettings,
    /// Choose another model.
    ChooseModel,
    /// Free disk space (a store could not be written).
    FreeSpace,
    /// Show the log (something failed that the user cannot fix here).
    ShowLog,
    /// Open the folder in [`Problem::open_instead`].
    OpenFolder,
}

/// A failure, as a face receives it (the app's page gets it as `IpcError`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/", rename = "IpcError")]
#[error("{message}")]
pub struct Problem {
    /// The kind of failure.
    pub code: ProblemCode,
    /// A readable explanation (English; a face may show its own text for the code).
    pub message: String,
    /// A folder the face may offer to open instead (the work tree of a refused git
    /// directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub open_instead: Option<String>,
    /// What the face may offer to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub action: Option<ProblemAction>,
}

impl Problem {
    /// A problem of `code` explained by `message`, with the action its code suggests.
    pub fn new(code: ProblemCode, message: impl Into<String>) -> Problem {
        Problem {
            code,
            message: message.into(),
            open_instead: None,
            action: code.action(),
        }
    }

    /// The request is wrong.
    pub fn invalid(message: impl Into<String>) -> Problem {
        Problem::new(ProblemCode::Invalid, message)
    }
}

impl ProblemCode {
    /// The action a problem of this kind suggests, if any.
    pub fn action(self) -> Option<ProblemAction> {
        match self {
            ProblemCode::Blocked | ProblemCode::Config => Some(ProblemAction::OpenSettings),
            ProblemCode::Storage => Some(ProblemAction::FreeSpace),
            ProblemCode::Internal | ProblemCode::Unavailable => Some(ProblemAction::ShowLog),
            ProblemCode::GitDirectory => Some(ProblemAction::OpenFolder),
            _ => None,
        }
    }
}

impl From<HostError> for Problem {
    fn from(e: HostError) -> Self {
        use crate::permissions::ProjectRuleError as P;
        use HostError as H;
        let code = match &e {
            H::Runtime(r) => return from_runtime(r),
            H::Store(_) => ProblemCode::Storage,
            H::Closed(_) => ProblemCode::NoSession,
            H::Blocked(_) => ProblemCode::Blocked,
            H::AlreadyOpen(_) => ProblemCode::OpenElsewhere,
            H::NotPending(_) => ProblemCode::NotFound,
            H::NoAllowance(_) | H::ProjectRule(P::Unkeepable(_)) => ProblemCode::Invalid,
            H::ProjectRule(P::Runtime(r)) => return from_runtime(r),
        };
        Problem::new(code, e.to_string())
    }
}

impl From<SubmitError> for Problem {
    fn from(e: SubmitError) -> Self {
        use SubmitError as S;
        match e {
            S::Host(h) => h.into(),
            S::Store(s) => s.into(),
            S::Attach(a) => a.into(),
            S::Command(_) | S::Mention(_) | S::NotAMessage => Problem::invalid(e.to_string()),
        }
    }
}

impl From<crate::error::RuntimeError> for Problem {
    fn from(e: crate::error::RuntimeError) -> Self {
        from_runtime(&e)
    }
}

/// A runtime error; a refused git directory offers its work tree.
fn from_runtime(e: &crate::error::RuntimeError) -> Problem {
    use crate::error::RuntimeError as R;
    match e {
        R::Config(_) => Problem::new(ProblemCode::Config, e.to_string()),
        R::Store(_) => Problem::new(ProblemCode::Storage, e.to_string()),
        R::GitDir(refusal) => Problem {
            open_instead: refusal.work_tree.as_ref().map(|w| w.display().to_string()),
            ..Problem::new(ProblemCode::GitDirectory, e.to_string())
        },
    }
}

impl From<crate::worktrees::Error> for Problem {
    fn from(e: crate::worktrees::Error) -> Self {
        use crate::worktrees::Error as W;
        let code = match &e {
            W::Usage(_) => ProblemCode::Invalid,
            W::Refused(_) | W::Unapplied { .. } | W::NotKept { .. } => ProblemCode::Refused,
            _ => ProblemCode::Storage,
        };
        // Words for a face with buttons (the CLI says its commands and flags itself).
        if let W::Unapplied { name, files, days } = &e {
            return Problem::new(
                code,
                format!(
                    "Worktree {name} has changes neither applied nor committed: {}. Apply them \
                     to the folder, commit them on the branch, or remove it anyway (its last \
                     state stays restorable for {days} days).",
                    crate::worktrees::listed(files)
                ),
            );
        }
        if let W::NotKept { name, files } = &e {
            return Problem::new(
                code,
                format!(
                    "Worktree {name} holds what Cairn cannot keep when removing it: {}. Move it \
                     out of the worktree, or remove it anyway to lose it (its other files stay \
                     restorable).",
                    crate::worktrees::listed(files)
                ),
            );
        }
        Problem::new(code, e.to_string())
    }
}

/// Errors that are one kind of problem each.
macro_rules! one_kind {
    ($($t:ty => $code:ident),* $(,)?) => {
        $(impl From<$t> for Problem {
            fn from(e: $t) -> Self {
                Problem::new(ProblemCode::$code, e.to_string())
            }
        })*
    };
}

one_kind! {
    crate::store::StoreError => Storage,
    crate::timeline::CheckpointError => Checkpoints,
    crate::attach::AttachError => Invalid,
    cairn_providers::secrets::SecretError => Unavailable,
    crate::face_settings::SettingsError => Storage,
    cairn_tools::terminal::TerminalError => Unavailable,
}

impl From<crate::timeline::TimelineError> for Problem {
    fn from(e: crate::timeline::TimelineError) -> Self {
        let code = match &e {
            crate::timeline::TimelineError::Outside(_) => ProblemCode::Invalid,
            crate::timeline::TimelineError::Vcs(_) => ProblemCode::Checkpoints,
        };
        Problem::new(code, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_problem_has_a_code_a_message_and_what_to_offer() {
        let blocked: Problem = HostError::Blocked("no API key".into()).into();
        assert_eq!(blocked.code, ProblemCode::Blocked);
        assert_eq!(blocked.to_string(), "no API key");
        assert_eq!(blocked.action, Some(ProblemAction::OpenSettings));
        let v = serde_json::to_value(&blocked).unwrap();
        assert_eq!(v["code"], "blocked");
        assert_eq!(v["action"], "open_settings");
        assert!(v.get("openInstead").is_none());
        let closed: Problem = HostError::Closed("s1".into()).into();
        assert_eq!((closed.code, closed.action), (ProblemCode::NoSession, None));
    }
}
