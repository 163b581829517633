//! The decision order for one call (seed §8.1), extended with persistent rules and
//! protected paths: deny rule → read-only mode → workspace boundary → protected path → ask
//! rule → read-only tool → auto mode → shell policy → allow rule / the turn's grants / command
//! allowlists → session tool allowlist → ask the user. It reads only the call's typed subject.

use std::path::{Path, PathBuf};

use cairn_policy::catastrophic::catastrophic;
use cairn_policy::{NotKnownSafe, PermissionSubject, RuleDecision, ShellAnalysis};
use cairn_protocol::{Mode, ToolMeta};

use super::boundary::{mentioned_protected, protected_component};
use super::command::{command_matches_prefix, risky_after, simple_command_program};
use super::decision::{AllowReason, AskReason, Decision, DenyReason, Effect};
use super::{PermissionEngine, ShellPolicy};
use crate::permission_reads::{mentioned_denied, run_dir};

impl PermissionEngine {
    /// Decides one call of tool `name` with metadata `meta` and parsed `args`, its subject read
    /// from conventional argument names ([`PermissionSubject::from_arguments`]).
    pub fn evaluate(&self, name: &str, meta: &ToolMeta, args: &serde_json::Value) -> Decision {
        self.evaluate_call(name, meta, args, None)
    }

    /// [`PermissionEngine::evaluate`] for a call whose written paths are `targets` (from
    /// [`crate::Tool::write_targets`]; `None`: its `path` argument).
    pub fn evaluate_call(
        &self,
        name: &str,
        meta: &ToolMeta,
        args: &serde_json::Value,
        targets: Option<Vec<String>>,
    ) -> Decision {
        let subject = PermissionSubject::from_arguments(&meta.capabilities, args, targets);
        self.decide(name, meta, &subject)
    }

