//! What a workspace's extensions are, as one typed view both faces list: its hooks (and
//! whether each runs), its Agent Skills and its slash commands, each with where it comes from.

use std::path::Path;

use serde::Serialize;
use ts_rs::TS;

use crate::commands::{CommandSource, CommandView};
use crate::hooks::HookSource;

/// One hook command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct HookView {
    /// Its event (`PreToolUse`, …).
    pub event: String,
    /// Its tool-name pattern as written (empty: every tool).
    pub matcher: String,
    /// The shell command.
    pub command: String,
    /// Seconds it may run.
    pub timeout_secs: u32,
    /// The user's or the repository's.
    pub source: CommandSource,
    /// Its file.
    pub file: String,
    /// Whether it runs (a repository's hooks run only once trusted).
    pub trusted: bool,
}

/// One Agent Skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct SkillView {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The user's or the repository's.
    pub source: CommandSource,
    /// Its folder.
    pub dir: String,
    /// Only the user invokes it (as a slash command); the model is not told of it.
    pub user_only: bool,
}

/// Everything a session in the workspace gets from hooks, skills and commands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ExtensionsView {
    /// Hooks: the user's, then the project's.
    pub hooks: Vec<HookView>,
    /// The project's hook file (it may not exist).
    pub project_hooks_file: String,
    /// Agent Skills, project first.
    pub skills: Vec<SkillView>,
    /// Slash commands: built-ins, then user and project commands, then user-only skills.
    pub commands: Vec<CommandView>,
    /// Problems with the files (each left out only what it concerns).
    pub warnings: Vec<String>,
    /// The project's command (and skill) files with `` !`cmd` `` lines or `allowed-tools`
    /// that wait for the workspace trust (empty once trusted).
    pub held_commands: Vec<String>,
    /// What the user's `~/.claude` holds that Cairn would read once they opt in (empty
    /// once they did, or when there is nothing).
    pub claude_user_files: Vec<String>,
}

/// The project's runnable command files the workspace trust does not cover yet.
fn held_commands(workspace: &Path) -> Vec<String> {
    let files = crate::commands::runnable_project_files(workspace);
    if files.is_empty() || crate::hooks::project_files_trusted(workspace) {
        return Vec::new();
    }
    files
        .into_iter()
        .map(|(p, _)| p.display().to_string())
        .collect()
}

/// The extensions of `workspace`.
pub fn view(workspace: &Path) -> ExtensionsView {
    let loaded = crate::hooks::load(workspace);
    let hook = |d: &crate::hooks::HookDef, trusted: bool| HookView {
        event: d.event.clone(),
        matcher: d.matcher_text.clone(),
        command: d.command.clone(),
        timeout_secs: u32::try_from(d.timeout_secs).unwrap_or(u32::MAX),
        source: match d.source {
            HookSource::User(_) => CommandSource::User,
            HookSource::Project(_) => CommandSource::Project,
        },
        file: d.source.path().display().to_string(),
        trusted,
    };
    let hooks = loaded
        .active
        .iter()
        .map(|d| hook(d, true))
        .chain(loaded.held.iter().map(|d| hook(d, false)))
        .collect();
    let (skills, skill_warnings) = crate::skills::discover(workspace);
    let mut warnings = loaded.warnings;
    warnings.extend(skill_warnings);
    ExtensionsView {
        hooks,
        project_hooks_file: crate::hooks::config::project_path(workspace)
            .display()
            .to_string(),
        skills: skills
            .into_iter()
            .map(|s| SkillView {
                name: s.name,
                description: s.description,
                source: s.source.into(),
                dir: s.dir.display().to_string(),
                user_only: s.user_only,
            })
            .collect(),
        commands: crate::commands::views(workspace),
        warnings,
        held_commands: held_commands(workspace),
        claude_user_files: crate::claude_home::offered()
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
    }
}
