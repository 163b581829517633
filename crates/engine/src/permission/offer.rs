//! "Always allow": what an approval request offers (computed here, carried by the request,
//! shown as is by the CLI and the app) and what an answer grants. A command allowance exists
//! only for tools that run commands.

use std::path::{Path, PathBuf};

use cairn_policy::catastrophic::catastrophic;
use cairn_policy::PermissionSubject;
use cairn_protocol::{AlwaysAllow, ApprovalDecision};

use super::command::simple_command_program;
use super::PermissionEngine;

/// What an "always allow" answer to a call of `name` asking for `subject` may grant: for a
/// command-running tool the program of a plain simple command (nothing for a command with
/// operators: no allowance covers those), for any other tool the tool.
pub fn always_allow(name: &str, subject: &PermissionSubject) -> Option<AlwaysAllow> {
    // Without the workspace, judged as if run in `/`: `.` and `*` count as the workspace.
    always_allow_in(name, subject, Path::new("/"))
}

/// [`always_allow`] for a call in `workspace`: a catastrophic command (removing `/`, home,
/// the workspace or a folder above it) or a command outside the sandbox is never offered one.
pub fn always_allow_in(
    name: &str,
    subject: &PermissionSubject,
    workspace: &Path,
) -> Option<AlwaysAllow> {
    if !subject.runs_commands {
        return Some(AlwaysAllow::Tool {
            name: name.to_string(),
        });
    }
    let run = subject.command_run().filter(|r| !r.unsandboxed)?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if catastrophic(&run.command, workspace, home.as_deref()).is_some() {
        return None;
    }
    simple_command_program(&run.command).map(|program| AlwaysAllow::Command { program })
}

impl PermissionEngine {
    /// Remembers the approver's `answer` to a call of tool `name` that was offered `offered`:
    /// "always" grants only what was offered (an "always allow this command" answer to a
    /// request that offered the tool allows the tool, to one that offered nothing nothing
    /// more than this call), except that an explicit tool allowance is always honoured.
    pub fn remember(
        &mut self,
        name: &str,
        answer: ApprovalDecision,
        offered: Option<&AlwaysAllow>,
    ) {
        match (answer, offered) {
            (ApprovalDecision::AlwaysTool, _)
            | (ApprovalDecision::AlwaysCommand, Some(AlwaysAllow::Tool { .. })) => {
                self.allow_tool_for_session(name)
            }
            (ApprovalDecision::AlwaysCommand, Some(AlwaysAllow::Command { program })) => {
                self.state.allow_commands.insert(program.clone());
            }
            (ApprovalDecision::AlwaysCommand, None)
            | (ApprovalDecision::Once | ApprovalDecision::Deny, _) => {}
        }
    }
}
