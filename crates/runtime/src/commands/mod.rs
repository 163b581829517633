//! Slash commands: a known command name at the very start of the input (`/undo`, `/mode
//! auto`, a user command) is a command; anything else stays a prompt (`/usr/lib/libfoo is
//! missing` included), and `//` escapes a leading slash. Built-ins win over a project or user
//! command of the same name. User commands are markdown prompt templates (`$ARGUMENTS`,
//! optional front matter `description`) from `<workspace>/.agent/commands`,
//! `<workspace>/.claude/commands` and `<config dir>/cairn/commands`; skills with
//! `disable-model-invocation: true` are commands too.

mod dispatch;

use std::path::{Path, PathBuf};

use cairn_protocol::Mode;
use serde::Serialize;
use ts_rs::TS;

pub use dispatch::{dispatch, CommandEffect, CommandError, CommandOutcome, Dispatch};

use crate::skills::{Skill, SkillSource};

/// The built-in commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Builtin {
    /// Compact the history now.
    Compact,
    /// Restore the workspace to the change-turn before the last one.
    Undo,
    /// A read-only review of the session's changes.
    Review,
    /// Switch to plan mode (and plan the rest of the line, if any).
    Plan,
    /// Switch the permission mode.
    Mode,
    /// Switch the model.
    Model,
}

impl Builtin {
    /// Every built-in, with its name and what it does.
    pub const ALL: &'static [(Builtin, &'static str, &'static str)] = &[
        (Builtin::Compact, "compact", "compact the conversation now"),
        (
            Builtin::Undo,
            "undo",
            "restore the files to before the last change",
        ),
        (
            Builtin::Review,
            "review",
            "a read-only review of this session's changes",
        ),
        (
            Builtin::Plan,
            "plan",
            "switch to plan mode (and plan what follows)",
        ),
        (
            Builtin::Mode,
            "mode",
            "switch the mode: discuss, plan, interactive, auto",
        ),
        (Builtin::Model, "model", "switch the model"),
    ];

    fn named(name: &str) -> Option<Builtin> {
        Builtin::ALL
            .iter()
            .find(|(_, n, _)| *n == name)
            .map(|(b, _, _)| *b)
    }
}

/// A user command: a prompt template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserCommand {
    /// Its name (the file's stem).
    pub name: String,
    /// What it does (front matter), else its first line.
    pub description: String,
    /// The template (`$ARGUMENTS` replaced by what follows the name).
    pub template: String,
    /// Its file.
    pub path: PathBuf,
    /// The repository's or the user's.
    pub source: SkillSource,
}

/// The commands a workspace has.
#[derive(Debug, Clone, Default)]
pub struct Commands {
    /// User and project commands (a name found twice: the first wins).
    pub user: Vec<UserCommand>,
    /// Skills only the user invokes.
    pub skills: Vec<Skill>,
}

/// What an input is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// A prompt for the model (an escaped `//…` loses one slash).
    Prompt(String),
    /// A built-in command and the rest of the line.
    Builtin(Builtin, String),
    /// A prompt a command expanded to.
    Expanded {
        /// The command's name.
        name: String,
        /// The prompt.
        prompt: String,
    },
}

/// The folders user commands come from, project first.
pub fn roots(workspace: &Path) -> Vec<(PathBuf, SkillSource)> {
    let mut out = vec![
        (workspace.join(".agent/commands"), SkillSource::Project),
        (workspace.join(".claude/commands"), SkillSource::Project),
    ];
    if let Some(c) = crate::reserved::config_dir() {
        out.push((c.join("commands"), SkillSource::User));
    }
    out
}

/// The commands of `workspace` (skills only the user invokes included).
pub fn load(workspace: &Path) -> Commands {
    let mut user: Vec<UserCommand> = Vec::new();
    for (root, source) in roots(workspace) {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        for path in files {
            let Some(name) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                continue;
            };
            if user.iter().any(|c| c.name == name) || Builtin::named(&name).is_some() {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let (front, body) = crate::skills::front_matter(&text);
            let description = front.get("description").cloned().unwrap_or_else(|| {
                body.lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim()
                    .to_string()
            });
            user.push(UserCommand {
                name,
                description,
                template: body.to_string(),
                path,
                source,
            });
        }
    }
    let skills = crate::skills::discover(workspace)
        .0
        .into_iter()
        .filter(|s| s.user_only)
        .collect();
    Commands { user, skills }
}

/// Where a command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[ts(export, export_to = "app/")]
pub enum CommandSource {
    /// Cairn's own.
    #[serde(rename = "built-in")]
    Builtin,
    /// The repository's (`.agent/commands`, `.claude/commands`, its skills).
    #[serde(rename = "project")]
    Project,
    /// The user's (`~/.config/cairn/commands`, the user's skills).
    #[serde(rename = "user")]
    User,
}

impl CommandSource {
    /// The name lists show.
    pub fn as_str(self) -> &'static str {
        match self {
            CommandSource::Builtin => "built-in",
            CommandSource::Project => "project",
            CommandSource::User => "user",
        }
    }
}

