//! What a command file asks of its one turn beyond its text (Claude Code's `` !`cmd` ``
//! lines, `allowed-tools` and `model`): shell lines run before the prompt is sent, grants
//! that hold for that turn only, and the model the turn runs on.

use cairn_policy::RuleSet;

/// A `` !`cmd` `` in a prompt: `raw` as it stands in the text, `command` what runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellLine {
    /// The text the command's output replaces (its first occurrence after the previous
    /// line's).
    pub raw: String,
    /// The shell command, run as a `run_shell` call of the turn (permissions, approval,
    /// hooks, sandbox and checkpoints as a model's call).
    pub command: String,
}

/// Extras of one user turn; the default asks for nothing.
#[derive(Debug, Clone, Default)]
pub struct TurnOptions {
    /// Run before the prompt is sent, their output inlined in place of each.
    pub shell: Vec<ShellLine>,
    /// Allow rules that hold during this turn only (never past deny rules, ask rules or the
    /// asks no allowance covers), cleared when it ends.
    pub grants: RuleSet,
    /// The model this turn runs on (the session's model is untouched).
    pub model: Option<String>,
}

impl TurnOptions {
    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        self.shell.is_empty() && self.grants.rules().is_empty() && self.model.is_none()
    }
}
