//! Cairn's execution policy: what a shell command really does (parsed with tree-sitter-bash,
//! not regexes), which commands are known to be safe, and persistent allow/ask/deny rules.

pub mod catastrophic;
pub mod effective;
mod git_config;
pub mod hook_program;
pub mod lexical;
pub mod net;
pub mod net_rules;
pub mod paths;
pub mod proc_secrets;
pub mod read_rules;
pub mod risky_options;
pub mod rules;
pub mod safe;
mod safe_args;
mod safe_specs;
pub mod sandbox;
pub mod sandbox_env;
pub mod sandbox_fs;
pub mod sandbox_home;
pub mod sandbox_links;
pub mod sandbox_mounts;
pub mod sandbox_nested;
pub mod sandbox_seccomp;
pub mod scope;
pub mod shell;
pub mod subject;
mod workspace_code;

pub use read_rules::ReadDenials;

/// Folders inside a workspace that a write always asks about, in every mode, and that the
/// sandbox keeps read-only: git's (hooks), Cairn's project config, and the skill and command
/// folders other agents read (`.agents/skills`, `.claude/skills`, `.claude/commands`).
pub const PROTECTED_FOLDERS: &[&str] = &[".git", ".agent", ".cairn", ".agents", ".claude"];
pub use rules::{Rule, RuleDecision, RuleError, RuleSet, RuleSpec};
pub use safe::is_known_safe;
pub use scope::{NotKnownSafe, ReadScope};
pub use shell::{parse_plain_commands, ShellAnalysis};
pub use subject::{Capability, CommandRun, PermissionSubject};
