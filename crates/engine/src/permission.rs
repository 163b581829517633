//! Permission decisions for tool calls: the engine's state (mode, rules, shell policy,
//! session allowances and grants) here; the decision order, its typed outcome, the
//! workspace boundary, command allowances and "always allow" offers in the submodules.

mod boundary;
mod command;
mod decision;
mod evaluate;
mod offer;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use cairn_policy::{ReadDenials, RuleSet};
use cairn_protocol::Mode;
use serde::{Deserialize, Serialize};

pub use boundary::lexically_inside;
/// What a tool call asks permission for (named by each tool through [`crate::Tool`]).
pub use cairn_policy::{Capability, CommandRun, PermissionSubject};
pub use command::{command_matches_prefix, has_shell_operators, simple_command_program};
pub use decision::{AllowReason, AskReason, Decision, DenyReason, Effect};
pub use offer::{always_allow, always_allow_in};

/// When shell commands may run without asking (seed §8.4).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShellPolicy {
    /// Ask for everything not allowlisted (default).
    #[default]
    Approve,
    /// No prompt only when an OS sandbox is really enforced.
    Sandbox,
    /// Known-safe read-only commands pass (sandboxed or not); everything else asks.
    Workspace,
    /// Never ask for shell commands (auto mode for the shell only).
    All,
}

/// Session permission state that survives a restore.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionState {
    /// Current mode.
    pub mode: Mode,
    /// Tools the user allowed for the session.
    pub allow_tools: BTreeSet<String>,
    /// Programs the user allowed for the session (simple commands only).
    pub allow_commands: BTreeSet<String>,
    /// Directories outside the workspace the user granted: absolute path → writable.
    #[serde(default)]
    pub granted_dirs: BTreeMap<String, bool>,
}

/// Paths inside the workspace that always need the user, in every mode.
pub const PROTECTED: &[&str] = cairn_policy::PROTECTED_FOLDERS;

/// Evaluates tool calls against mode, workspace, rules and allowlists.
#[derive(Debug, Clone)]
pub struct PermissionEngine {
    workspace: PathBuf,
    /// Configured command-allowlist prefixes (`--allow-command`).
    allowed_commands: Vec<String>,
    rules: RuleSet,
    shell_policy: ShellPolicy,
    sandbox_enforced: bool,
    state: PermissionState,
    /// Folders of the engine's own the tools may read (saved oversized tool results); not
    /// part of the saved state, never writable.
    readable_dirs: Vec<String>,
    /// Folders commands never read unasked (Cairn's state dir).
    private_dirs: Vec<PathBuf>,
    /// Allow rules of the running turn only (a command's `allowed-tools`); never saved.
    turn_grants: RuleSet,
}

impl PermissionEngine {
    /// A permission engine for a workspace and mode.
    pub fn new(workspace: PathBuf, mode: Mode, allowed_commands: Vec<String>) -> Self {
        PermissionEngine {
            workspace,
            allowed_commands,
            rules: RuleSet::new(),
            shell_policy: ShellPolicy::Approve,
            sandbox_enforced: false,
            state: PermissionState {
                mode,
                ..Default::default()
            },
            readable_dirs: Vec::new(),
            private_dirs: Vec::new(),
            turn_grants: RuleSet::new(),
        }
    }

    /// Allow rules that hold until [`PermissionEngine::end_turn_grants`] (the running turn's).
    pub fn set_turn_grants(&mut self, grants: RuleSet) {
        self.turn_grants = grants;
    }

    /// Drops the running turn's grants (at its end).
    pub fn end_turn_grants(&mut self) {
        self.turn_grants = RuleSet::new();
    }

    /// Keeps known-safe commands from reading `dir` unasked (Cairn's state dir).
    pub fn add_private_dir(&mut self, dir: &Path) {
        if !self.private_dirs.iter().any(|d| d == dir) {
            self.private_dirs.push(dir.to_path_buf());
        }
    }

    /// Whether `command`, run by tool `name` in `cwd`, is a known read-only command (it opens
    /// no checkpoint command window).
    pub fn is_known_read_only(&self, name: &str, command: &str, cwd: Option<&str>) -> bool {
        self.known_safe(name, command, cwd).is_ok()
    }

    /// The deny path rules that bind what tool `name` reads (walking tools skip those paths).
    pub fn read_denials(&self, name: &str) -> ReadDenials {
        ReadDenials::new(&self.rules, name, &self.workspace)
    }

    /// Lets tools read `dir` (outside the workspace) for this session, read-only.
    pub fn add_readable_dir(&mut self, dir: &std::path::Path) {
        let dir = dir.display().to_string();
        if !self.readable_dirs.contains(&dir) {
            self.readable_dirs.push(dir);
        }
    }

    /// Folders tools may read besides the workspace and the user's grants.
    pub fn readable_dirs(&self) -> &[String] {
        &self.readable_dirs
    }

    /// Sets persistent rules.
    pub fn set_rules(&mut self, rules: RuleSet) {
        self.rules = rules;
    }

    /// The persistent rules.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// Sets the shell policy and whether an OS sandbox really wraps shell commands.
    pub fn set_shell_policy(&mut self, policy: ShellPolicy, sandbox_enforced: bool) {
        self.shell_policy = policy;
        self.sandbox_enforced = sandbox_enforced;
    }

    /// The shell policy and whether an OS sandbox really wraps shell commands.
    pub fn shell_policy(&self) -> (ShellPolicy, bool) {
        (self.shell_policy, self.sandbox_enforced)
    }

    /// Current mode.
    pub fn mode(&self) -> Mode {
        self.state.mode
    }

    /// Changes the mode (takes effect for the next call).
    pub fn set_mode(&mut self, mode: Mode) {
        self.state.mode = mode;
    }

    /// The session state to persist.
    pub fn state(&self) -> &PermissionState {
        &self.state
    }

    /// Restores persisted session state.
    pub fn restore(&mut self, state: PermissionState) {
        self.state = state;
    }

    /// Allows a tool for the rest of the session.
    pub fn allow_tool_for_session(&mut self, name: &str) {
        self.state.allow_tools.insert(name.to_string());
    }

    /// Allows a simple command (by its program name) for the rest of the session.
    pub fn allow_command_for_session(&mut self, command: &str) {
        if let Some(program) = simple_command_program(command) {
            self.state.allow_commands.insert(program);
        }
    }

    /// Grants access to a directory outside the workspace for the session.
    pub fn grant_directory(&mut self, path: &str, writable: bool) {
        let entry = self
            .state
            .granted_dirs
            .entry(path.to_string())
            .or_insert(false);
        *entry |= writable;
    }

    /// Revokes a session tool allowance.
    pub fn revoke_tool(&mut self, name: &str) -> bool {
        self.state.allow_tools.remove(name)
    }

    /// Revokes a session command allowance.
    pub fn revoke_command(&mut self, program: &str) -> bool {
        self.state.allow_commands.remove(program)
    }
}
