//! Persistent permission rules for a session: the user-level file
//! (`<config>/cairn/permissions.toml`, or `CAIRN_PERMISSIONS_FILE`) and the project file
//! `<workspace>/.agent/permissions.toml`, whose allow rules are ignored (a repository cannot
//! grant itself permissions). Also the shell policy from `CAIRN_SHELL_POLICY`.
//!
//! A user-level rule may be limited to one project ("Always allow in this project"): its
//! `project` is the project's folder key ([`project_key`]), so every worktree of a repository
//! shares it. Such rules are kept in the user's file, never in the repository.

use std::path::{Path, PathBuf};

use cairn_engine::ShellPolicy;
use cairn_policy::{RuleDecision, RuleSet, RuleSpec};
use cairn_protocol::AlwaysAllow;

use crate::error::RuntimeError;
use crate::workspace::repository::{canonical, main_folder_of_linked};

/// The user-level rules file.
pub fn user_rules_path() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_PERMISSIONS_FILE").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    dirs::config_dir().map(|d| d.join("cairn").join("permissions.toml"))
}

/// The project rules file of a workspace.
pub fn project_rules_path(workspace: &Path) -> PathBuf {
    workspace.join(".agent").join("permissions.toml")
}

/// The folder key of the project `workspace` belongs to: the main worktree root of its git
/// repository (the same for every linked worktree of it; the repository folder itself when
/// it is bare), else the folder itself; canonical where the path resolves. A folder that
/// only claims to be a worktree of a repository (its `.git` names that repository, which
/// does not list it among its worktrees) keys as itself: it cannot borrow another project's
/// rules.
pub fn project_key(workspace: &Path) -> String {
    let root = match git2::Repository::discover(workspace) {
        Ok(repo) => main_folder_of_linked(&repo)
            .or_else(|| repo.workdir().map(Path::to_path_buf))
            .unwrap_or_else(|| repo.path().to_path_buf()),
        Err(_) => workspace.to_path_buf(),
    };
    canonical(&root).display().to_string()
}

/// Loads every rule that applies in `workspace` (the user's global rules, those limited to
/// its project, and the project file's); a bad file is a clear configuration error.
pub fn load_rules(workspace: &Path) -> Result<RuleSet, RuntimeError> {
    load_rules_in(workspace, &crate::config_scope::ConfigScope::default())
}

/// [`load_rules`] within `scope`: the user's file only when its user config applies, the
/// project's files only when its project files do.
pub fn load_rules_in(
    workspace: &Path,
    scope: &crate::config_scope::ConfigScope,
) -> Result<RuleSet, RuntimeError> {
    let key = project_key(workspace);
    let mut rules = RuleSet::new();
    if let Some(user) = scope.user(user_rules_path()) {
        rules
            .load_file_for(&user, false, Some(&key))
            .map_err(|e| RuntimeError::Config(format!("permission rules: {e}")))?;
    }
    if !scope.project_files() {
        return Ok(rules);
    }
    let project = project_rules_path(workspace);
    let read = crate::project_file::read(workspace, &project);
    rules
        .load_read_for(&project, read, true, Some(&key))
        .map_err(|e| RuntimeError::Config(format!("permission rules: {e}")))?;
    // Claude Code's project permissions, once the workspace trust covers their files.
    if scope.project_trusted(|| crate::hooks::project_files_trusted(workspace)) {
        for note in crate::claude_rules::load_into(&mut rules, workspace) {
            tracing::warn!("permission rules: {note}");
        }
    }
    Ok(rules)
}

/// Why an "always allow" could not be kept for a project.
#[derive(Debug, thiserror::Error)]
pub enum ProjectRuleError {
    /// The tool or program name cannot be written as a rule that allows exactly it.
    #[error("`{0}` cannot be kept as a permission rule")]
    Unkeepable(String),
    /// The user-level file could not be read or written.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

/// The user-level allow rule that keeps `allow` (offered for a call of tool `tool`) for the
/// project `key`: `tool` for a tool allowance (`Network(host)` for a host a sandboxed
/// command asked for), `tool(program:*)` for a command allowance
/// (the program's plain runs without a risky option, as the session allowance, for this
/// tool only).
pub fn project_rule(
    tool: &str,
    allow: &AlwaysAllow,
    key: &str,
) -> Result<RuleSpec, ProjectRuleError> {
    let plain = |s: &str, extra: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c) || extra.contains(c))
    };
    let network = |name: &str| {
        tool == cairn_policy::net_rules::NETWORK_RULE_TOOL
            && cairn_policy::Rule::parse(name, RuleDecision::Allow, "new rule")
                .ok()
                .and_then(|r| r.host_pattern().cloned())
                .is_some_and(|p| matches!(p, cairn_policy::net_rules::HostPattern::Exact(_)))
    };
    let rule = match allow {
        AlwaysAllow::Tool { name } if plain(name, "") => name.clone(),
        // A host a sandboxed command asked for: `Network(host)`.
        AlwaysAllow::Tool { name } if network(name) => name.clone(),
        AlwaysAllow::Tool { name } => return Err(ProjectRuleError::Unkeepable(name.clone())),
        AlwaysAllow::Command { program } if plain(tool, "") && plain(program, ".+") => {
            format!("{tool}({program}:*)")
        }
        AlwaysAllow::Command { program } => {
            return Err(ProjectRuleError::Unkeepable(program.clone()))
        }
    };
    let spec = RuleSpec {
        rule,
        decision: RuleDecision::Allow,
        matches: Vec::new(),
        not_match: Vec::new(),
        project: Some(key.to_string()),
    };
    RuleSet::new()
        .add_spec(&spec, "new rule")
        .map_err(|e| ProjectRuleError::Runtime(RuntimeError::Config(e.to_string())))?;
    Ok(spec)
}

