//! Persistent permission rules for a session: the user-level file
//! (`<config>/cairn/permissions.toml`, or `CAIRN_PERMISSIONS_FILE`) and the project file
//! `<workspace>/.agent/permissions.toml`, whose allow rules are ignored (a repository cannot
//! grant itself permissions). Also the shell policy from `CAIRN_SHELL_POLICY`.

use std::path::{Path, PathBuf};

use cairn_engine::ShellPolicy;
use cairn_policy::{RuleDecision, RuleSet, RuleSpec};

use crate::RuntimeError;

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

/// Loads every rule that applies in `workspace`; a bad file is a clear configuration error.
pub fn load_rules(workspace: &Path) -> Result<RuleSet, RuntimeError> {
    let mut rules = RuleSet::new();
    if let Some(user) = user_rules_path() {
        rules
            .load_file(&user, false)
            .map_err(|e| RuntimeError::Config(format!("permission rules: {e}")))?;
    }
    rules
        .load_file(&project_rules_path(workspace), true)
        .map_err(|e| RuntimeError::Config(format!("permission rules: {e}")))?;
    Ok(rules)
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

/// Removes rules with this text from the user-level file; returns how many.
pub fn revoke_user_rule(text: &str) -> Result<usize, RuntimeError> {
    let Some(path) = user_rules_path() else {
        return Ok(0);
    };
    let specs = read_specs(&path)?;
    let before = specs.len();
    let kept: Vec<RuleSpec> = specs
        .into_iter()
        .filter(|s| s.rule.trim() != text.trim())
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
