//! Slash commands: a known command name at the very start of the input (`/undo`, `/mode
//! auto`, a user command) is a command; anything else stays a prompt (`/usr/lib/libfoo is
//! missing` included), and `//` escapes a leading slash. Built-ins win over a project or user
//! command of the same name, and the user's own commands win over the project's (a repository
//! never shadows a command the user made). User commands are markdown prompt templates
//! (`$ARGUMENTS`, `$1`…`$9`; front matter `description`, `argument-hint`) from
//! `<config dir>/cairn/commands`, `<workspace>/.agent/commands` and
//! `<workspace>/.claude/commands`, subfolders included as Claude Code names them
//! (`dev/fix-issue.md` is `/fix-issue`, or `/dev:fix-issue` when another command has that
//! name); skills with `disable-model-invocation: true` are commands too.

pub mod extras;

use std::path::{Path, PathBuf};

use cairn_protocol::Mode;
use serde::Serialize;
use ts_rs::TS;

pub use extras::Extras;

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
            "switch the mode: discuss, plan, ask (interactive), auto",
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
    /// Its name (the file's stem; `folder:stem` when another command has the stem).
    pub name: String,
    /// Its name with its subfolders (`dev:fix-issue`), which also invokes it; `None` at
    /// the top of its folder.
    pub namespaced: Option<String>,
    /// What it does (front matter), else its first line; a subfolder command says its
    /// folder, as Claude Code shows it.
    pub description: String,
    /// What to type after the name (front matter `argument-hint`).
    pub argument_hint: Option<String>,
    /// The template (`$ARGUMENTS` replaced by what follows the name).
    pub template: String,
    /// Its file.
    pub path: PathBuf,
    /// The repository's or the user's.
    pub source: SkillSource,
    /// What it asks of its turn (`!` lines are in its template): `allowed-tools`, `model`.
    #[serde(skip)]
    pub extras: Extras,
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
        /// What the command asks of its turn.
        extras: Box<Extras>,
    },
}

/// The folders user commands come from, the user's first (a project command never shadows
/// a user command): Cairn's, then `~/.claude/commands` once the user opted in
/// ([`crate::claude_home`]), then the project's.
pub fn roots(workspace: &Path) -> Vec<(PathBuf, SkillSource)> {
    roots_in(workspace, &crate::config_scope::ConfigScope::default())
}

/// [`roots`] within `scope`.
pub fn roots_in(
    workspace: &Path,
    scope: &crate::config_scope::ConfigScope,
) -> Vec<(PathBuf, SkillSource)> {
    let mut out = Vec::new();
    if let Some(c) = scope.user(crate::reserved::config_dir()) {
        out.push((c.join("commands"), SkillSource::User));
    }
    if let Some(c) = scope.claude_user_dir() {
        out.push((c.join("commands"), SkillSource::User));
    }
    if scope.project_files() {
        out.push((workspace.join(".agent/commands"), SkillSource::Project));
        out.push((workspace.join(".claude/commands"), SkillSource::Project));
    }
    out
}

/// Largest command file read.
const MAX_COMMAND_BYTES: u64 = 1024 * 1024;

/// How deep command subfolders are searched.
const MAX_DEPTH: usize = 8;

/// The `.md` files under `root` with their subfolders (sorted; links are not followed).
fn command_files(root: &Path) -> Vec<(Vec<String>, PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![(Vec::new(), root.to_path_buf())];
    while let Some((folders, dir)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let path = entry.path();
            if kind.is_dir() && folders.len() < MAX_DEPTH {
                let mut sub: Vec<String> = folders.clone();
                sub.push(entry.file_name().to_string_lossy().into_owned());
                stack.push((sub, path));
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "md") {
                out.push((folders.clone(), path));
            }
        }
    }
    out.sort_by(|a, b| (a.0.len(), &a.1).cmp(&(b.0.len(), &b.1)));
    out
}

/// The commands of `workspace` (skills only the user invokes included).
pub fn load(workspace: &Path) -> Commands {
    load_in(workspace, &crate::config_scope::ConfigScope::default())
}