/// Keeps `allow` (offered for a call of tool `tool` in `workspace`) as a user-level allow
/// rule limited to the workspace's project ([`project_rule`]); adding one already there
/// keeps one. Returns the rule.
pub fn add_project_rule(
    workspace: &Path,
    tool: &str,
    allow: &AlwaysAllow,
) -> Result<RuleSpec, ProjectRuleError> {
    let spec = project_rule(tool, allow, &project_key(workspace))?;
    let path = user_rules_path()
        .ok_or_else(|| RuntimeError::Config("no user configuration directory".into()))?;
    let mut specs = read_specs(&path)?;
    let same = |s: &RuleSpec| {
        s.rule.trim() == spec.rule && s.decision == spec.decision && s.project == spec.project
    };
    if !specs.iter().any(same) {
        specs.push(spec.clone());
        write_specs(&path, &specs)?;
    }
    Ok(spec)
}

/// The shell policy from `CAIRN_SHELL_POLICY` (approve, sandbox, workspace, all).
pub fn shell_policy_from_env() -> Result<ShellPolicy, RuntimeError> {
    match std::env::var("CAIRN_SHELL_POLICY")
        .ok()
        .as_deref()
        .map(str::trim)
    {
        None | Some("") | Some("approve") => Ok(ShellPolicy::Approve),
        Some("sandbox") => Ok(ShellPolicy::Sandbox),
        Some("workspace") => Ok(ShellPolicy::Workspace),
        Some("all") => Ok(ShellPolicy::All),
        Some(other) => Err(RuntimeError::Config(format!(
            "CAIRN_SHELL_POLICY=`{other}`: expected approve, sandbox, workspace or all"
        ))),
    }
}

/// Appends a rule to the user-level file after validating it.
pub fn add_user_rule(spec: &RuleSpec) -> Result<PathBuf, RuntimeError> {
    let path = user_rules_path()
        .ok_or_else(|| RuntimeError::Config("no user configuration directory".into()))?;
    let mut check = RuleSet::new();
    check
        .add_spec(spec, "new rule")
        .map_err(|e| RuntimeError::Config(e.to_string()))?;
    let mut specs = read_specs(&path)?;
    specs.push(spec.clone());
    write_specs(&path, &specs)?;
    Ok(path)
}

/// Removes the global rules (limited to no project) with this text from the user-level file;
/// returns how many.
pub fn revoke_user_rule(text: &str) -> Result<usize, RuntimeError> {
    revoke_user_rule_for(text, None)
}

