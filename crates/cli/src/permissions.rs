//! `cairn permissions list|add|revoke`: persistent rules and session allowlists.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_policy::{RuleDecision, RuleSpec};
use cairn_runtime::permissions::{
    add_user_rule, decision_name, load_rules, project_key, revoke_user_rule_for,
};
use clap::{Args, Subcommand};

use crate::EXIT_USAGE;

/// `cairn permissions …`
#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// List the rules in force for a workspace (and a session's allowlists).
    List {
        /// Workspace whose project rules apply [default: current dir].
        #[arg(short, long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// Also show this session's allowlists.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Where sessions live.
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Add a rule to the user-level rules file.
    Add(AddArgs),
    /// Remove a rule from the user-level file, or a session allowance.
    Revoke {
        /// The rule text (e.g. `run_shell(npm test:*)`), or with --session a tool or program name.
        rule: String,
        /// Revoke an allowance of this session instead.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Where sessions live.
        #[arg(long, value_name = "DIR")]
        state_dir: Option<PathBuf>,
        /// Revoke the rule limited to the project of DIR ("Always allow in this project")
        /// instead of the global one.
        #[arg(long, value_name = "DIR", conflicts_with = "session")]
        project: Option<PathBuf>,
    },
}

/// Options of `cairn permissions add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The rule: `tool`, `tool(command prefix:*)`, `tool(path glob)`, `mcp__server__*`.
    pub rule: String,
    /// allow, ask or deny.
    #[arg(long, value_name = "DECISION")]
    pub decision: String,
    /// An example the rule must match (checked now; repeatable).
    #[arg(long = "match", value_name = "EXAMPLE")]
    pub matches: Vec<String>,
    /// An example the rule must not match (checked now; repeatable).
    #[arg(long = "not-match", value_name = "EXAMPLE")]
    pub not_match: Vec<String>,
}

/// Runs a `cairn permissions` command.
pub fn run(cmd: PermissionsCommand) -> ExitCode {
    match cmd {
        PermissionsCommand::List {
            workspace,
            session,
            state_dir,
            json,
        } => list(workspace, session, state_dir, json),
        PermissionsCommand::Add(a) => {
            let decision = match a.decision.as_str() {
                "allow" => RuleDecision::Allow,
                "ask" => RuleDecision::Ask,
                "deny" => RuleDecision::Deny,
                other => {
                    errln!("error: --decision `{other}`: expected allow, ask or deny");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            let spec = RuleSpec {
                rule: a.rule,
                decision,
                matches: a.matches,
                not_match: a.not_match,
                project: None,
            };
            match add_user_rule(&spec) {
                Ok(path) => {
                    outln!(
                        "added `{}` ({}) to {}",
                        spec.rule,
                        decision_name(decision),
                        path.display()
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    errln!("error: {e}");
                    ExitCode::from(EXIT_USAGE)
                }
            }
        }
        PermissionsCommand::Revoke {
            rule,
            session: None,
            project,
            ..
        } => match revoke_user_rule_for(&rule, project.map(|p| project_key(&p)).as_deref()) {
            Ok(0) => {
                errln!("no user-level rule `{rule}` (project rules live in <workspace>/.agent/permissions.toml; one kept for a project is revoked with --project DIR)");
                ExitCode::FAILURE
            }
            Ok(n) => {
                outln!("revoked {n} rule(s) `{rule}`");
                ExitCode::SUCCESS
            }
            Err(e) => {
                errln!("error: {e}");
                ExitCode::from(EXIT_USAGE)
            }
        },
        PermissionsCommand::Revoke {
            rule,
            session: Some(id),
            state_dir,
            ..
        } => {
            let dir = state_dir.unwrap_or_else(cairn_runtime::default_state_dir);
            let store = cairn_runtime::SessionStore::new(&dir);
            let mut saved = match store.load(&id) {
                Ok(s) => s,
                Err(e) => {
                    errln!("error: {e}");
                    return ExitCode::from(EXIT_USAGE);
                }
            };
            let removed = saved.permissions.allow_tools.remove(&rule)
                | saved.permissions.allow_commands.remove(&rule)
                | saved.permissions.granted_dirs.remove(&rule).is_some();
            if !removed {
                errln!("session {id} has no allowance `{rule}`");
                return ExitCode::FAILURE;
            }
            match store.save(&saved) {
                Ok(()) => {
                    outln!("revoked `{rule}` for session {id}");
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    errln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn list(
    workspace: Option<PathBuf>,
    session: Option<String>,
    state_dir: Option<PathBuf>,
    json: bool,
) -> ExitCode {
    let ws = match workspace.map(Ok).unwrap_or_else(std::env::current_dir) {
        Ok(w) => w,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let rules = match load_rules(&ws) {
        Ok(r) => r,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    for r in rules.rules() {
        if json {
            let mut line = serde_json::json!({"kind": "rule", "decision": decision_name(r.decision), "rule": r.text, "source": r.source});
            if let Some(p) = &r.project {
                line["project"] = serde_json::json!(p);
            }
            outln!("{line}");
        } else {
            let limited = if r.project.is_some() {
                " [this project]"
            } else {
                ""
            };
            outln!(
                "{:<5} {}{limited}  ({})",
                decision_name(r.decision),
                r.text,
                r.source
            );
        }
    }
    if let Some(id) = session {
        let dir = state_dir.unwrap_or_else(cairn_runtime::default_state_dir);
        let saved = match cairn_runtime::SessionStore::new(&dir).load(&id) {
            Ok(s) => s,
            Err(e) => {
                errln!("error: {e}");
                return ExitCode::from(EXIT_USAGE);
            }
        };
        let p = &saved.permissions;
        let items = p
            .allow_tools
            .iter()
            .map(|t| ("tool", t.clone()))
            .chain(p.allow_commands.iter().map(|c| ("command", c.clone())))
            .chain(p.granted_dirs.iter().map(|(d, w)| {
                (
                    if *w {
                        "directory (writable)"
                    } else {
                        "directory (read-only)"
                    },
                    d.clone(),
                )
            }));
        for (kind, value) in items {
            if json {
                outln!(
                    "{}",
                    serde_json::json!({"kind": "session", "type": kind, "value": value, "session": id})
                );
            } else {
                outln!("allow {value}  (session {id}, {kind})");
            }
        }
        if !json {
            outln!("mode: {}", p.mode.as_str());
        }
    }
    ExitCode::SUCCESS
}