impl From<SkillSource> for CommandSource {
    fn from(s: SkillSource) -> Self {
        match s {
            SkillSource::Project => CommandSource::Project,
            SkillSource::User => CommandSource::User,
        }
    }
}

/// One command as lists and the composer's completion show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct CommandView {
    /// Its name (typed after `/`).
    pub name: String,
    /// What it does.
    pub description: String,
    /// Where it comes from.
    pub source: CommandSource,
    /// Its file or skill folder (empty for built-ins).
    pub file: String,
    /// A skill only the user invokes.
    pub skill: bool,
}

/// Every command of `workspace`: built-ins first, then user and project commands, then
/// skills only the user invokes.
pub fn views(workspace: &Path) -> Vec<CommandView> {
    let cmds = load(workspace);
    let mut out: Vec<CommandView> = Builtin::ALL
        .iter()
        .map(|(_, n, d)| CommandView {
            name: n.to_string(),
            description: d.to_string(),
            source: CommandSource::Builtin,
            file: String::new(),
            skill: false,
        })
        .collect();
    out.extend(cmds.user.into_iter().map(|c| CommandView {
        name: c.name,
        description: c.description,
        source: c.source.into(),
        file: c.path.display().to_string(),
        skill: false,
    }));
    out.extend(cmds.skills.into_iter().map(|s| CommandView {
        name: s.name,
        description: s.description,
        source: s.source.into(),
        file: s.dir.display().to_string(),
        skill: true,
    }));
    out
}

/// `template` with `$ARGUMENTS` replaced by `args` (appended when the template has none).
pub fn expand(template: &str, args: &str) -> String {
    if template.contains("$ARGUMENTS") {
        template.replace("$ARGUMENTS", args)
    } else if args.is_empty() {
        template.to_string()
    } else {
        format!("{}\n\n{args}", template.trim_end())
    }
}

/// What `input` is, given the workspace's commands.
pub fn parse(input: &str, commands: &Commands) -> Parsed {
    if let Some(rest) = input.strip_prefix("//") {
        return Parsed::Prompt(format!("/{rest}"));
    }
    let Some(rest) = input.strip_prefix('/') else {
        return Parsed::Prompt(input.to_string());
    };
    let (name, args) = match rest.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (rest, ""),
    };
    if let Some(b) = Builtin::named(name) {
        return Parsed::Builtin(b, args.to_string());
    }
    if let Some(c) = commands.user.iter().find(|c| c.name == name) {
        return Parsed::Expanded {
            name: name.to_string(),
            prompt: expand(&c.template, args),
        };
    }
    if let Some(s) = commands.skills.iter().find(|s| s.name == name) {
        let body = std::fs::read_to_string(s.dir.join("SKILL.md")).unwrap_or_default();
        let (_, body) = crate::skills::front_matter(&body);
        return Parsed::Expanded {
            name: name.to_string(),
            prompt: expand(body, args),
        };
    }
    Parsed::Prompt(input.to_string())
}

/// Whether `/mode requested` stays within `ceiling` (the run's `--mode`): discuss < plan <
/// interactive < auto.
pub fn mode_within(requested: Mode, ceiling: Mode) -> bool {
    fn rank(m: Mode) -> u8 {
        match m {
            Mode::Discuss => 0,
            Mode::Plan => 1,
            Mode::Interactive => 2,
            Mode::Auto => 3,
        }
    }
    rank(requested) <= rank(ceiling)
}

/// The prompt `/review` runs (in a read-only mode).
pub const REVIEW_PROMPT: &str = "Review the changes made in this session so far. Do not \
change any file. For each changed file, list bugs, risks, missing tests and unclear code, \
most important first, with file:line references; end with a short verdict.";

#[cfg(test)]
mod tests {
    use super::*;

    fn cmds() -> Commands {
        Commands {
            user: vec![UserCommand {
                name: "fix".into(),
                description: "d".into(),
                template: "Fix issue $ARGUMENTS now".into(),
                path: PathBuf::new(),
                source: SkillSource::Project,
            }],
            skills: Vec::new(),
        }
    }

    #[test]
    fn only_known_names_at_the_start_are_commands() {
        let c = cmds();
        assert_eq!(
            parse("/undo", &c),
            Parsed::Builtin(Builtin::Undo, String::new())
        );
        assert_eq!(
            parse("/mode auto", &c),
            Parsed::Builtin(Builtin::Mode, "auto".into())
        );
        assert_eq!(
            parse("/fix 42 and 43", &c),
            Parsed::Expanded {
                name: "fix".into(),
                prompt: "Fix issue 42 and 43 now".into()
            }
        );
        let p = "/usr/lib/libfoo is missing";
        assert_eq!(parse(p, &c), Parsed::Prompt(p.into()));
        assert_eq!(parse("//undo", &c), Parsed::Prompt("/undo".into()));
        assert_eq!(parse(" /undo", &c), Parsed::Prompt(" /undo".into()));
        assert_eq!(expand("No args here", "x"), "No args here\n\nx");
        assert!(mode_within(Mode::Plan, Mode::Interactive));
        assert!(!mode_within(Mode::Auto, Mode::Interactive));
    }
}