    /// Decides one call of tool `name` with metadata `meta` that asks for `subject` (from
    /// [`crate::Tool::permission_subject`]).
    pub fn decide(&self, name: &str, meta: &ToolMeta, subject: &PermissionSubject) -> Decision {
        let mode = self.state.mode;
        let targets = subject.written();
        let run = subject.command_run();
        let command = run.map(|r| r.command.as_str());
        let cwd = run.and_then(|r| r.cwd.as_deref());
        let tool = || name.to_string();
        let rule = self.rules.decide_subject(name, subject, &self.workspace);
        // 0. A deny rule is absolute.
        if let Some(r) = rule.filter(|r| r.decision == RuleDecision::Deny) {
            return Decision::Deny(DenyReason::Rule {
                rule: r.text.clone(),
                source: r.source.clone(),
            });
        }
        // 1. Read-only modes forbid side effects outright.
        if mode.is_read_only() && meta.mutating {
            return Decision::Deny(DenyReason::ReadOnlyMode { tool: tool(), mode });
        }
        // 1b. A command the model asks to run outside the OS sandbox (`sandbox: false`)
        //     always needs the user, in every mode: no allowlist, rule, shell policy or
        //     session allowance covers it (and the request offers no "always allow").
        if let Some(r) = run.filter(|r| r.unsandboxed && self.sandbox_enforced) {
            return Decision::Ask(AskReason::Unsandboxed {
                tool: tool(),
                command: r.command.clone(),
            });
        }
        // 2. Writes outside the workspace (and outside granted writable dirs) are refused,
        //    whatever the mode: as written and where symlinks really lead.
        if let Some(path) = targets.iter().find(|p| !self.may_write_at(p)) {
            return Decision::Deny(DenyReason::OutsideWorkspace {
                path: path.clone(),
                workspace: self.workspace.display().to_string(),
            });
        }
        // 2a. Cairn's own state and config folders (saved sessions and their permissions,
        //     MCP and permission settings) are never written by tools, in any mode.
        if let Some(path) = targets.iter().find(|p| self.in_private_dir(p)) {
            return Decision::Deny(DenyReason::PrivateFolder { path: path.clone() });
        }
        // 2b. Protected paths (reached directly or through a symlink) always need the user.
        for path in &targets {
            if let Some(p) = protected_component(&self.workspace, path) {
                return Decision::Ask(AskReason::ProtectedWrite {
                    tool: tool(),
                    path: path.clone(),
                    folder: p.to_string(),
                });
            }
        }
        let dir = run_dir(&self.workspace, cwd);
        // 2b'. A command that names a protected folder needs the user too, unless the OS
        //      sandbox (which keeps those folders read-only) confines it, or it is a known
        //      read-only command (`cat .git/HEAD` only looks). A literal check: the sandbox
        //      is what holds against a command built to hide the name.
        if let Some(cmd) = command.filter(|c| {
            meta.mutating && !self.sandbox_enforced && self.known_safe(name, c, cwd).is_err()
        }) {
            if let Some(dir) = self.mentioned_private(cmd) {
                return Decision::Ask(AskReason::NamesPrivateFolder {
                    tool: tool(),
                    folder: dir.display().to_string(),
                    command: cmd.to_string(),
                });
            }
            if let Some(p) = protected_component(&self.workspace, &dir.display().to_string())
                .or_else(|| mentioned_protected(&self.workspace, &dir, cmd))
            {
                return Decision::Ask(AskReason::NamesProtectedFolder {
                    tool: tool(),
                    folder: p.to_string(),
                    command: cmd.to_string(),
                });
            }
        }
        // 2b''. Reading a process's environment or memory (`/proc/$PPID/environ`) never runs
        //       unasked, whatever the mode, sandbox or allowlist (`input` typed into a running
        //       shell counts too).
        if let Some(cmd) = subject.typed() {
            if let Some(why) = cairn_policy::proc_secrets::reads_process_secrets(cmd) {
                return Decision::Ask(AskReason::ProcessSecrets {
                    tool: tool(),
                    why,
                    command: cmd.to_string(),
                });
            }
        }
        // 2b'''. A command that names a path a deny rule keeps from being read asks, in
        //       every mode (a literal check, like 2b').
        if let Some(cmd) = command {
            if let Some((path, rule)) = mentioned_denied(&self.read_denials(name), &dir, cmd) {
                return Decision::Ask(AskReason::NamesDeniedPath {
                    tool: tool(),
                    path,
                    rule,
                    command: cmd.to_string(),
                });
            }
        }
        // 2c'. Reaching this machine or its local network (a dev server, but also cloud
        //      metadata and admin pages) needs the user, except in auto mode.
        if mode != Mode::Auto {
            for url in subject.urls() {
                if let Some(host) = cairn_policy::net::local_address(url) {
                    return Decision::Ask(AskReason::LocalAddress {
                        tool: tool(),
                        host,
                        url: url.to_string(),
                    });
                }
            }
        }
        // 2d. Catastrophic commands (removing `/`, home or the workspace, recursive chmod of
        //     them) ask in every mode, sandboxed or not, and no allowance covers them.
        if let Some(cmd) = command {
            let home = std::env::var_os("HOME").map(PathBuf::from);
            if let Some(why) = catastrophic(cmd, &self.workspace, home.as_deref()) {
                return Decision::Ask(AskReason::Catastrophic { tool: tool(), why });
            }
        }
        // 2e. A deny or ask rule that could apply to a part of the command that cannot be
        //     analysed asks (a deny is final: the user decides what cannot be checked).
        if let Some((r, why)) = self
            .rules
            .uncertain_subject(name, subject, &self.workspace)
            .filter(|_| rule.is_none_or(|r| r.decision == RuleDecision::Allow))
        {
            return Decision::Ask(AskReason::UncertainRule {
                rule: r.text.clone(),
                source: r.source.clone(),
                why,
            });
        }
        // 2c. An ask rule asks even in auto mode.
        if let Some(r) = rule.filter(|r| r.decision == RuleDecision::Ask) {
            return Decision::Ask(AskReason::Rule {
                rule: r.text.clone(),
                source: r.source.clone(),
            });
        }
        // 3. Read-only and approval-free tools run freely.
        if !meta.mutating || !meta.requires_approval {
            return Decision::Allow(AllowReason::ApprovalFree);
        }
        // 4. Auto mode allows side effects inside the workspace.
        if mode == Mode::Auto {
            return Decision::Allow(AllowReason::AutoMode);
        }
        // 5. Shell policy.
        let mut not_safe = None;
        if let Some(cmd) = command {
            match self.shell_policy {
                ShellPolicy::All => return Decision::Allow(AllowReason::ShellPolicyAll),
                ShellPolicy::Sandbox if self.sandbox_enforced => {
                    return Decision::Allow(AllowReason::Sandboxed);
                }
                ShellPolicy::Workspace => match self.known_safe(name, cmd, cwd) {
                    Ok(()) => return Decision::Allow(AllowReason::KnownSafe),
                    Err(why) => not_safe = Some(why),
                },
                // Inside the sandbox (issue 35: reads confined by the boundary, denied paths
                // mounted away) known-safe read-only commands run unasked under the default
                // policy too.
                ShellPolicy::Approve if self.sandbox_enforced => {
                    match self.known_safe(name, cmd, cwd) {
                        Ok(()) => return Decision::Allow(AllowReason::KnownSafe),
                        Err(why) => not_safe = Some(why),
                    }
                }
                _ => {}
            }
        }
        // 6. Allow rules and command allowlists.
        if let Some(r) = rule.filter(|r| r.decision == RuleDecision::Allow) {
            return Decision::Allow(AllowReason::Rule {
                rule: r.text.clone(),
                source: r.source.clone(),
            });
        }
        // 6'. The running turn's grants (a command's `allowed-tools`), past every deny and
        //     ask above.
        if let Some(r) = self
            .turn_grants
            .decide_subject(name, subject, &self.workspace)
            .filter(|r| r.decision == RuleDecision::Allow)
        {
            return Decision::Allow(AllowReason::Rule {
                rule: r.text.clone(),
                source: r.source.clone(),
            });
        }
        if let Some(cmd) = command {
            if let Some(prefix) = self
                .allowed_commands
                .iter()
                .find(|p| command_matches_prefix(cmd, p))
            {
                return Decision::Allow(AllowReason::Allowlisted {
                    prefix: prefix.clone(),
                });
            }
            if let Some(program) = simple_command_program(cmd).filter(|_| !risky_after(cmd, 1)) {
                if self.state.allow_commands.contains(&program) {
                    return Decision::Allow(AllowReason::SessionCommand { program });
                }
            }
        }
        // 7. Session tool allowlist.
        if self.state.allow_tools.contains(name) {
            return Decision::Allow(AllowReason::SessionTool { tool: tool() });
        }
        // 8. Ask.
        let effect = match command {
            Some(c) => match ShellAnalysis::of(c) {
                ShellAnalysis::Opaque(why) => Effect::OpaqueCommand {
                    command: c.to_string(),
                    why: why.to_string(),
                },
                ShellAnalysis::Compound(_) => Effect::Commands {
                    command: c.to_string(),
                },
                ShellAnalysis::Simple(_) => Effect::Command {
                    command: c.to_string(),
                },
            },
            None if !targets.is_empty() => Effect::Writes { paths: targets },
            None => Effect::SideEffects,
        };
        // Why the workspace policy did not let it through (e.g. it reads outside).
        let why = not_safe
            .filter(|why| {
                matches!(
                    why,
                    NotKnownSafe::ReadsOutside(_)
                        | NotKnownSafe::FollowsLinks(_)
                        | NotKnownSafe::WorkspaceCode(_)
                        | NotKnownSafe::DeniedPath(_)
                        | NotKnownSafe::NotReadOnly(_)
                )
            })
            .map(|why| why.to_string());
        Decision::Ask(AskReason::Unallowed {
            tool: tool(),
            effect,
            why,
        })
    }

    /// Whether `command` may run unasked as known-safe read-only commands without a sandbox:
    /// read-only forms whose files stay in the workspace or granted folders (seed §8.4).
    /// `cwd` is where the command runs (relative to the workspace); `name` the tool, whose
    /// deny path rules bind what the command may read.
    pub(super) fn known_safe(
        &self,
        name: &str,
        command: &str,
        cwd: Option<&str>,
    ) -> Result<(), NotKnownSafe> {
        let mut scope = cairn_policy::ReadScope::new(&self.workspace)
            .with_denials(self.read_denials(name))
            .confined(self.sandbox_enforced);
        if let Some(cwd) = cwd {
            scope = scope.with_cwd(Path::new(cwd));
        }
        for dir in self
            .readable_dirs
            .iter()
            .chain(self.state.granted_dirs.keys())
        {
            scope = scope.with_readable(Path::new(dir));
        }
        for dir in &self.private_dirs {
            scope = scope.with_forbidden(dir);
        }
        scope.check_command(command)
    }
}
