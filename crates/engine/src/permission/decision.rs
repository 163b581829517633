//! The outcome of evaluating one tool call: allow, deny or ask, each with its typed reason.
//! The reason's text (`Display`) is what users and events see.

use std::fmt;

use cairn_protocol::Mode;
use serde::{Deserialize, Serialize};

/// The outcome of evaluating one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", content = "reason", rename_all = "snake_case")]
pub enum Decision {
    /// The call runs without asking.
    Allow(AllowReason),
    /// The call is refused without asking.
    Deny(DenyReason),
    /// The approver decides.
    Ask(AskReason),
}

/// Why a call runs without asking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AllowReason {
    /// A read-only or approval-free tool.
    ApprovalFree,
    /// Auto mode allows side effects inside the workspace.
    AutoMode,
    /// Shell policy `all`.
    ShellPolicyAll,
    /// Shell policy `sandbox`, and the OS sandbox is enforced.
    Sandboxed,
    /// Shell policy `workspace`, and the command is known-safe and read-only.
    KnownSafe,
    /// An allow rule.
    Rule { rule: String, source: String },
    /// A configured command-allowlist prefix (`--allow-command`).
    Allowlisted { prefix: String },
    /// A program the user allowed for the session.
    SessionCommand { program: String },
    /// A tool the user allowed for the session.
    SessionTool { tool: String },
}

/// Why a call is refused without asking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DenyReason {
    /// A deny rule.
    Rule { rule: String, source: String },
    /// A side effect in a read-only mode.
    ReadOnlyMode { tool: String, mode: Mode },
    /// A write outside the workspace and the writable granted folders.
    OutsideWorkspace { path: String, workspace: String },
    /// A write into Cairn's own state or config folder.
    PrivateFolder { path: String },
}

/// Why the approver must decide.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AskReason {
    /// A command asks to run outside the OS sandbox.
    Unsandboxed { tool: String, command: String },
    /// A write inside a protected folder.
    ProtectedWrite {
        tool: String,
        path: String,
        folder: String,
    },
    /// A command names Cairn's own folder.
    NamesPrivateFolder {
        tool: String,
        folder: String,
        command: String,
    },
    /// A command names a protected folder.
    NamesProtectedFolder {
        tool: String,
        folder: String,
        command: String,
    },
    /// A command may read another process's environment or memory.
    ProcessSecrets {
        tool: String,
        why: String,
        command: String,
    },
    /// A command names a path a deny rule keeps from being read (`rule`: its text and source).
    NamesDeniedPath {
        tool: String,
        path: String,
        rule: String,
        command: String,
    },
    /// A URL on this machine or its local network.
    LocalAddress {
        tool: String,
        host: String,
        url: String,
    },
    /// A catastrophic command (removing `/`, home or the workspace, ...).
    Catastrophic { tool: String, why: String },
    /// A deny or ask rule may apply to a part of the command that cannot be analysed.
    UncertainRule {
        rule: String,
        source: String,
        why: String,
    },
    /// An ask rule.
    Rule { rule: String, source: String },
    /// A `PreToolUse` hook asked that the user decide (`permissionDecision: "ask"`).
    Hook { tool: String, reason: String },
    /// Nothing allows the call: the user decides (`why`: what kept the shell policy from
    /// allowing it).
    Unallowed {
        tool: String,
        effect: Effect,
        why: Option<String>,
    },
}

/// What a call the user is asked about does, as the question says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Effect {
    /// Runs one plain command.
    Command { command: String },
    /// Runs several commands.
    Commands { command: String },
    /// Runs a command that cannot be analysed (`why`).
    OpaqueCommand { command: String, why: String },
    /// Writes these paths.
    Writes { paths: Vec<String> },
    /// Anything else.
    SideEffects,
}

impl Decision {
    /// The reason's text, as users and events see it.
    pub fn reason(&self) -> String {
        self.to_string()
    }

    /// Whether the call runs without asking.
    pub fn is_allow(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }

    /// Whether the call is refused without asking.
    pub fn is_deny(&self) -> bool {
        matches!(self, Decision::Deny(_))
    }

    /// Whether the approver decides.
    pub fn is_ask(&self) -> bool {
        matches!(self, Decision::Ask(_))
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Decision::Allow(r) => r.fmt(f),
            Decision::Deny(r) => r.fmt(f),
            Decision::Ask(r) => r.fmt(f),
        }
    }
}