/// [`load`] within `scope` (a session's commands, read at submit time).
pub fn load_in(workspace: &Path, scope: &crate::config_scope::ConfigScope) -> Commands {
    let mut user: Vec<UserCommand> = Vec::new();
    for (root, source) in roots_in(workspace, scope) {
        // The folder is resolved once here (a linked commands folder is fine); below it no
        // link is followed, and each file is opened refusing a link swapped in since.
        let Ok(root) = std::fs::canonicalize(&root) else {
            continue;
        };
        for (folders, path) in command_files(&root) {
            let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                continue;
            };
            let namespaced = (!folders.is_empty()).then(|| format!("{}:{stem}", folders.join(":")));
            let taken = |n: &str| user.iter().any(|c| c.name == n) || Builtin::named(n).is_some();
            let name = match &namespaced {
                _ if !taken(&stem) => stem,
                Some(ns) if !taken(ns) => ns.clone(),
                _ => continue,
            };
            let Ok(text) = cairn_tools::read_text_no_links(&path, MAX_COMMAND_BYTES) else {
                continue;
            };
            let (front, body) = crate::front_matter::parse_lenient(&text);
            let mut description = front.get("description").cloned().unwrap_or_else(|| {
                body.lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim()
                    .to_string()
            });
            if !folders.is_empty() {
                let origin = match source {
                    SkillSource::Project => "project",
                    SkillSource::User => "user",
                };
                description = format!("{description} ({origin}:{})", folders.join("/"));
            }
            let mut extras = Extras::from_front(&front, source, path.clone());
            extras.shadows_user = source == SkillSource::Project
                && user
                    .iter()
                    .any(|c| c.source == SkillSource::User && stem_of(&c.path) == stem_of(&path));
            user.push(UserCommand {
                extras,
                name,
                namespaced,
                description,
                argument_hint: front
                    .get("argument-hint")
                    .cloned()
                    .filter(|h| !h.is_empty()),
                template: body.to_string(),
                path,
                source,
            });
        }
    }
    let skills = crate::skills::discover_in(workspace, scope)
        .0
        .into_iter()
        .filter(|s| s.user_only)
        .collect();
    Commands { user, skills }
}

/// A command file's name without its folders.
fn stem_of(path: &Path) -> Option<String> {
    path.file_stem().map(|s| s.to_string_lossy().into_owned())
}

/// The project's command files (and skills only the user invokes) that would run something
/// or widen what the agent may do (`` !`cmd` `` lines, `allowed-tools`), with their text: the
/// workspace trust covers them as they are now, and an edit withdraws it.
pub fn runnable_project_files(workspace: &Path) -> Vec<(PathBuf, String)> {
    let loaded = load(workspace);
    let commands = loaded
        .user
        .into_iter()
        .filter(|c| c.source == SkillSource::Project)
        .map(|c| c.path);
    let skills = loaded
        .skills
        .into_iter()
        .filter(|s| s.source == SkillSource::Project)
        .map(|s| s.dir.join("SKILL.md"));
    commands
        .chain(skills)
        .filter_map(|path| {
            let text = cairn_tools::read_text_no_links(&path, MAX_COMMAND_BYTES).ok()?;
            let (front, body) = crate::front_matter::parse_lenient(&text);
            let runs = !extras::shell_lines(body).is_empty()
                || front
                    .get("allowed-tools")
                    .is_some_and(|t| !t.trim().is_empty());
            runs.then_some((path, text))
        })
        .collect()
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
    /// An MCP server's prompt (`/mcp__server__prompt`), while the server runs.
    #[serde(rename = "mcp")]
    Mcp,
}

