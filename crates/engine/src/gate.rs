//! Gates: the user's hooks (Claude Code's hook schema, run by the runtime) at defined points
//! of a session. Unlike [`crate::EngineHook`] observers, a gate is awaited and may block the
//! step or add context for the model; it can never make a call more permitted than the
//! permission engine allows, except a user-level approval of a [`GatePoint::PermissionRequest`]
//! (never for calls that must always ask a person).

use async_trait::async_trait;

/// Where in a session a gate runs (Claude Code's event names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GatePoint {
    /// The session's first turn in this process is about to start.
    SessionStart,
    /// The user's input is about to be sent.
    UserPromptSubmit,
    /// A tool call is about to be checked and run.
    PreToolUse,
    /// A tool call ran.
    PostToolUse,
    /// A tool call needs the user's approval.
    PermissionRequest,
    /// The turn is about to end.
    Stop,
    /// The history is about to be compacted.
    PreCompact,
    /// The session is being closed.
    SessionEnd,
    /// An approval or a question waits for the user.
    Notification,
}

impl GatePoint {
    /// The event's name in hook configurations (`PreToolUse`, …).
    pub fn name(self) -> &'static str {
        match self {
            GatePoint::SessionStart => "SessionStart",
            GatePoint::UserPromptSubmit => "UserPromptSubmit",
            GatePoint::PreToolUse => "PreToolUse",
            GatePoint::PostToolUse => "PostToolUse",
            GatePoint::PermissionRequest => "PermissionRequest",
            GatePoint::Stop => "Stop",
            GatePoint::PreCompact => "PreCompact",
            GatePoint::SessionEnd => "SessionEnd",
            GatePoint::Notification => "Notification",
        }
    }
}

/// What a gate is told.
#[derive(Debug, Clone, PartialEq)]
pub struct GateInput {
    /// Where.
    pub point: GatePoint,
    /// The tool (tool events).
    pub tool_name: Option<String>,
    /// Its arguments (tool events).
    pub tool_input: Option<serde_json::Value>,
    /// Its result (`PostToolUse`).
    pub tool_response: Option<serde_json::Value>,
    /// The user's input (`UserPromptSubmit`).
    pub prompt: Option<String>,
    /// What waits for the user (`Notification`).
    pub message: Option<String>,
    /// Whether this turn already continued because a `Stop` gate blocked its end.
    pub stop_hook_active: bool,
    /// The tool call's id (tool events).
    pub tool_use_id: Option<String>,
    /// The paths the call creates, changes or deletes, as the permission engine sees them
    /// (tool events), so a guard on writes sees every file a patch touches.
    pub writes: Vec<String>,
    /// The session's permission mode when the gate runs.
    pub mode: Option<cairn_protocol::Mode>,
    /// `SessionStart`: `startup` for a new session, `resume` for one with history.
    pub source: Option<String>,
    /// The session's history when the gate runs (for the hooks' transcript).
    pub history: Vec<cairn_protocol::Message>,
}

impl GateInput {
    /// An input at `point` with nothing else.
    pub fn at(point: GatePoint) -> GateInput {
        GateInput {
            point,
            tool_name: None,
            tool_input: None,
            tool_response: None,
            prompt: None,
            message: None,
            stop_hook_active: false,
            tool_use_id: None,
            writes: Vec::new(),
            mode: None,
            source: None,
            history: Vec::new(),
        }
    }
}

/// What the gates answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GateVerdict {
    /// Block the step, with the reason (for the model, or the user).
    pub block: Option<String>,
    /// A user-level gate approved the call (`PermissionRequest`, or `PreToolUse` with
    /// `permissionDecision: "allow"`); never for calls a person must approve.
    pub approve: bool,
    /// A gate asked that the user decide the call even where nothing else would ask
    /// (`PreToolUse` with `permissionDecision: "ask"`), with its reason.
    pub ask: Option<String>,
    /// The call's arguments as a `PreToolUse` gate rewrote them (`updatedInput`): the call
    /// runs with these, checked by the permission engine as any call.
    pub updated_input: Option<serde_json::Value>,
    /// Context for the model (`SessionStart`, `UserPromptSubmit`, `PostToolUse`).
    pub context: Vec<String>,
}

/// Runs the configured gates of one point.
#[async_trait]
pub trait Gate: Send + Sync {
    /// Whether any gate is configured for `point` (a cheap check before building input).
    fn wants(&self, point: GatePoint) -> bool;

    /// Runs the gates of `input.point` (those whose matcher matches the tool) and merges
    /// their answers: any block blocks, contexts add up.
    async fn check(&self, input: &GateInput) -> GateVerdict;
}

/// A parent session's gates as a subagent gets them: only the tool points (`PreToolUse`,
/// `PostToolUse`, `PermissionRequest`, `Notification`), so a hook that blocks a command blocks
/// it in a subagent too, while the session's lifecycle points stay the parent's.
pub(crate) struct ToolGates(pub(crate) std::sync::Arc<dyn Gate>);

impl ToolGates {
    fn tool_point(point: GatePoint) -> bool {
        matches!(
            point,
            GatePoint::PreToolUse
                | GatePoint::PostToolUse
                | GatePoint::PermissionRequest
                | GatePoint::Notification
        )
    }
}

#[async_trait]
impl Gate for ToolGates {
    fn wants(&self, point: GatePoint) -> bool {
        Self::tool_point(point) && self.0.wants(point)
    }

    async fn check(&self, input: &GateInput) -> GateVerdict {
        if !Self::tool_point(input.point) {
            return GateVerdict::default();
        }
        self.0.check(input).await
    }
}