impl fmt::Display for AllowReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllowReason::ApprovalFree => f.write_str("read-only or approval-free tool"),
            AllowReason::AutoMode => f.write_str("auto mode"),
            AllowReason::ShellPolicyAll => f.write_str("shell policy `all`"),
            AllowReason::Sandboxed => f.write_str("runs inside the OS sandbox"),
            AllowReason::KnownSafe => f.write_str("known-safe read-only command"),
            AllowReason::Rule { rule, source } => write!(f, "allowed by rule `{rule}` ({source})"),
            AllowReason::Allowlisted { prefix } => write!(f, "command allowlisted (`{prefix}`)"),
            AllowReason::SessionCommand { program } => {
                write!(f, "`{program}` allowed for this session")
            }
            AllowReason::SessionTool { tool } => write!(f, "{tool} allowed for this session"),
        }
    }
}

impl fmt::Display for DenyReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DenyReason::Rule { rule, source } => write!(f, "denied by rule `{rule}` ({source})"),
            DenyReason::ReadOnlyMode { tool, mode } => write!(
                f,
                "{tool} has side effects, and the session is in {} mode (read-only)",
                mode.as_str()
            ),
            DenyReason::OutsideWorkspace { path, workspace } => {
                write!(f, "{path} is outside the workspace {workspace}")
            }
            DenyReason::PrivateFolder { path } => write!(
                f,
                "{path} is inside Cairn's own state or config folder, which tools never write"
            ),
        }
    }
}

impl fmt::Display for AskReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskReason::Unsandboxed { tool, command } => write!(
                f,
                "{tool} asks to run a command outside the sandbox (`sandbox: false`; asked \
                 every time, in every mode): {command}"
            ),
            AskReason::ProtectedWrite { tool, path, folder } => write!(
                f,
                "{tool} writes {path}, inside the protected `{folder}` folder (asked in every mode)"
            ),
            AskReason::NamesPrivateFolder {
                tool,
                folder,
                command,
            } => write!(
                f,
                "{tool} runs a command that names Cairn's own folder {folder} (asked in every \
                 mode): {command}"
            ),
            AskReason::NamesProtectedFolder {
                tool,
                folder,
                command,
            } => write!(
                f,
                "{tool} runs a command that names the protected `{folder}` folder (asked in \
                 every mode): {command}"
            ),
            AskReason::ProcessSecrets { tool, why, command } => write!(
                f,
                "{tool} runs a command that may read another process's secrets ({why}; \
                 asked in every mode): {command}"
            ),
            AskReason::NamesDeniedPath {
                tool,
                path,
                rule,
                command,
            } => write!(
                f,
                "{tool} runs a command that names {path}, denied by rule {rule} \
                 (asked in every mode): {command}"
            ),
            AskReason::LocalAddress { tool, host, url } => write!(
                f,
                "{tool} reaches {host}, an address on this machine or its local network: {url}"
            ),
            AskReason::Catastrophic { tool, why } => write!(
                f,
                "{tool} runs a catastrophic command (asked in every mode): {why}"
            ),
            AskReason::UncertainRule { rule, source, why } => {
                write!(f, "rule `{rule}` ({source}) may apply: the command {why}")
            }
            AskReason::Rule { rule, source } => write!(f, "rule `{rule}` ({source}) asks for this"),
            AskReason::Hook { tool, reason } if reason.is_empty() => {
                write!(f, "a PreToolUse hook asks you to decide this {tool} call")
            }
            AskReason::Hook { tool, reason } => {
                write!(
                    f,
                    "a PreToolUse hook asks you to decide this {tool} call: {reason}"
                )
            }
            AskReason::Unallowed { tool, effect, why } => match why {
                Some(why) => write!(f, "{tool} {effect} ({why})"),
                None => write!(f, "{tool} {effect}"),
            },
        }
    }
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Effect::Command { command } => write!(f, "runs a command: {command}"),
            Effect::Commands { command } => write!(f, "runs several commands: {command}"),
            Effect::OpaqueCommand { command, why } => {
                write!(f, "runs a command that {why}: {command}")
            }
            Effect::Writes { paths } => write!(f, "writes {}", paths.join(", ")),
            Effect::SideEffects => f.write_str("has side effects"),
        }
    }
}