impl CommandSource {
    /// The name lists show.
    pub fn as_str(self) -> &'static str {
        match self {
            CommandSource::Builtin => "built-in",
            CommandSource::Project => "project",
            CommandSource::User => "user",
            CommandSource::Mcp => "mcp",
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
    /// What to type after the name (a command's `argument-hint`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub argument_hint: Option<String>,
    /// What its front matter `allowed-tools` grant during its turn (Claude Code's rules as
    /// written; a project's only once trusted).
    pub allowed_tools: Vec<String>,
    /// The model its front matter names for its turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub model: Option<String>,
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
            argument_hint: None,
            allowed_tools: Vec::new(),
            model: None,
        })
        .collect();
    out.extend(cmds.user.into_iter().map(|c| CommandView {
        name: c.name,
        description: c.description,
        source: c.source.into(),
        file: c.path.display().to_string(),
        skill: false,
        argument_hint: c.argument_hint,
        allowed_tools: c.extras.allowed_tools,
        model: c.extras.model,
    }));
    out.extend(cmds.skills.into_iter().map(|s| {
        let extras = skill_extras(&s);
        CommandView {
            name: s.name,
            description: s.description,
            source: s.source.into(),
            file: s.dir.display().to_string(),
            skill: true,
            argument_hint: None,
            allowed_tools: extras.allowed_tools,
            model: extras.model,
        }
    }));
    out
}

/// What a skill invoked as a command asks of its turn (its `SKILL.md` front matter).
fn skill_extras(skill: &Skill) -> Extras {
    let text = cairn_tools::read_text_no_links(&skill.dir.join("SKILL.md"), MAX_COMMAND_BYTES)
        .unwrap_or_default();
    let (front, _) = crate::skills::front_matter(&text);
    Extras::from_front(&front, skill.source, skill.dir.clone())
}

/// `template` with `$ARGUMENTS` replaced by `args` and `$1`…`$9` by its words (missing
/// ones by nothing); `args` is appended when the template names none of them.
pub fn expand(template: &str, args: &str) -> String {
    let positional = (1..=9).any(|i| template.contains(&format!("${i}")));
    if !template.contains("$ARGUMENTS") && !positional {
        return if args.is_empty() {
            template.to_string()
        } else {
            format!("{}\n\n{args}", template.trim_end())
        };
    }
    let words: Vec<&str> = args.split_whitespace().collect();
    let mut out = String::with_capacity(template.len() + args.len());
    let mut rest = template;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            rest = tail;
            continue;
        }
        match after.chars().next().and_then(|c| c.to_digit(10)) {
            Some(d @ 1..=9) if !after[1..].starts_with(|c: char| c.is_ascii_digit()) => {
                out.push_str(words.get(d as usize - 1).copied().unwrap_or(""));
                rest = &after[1..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
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
    if let Some(c) = commands.user.iter().find(|c| c.name == name).or_else(|| {
        commands
            .user
            .iter()
            .find(|c| c.namespaced.as_deref() == Some(name))
    }) {
        return Parsed::Expanded {
            name: name.to_string(),
            prompt: expand(&c.template, args),
            extras: Box::new(c.extras.clone()),
        };
    }
    if let Some(s) = commands.skills.iter().find(|s| s.name == name) {
        let body = crate::skills::skill_contents(&s.dir)
            .map(|(text, _)| text)
            .unwrap_or_default();
        let (front, body) = crate::skills::front_matter(&body);
        return Parsed::Expanded {
            name: name.to_string(),
            prompt: expand(body, args),
            extras: Box::new(Extras::from_front(&front, s.source, s.dir.clone())),
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
                namespaced: None,
                argument_hint: None,
                description: "d".into(),
                template: "Fix issue $ARGUMENTS now".into(),
                path: PathBuf::new(),
                source: SkillSource::Project,
                extras: Extras::default(),
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
                prompt: "Fix issue 42 and 43 now".into(),
                extras: Box::default(),
            }
        );
        let p = "/usr/lib/libfoo is missing";
        assert_eq!(parse(p, &c), Parsed::Prompt(p.into()));
        assert_eq!(parse("//undo", &c), Parsed::Prompt("/undo".into()));
        assert_eq!(parse(" /undo", &c), Parsed::Prompt(" /undo".into()));
        assert_eq!(expand("No args here", "x"), "No args here\n\nx");
        assert_eq!(
            expand(
                "Move $1 to $2 ($ARGUMENTS; $3, $10, $$1, US$ 5)",
                "a.rs src/"
            ),
            "Move a.rs to src/ (a.rs src/; , $10, $a.rs, US$ 5)"
        );
        assert!(mode_within(Mode::Plan, Mode::Interactive));
        assert!(!mode_within(Mode::Auto, Mode::Interactive));
    }
}