/// Removes the rules with this text limited to project `project` (its folder key; `None` =
/// the global ones) from the user-level file, leaving the same text for other projects;
/// returns how many.
pub fn revoke_user_rule_for(text: &str, project: Option<&str>) -> Result<usize, RuntimeError> {
    let Some(path) = user_rules_path() else {
        return Ok(0);
    };
    let specs = read_specs(&path)?;
    let before = specs.len();
    let kept: Vec<RuleSpec> = specs
        .into_iter()
        .filter(|s| s.rule.trim() != text.trim() || s.project.as_deref() != project)
        .collect();
    let removed = before - kept.len();
    if removed > 0 {
        write_specs(&path, &kept)?;
    }
    Ok(removed)
}

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct RuleFile {
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

fn read_specs(path: &Path) -> Result<Vec<RuleSpec>, RuntimeError> {
    match std::fs::read_to_string(path) {
        Ok(text) => toml::from_str::<RuleFile>(&text)
            .map(|f| f.rule)
            .map_err(|e| RuntimeError::Config(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(RuntimeError::Config(format!("{}: {e}", path.display()))),
    }
}

fn write_specs(path: &Path, specs: &[RuleSpec]) -> Result<(), RuntimeError> {
    let text = toml::to_string_pretty(&RuleFile {
        rule: specs.to_vec(),
    })
    .map_err(|e| RuntimeError::Config(e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| RuntimeError::Config(format!("{}: {e}", dir.display())))?;
    }
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| RuntimeError::Config(format!("{}: {e}", path.display())))
}

/// A printable decision name.
pub fn decision_name(d: RuleDecision) -> &'static str {
    match d {
        RuleDecision::Allow => "allow",
        RuleDecision::Ask => "ask",
        RuleDecision::Deny => "deny",
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_kept_command_allowance_allows_what_the_session_one_does_for_its_tool() {
        let git = AlwaysAllow::Command {
            program: "git".into(),
        };
        let spec = project_rule("run_shell", &git, "/src/a").unwrap();
        assert_eq!(spec.rule, "run_shell(git:*)");
        assert_eq!(spec.decision, RuleDecision::Allow);
        assert_eq!(spec.project.as_deref(), Some("/src/a"));
        let mut set = RuleSet::new();
        set.add_spec(&spec, "t").unwrap();
        let ws = Path::new("/src/a");
        let allows =
            |tool: &str, cmd: &str| set.decide(tool, &json!({"command": cmd}), ws).is_some();
        assert!(allows("run_shell", "git status"));
        assert!(allows("run_shell", "git"));
        assert!(!allows("run_shell", "gitk"));
        assert!(!allows("run_shell", "git status && rm -rf x"));
        assert!(
            !allows("run_shell", "git -c core.pager=sh log"),
            "a risky option asks"
        );
        assert!(!allows("exec_command", "git status"), "no other tool");
    }

    #[test]
    fn a_kept_tool_allowance_names_the_tool_and_odd_names_are_refused() {
        let write = AlwaysAllow::Tool {
            name: "write_file".into(),
        };
        assert_eq!(
            project_rule("write_file", &write, "/k").unwrap().rule,
            "write_file"
        );
        let glob = AlwaysAllow::Tool {
            name: "mcp__x__*".into(),
        };
        assert!(matches!(
            project_rule("mcp__x__*", &glob, "/k"),
            Err(ProjectRuleError::Unkeepable(_))
        ));
        let spaced = AlwaysAllow::Command {
            program: "my prog".into(),
        };
        assert!(matches!(
            project_rule("run_shell", &spaced, "/k"),
            Err(ProjectRuleError::Unkeepable(_))
        ));
    }

    #[test]
    fn a_folder_claiming_to_be_a_worktree_of_a_repository_keys_as_itself_for_rules_and_trust() {
        let repo = tempfile::tempdir().unwrap();
        cairn_testkit::git::repo_with(repo.path(), &[("a.txt", "a\n")]);
        let real = tempfile::tempdir().unwrap();
        let wt = real.path().join("wt");
        cairn_testkit::git::git(
            repo.path(),
            &["worktree", "add", "-q", wt.to_str().unwrap()],
        );
        let key = project_key(repo.path());
        assert_eq!(project_key(&wt), key);
        std::fs::create_dir(wt.join("sub")).unwrap();
        assert_eq!(project_key(&wt.join("sub")), key, "a folder inside it too");
        // A folder whose `.git` says it is a worktree of the repository, unlisted there.
        let fake = tempfile::tempdir().unwrap();
        let admin = fake.path().join("admin");
        std::fs::create_dir(&admin).unwrap();
        let common = repo.path().join(".git");
        std::fs::write(admin.join("commondir"), format!("{}\n", common.display())).unwrap();
        std::fs::write(admin.join("HEAD"), "ref: refs/heads/claimed\n").unwrap();
        let dotgit = fake.path().join(".git");
        std::fs::write(admin.join("gitdir"), format!("{}\n", dotgit.display())).unwrap();
        std::fs::write(&dotgit, format!("gitdir: {}\n", admin.display())).unwrap();
        let claimed = git2::Repository::discover(fake.path()).unwrap();
        assert!(claimed.is_worktree(), "git takes it for a worktree");
        let own = std::fs::canonicalize(fake.path()).unwrap();
        assert_eq!(project_key(fake.path()), own.display().to_string());
        // The MCP and hook trust key follows the same rule.
        assert_eq!(crate::mcp_trust::key(&wt), key);
        assert_eq!(
            crate::mcp_trust::key(fake.path()),
            fake.path().display().to_string()
        );
    }

    #[test]
    fn the_key_outside_git_is_the_canonical_folder() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("a");
        std::fs::create_dir(&inner).unwrap();
        let key = project_key(&inner.join("..").join("a"));
        assert_eq!(
            key,
            std::fs::canonicalize(&inner).unwrap().display().to_string()
        );
    }
}
