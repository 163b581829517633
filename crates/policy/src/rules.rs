//! Persistent permission rules: `allow` / `ask` / `deny` entries such as
//! `run_shell(npm test:*)`, `write_file(src/**)` or `mcp__github__*`. Deny beats ask beats
//! allow. Each rule may carry `match` / `not_match` examples, checked when the rules load.

use std::path::Path;

use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};

use crate::effective::{program_name, Effective, Word};
use crate::lexical::{fold_dots, Climb};
use crate::shell::ShellAnalysis;
use crate::subject::PermissionSubject;

/// What a rule decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleDecision {
    /// Run without asking.
    Allow,
    /// Always ask, even in auto mode.
    Ask,
    /// Refuse without asking.
    Deny,
}

/// Errors loading rules.
#[derive(Debug, thiserror::Error)]
pub enum RuleError {
    /// The file is not valid TOML of the expected shape.
    #[error("{file}: {reason}")]
    Parse { file: String, reason: String },
    /// A rule's text is not `tool` or `tool(specifier)`.
    #[error("rule `{rule}`: {reason}")]
    Invalid { rule: String, reason: String },
    /// An example in `match` / `not_match` disagrees with the rule.
    #[error("rule `{rule}`: example `{example}` should {expected} but {actual}")]
    Example {
        rule: String,
        example: String,
        expected: &'static str,
        /// What the rule does with the example instead.
        actual: &'static str,
    },
}

/// One rule as written in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSpec {
    /// `tool`, `tool(specifier)`; tool names may use globs (`mcp__github__*`).
    pub rule: String,
    /// allow / ask / deny.
    pub decision: RuleDecision,
    /// Examples the rule must match (commands, paths or tool names).
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// Examples the rule must not match.
    #[serde(default)]
    pub not_match: Vec<String>,
    /// The folder key of the project this rule is limited to (see
    /// `cairn_runtime::permissions::project_key`); `None` = everywhere. Only user-level rules
    /// may be limited: in a project's own file the field is ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RuleFile {
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

#[derive(Debug, Clone)]
enum Spec {
    /// Any call of the tool.
    Any,
    /// Command words: exact, or a prefix when `prefix` is set (`npm test:*`).
    Command { words: Vec<String>, prefix: bool },
    /// A path glob relative to the workspace.
    Path(PathGlob),
    /// A host pattern of a `Network(...)` rule: the hosts sandboxed commands reach through
    /// the proxy and the hosts of the URLs `web_fetch` reaches.
    Host(crate::net_rules::HostPattern),
}

/// A path rule's glob; `dir/**` also matches `dir` itself (the folder, not only what is in
/// it), so a rule on a folder's contents covers walking or naming the folder.
#[derive(Debug, Clone)]
struct PathGlob {
    glob: GlobMatcher,
    /// `dir` for a glob `dir/**`.
    folder: Option<GlobMatcher>,
}

impl PathGlob {
    fn new(text: &str) -> Result<Self, globset::Error> {
        let folder = match text.strip_suffix("/**") {
            Some(dir) if !dir.is_empty() => Some(Glob::new(dir)?.compile_matcher()),
            _ => None,
        };
        Ok(PathGlob {
            glob: Glob::new(text)?.compile_matcher(),
            folder,
        })
    }

    fn is_match(&self, rel: &str) -> bool {
        self.glob.is_match(rel) || self.folder.as_ref().is_some_and(|f| f.is_match(rel))
    }
}

/// A loaded, validated rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The original text, shown to users.
    pub text: String,
    /// What it decides.
    pub decision: RuleDecision,
    /// Where it came from (file path or "session").
    pub source: String,
    /// The project (folder key) the rule is limited to; `None` = everywhere.
    pub project: Option<String>,
    tool: GlobMatcher,
    spec: Spec,
}

impl Rule {
    /// Parses `tool` or `tool(specifier)`.
    pub fn parse(text: &str, decision: RuleDecision, source: &str) -> Result<Rule, RuleError> {
        let invalid = |reason: &str| RuleError::Invalid {
            rule: text.to_string(),
            reason: reason.to_string(),
        };
        let text_t = text.trim();
        let (tool, spec) = match text_t.find('(') {
            Some(i) => {
                let inner = text_t[i + 1..]
                    .strip_suffix(')')
                    .ok_or_else(|| invalid("missing closing `)`"))?;
                (&text_t[..i], Some(inner.trim()))
            }
            None => (text_t, None),
        };
        if tool.is_empty()
            || !tool
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-*?".contains(c))
        {
            return Err(invalid(
                "the tool name must be letters, digits, `_`, `-` or a glob",
            ));
        }
        let tool_glob = Glob::new(tool)
            .map_err(|e| invalid(&e.to_string()))?
            .compile_matcher();
        let spec = match spec {
            _ if tool == crate::net_rules::NETWORK_RULE_TOOL => Spec::Host(
                crate::net_rules::HostPattern::parse(spec.unwrap_or(""))
                    .ok_or_else(|| invalid("a network rule names a host: `Network(example.com)`, `Network(*.example.com)`"))?,
            ),
            None | Some("") | Some("*") => Spec::Any,
            Some(s) if is_exec_tool(tool) => {
                let (body, prefix) = match s.strip_suffix(":*") {
                    Some(b) => (b, true),
                    None => (s, false),
                };
                let words = match ShellAnalysis::of(body) {
                    ShellAnalysis::Simple(w) => w,
                    _ => return Err(invalid("a command rule must be one plain command")),
                };
                Spec::Command { words, prefix }
            }
            Some(s) => Spec::Path(PathGlob::new(s).map_err(|e| invalid(&e.to_string()))?),
        };
        Ok(Rule {
            text: text_t.to_string(),
            decision,
            source: source.to_string(),
            project: None,
            tool: tool_glob,
            spec,
        })
    }

    /// Whether the rule's tool glob names `tool`.
    pub fn matches_tool(&self, tool: &str) -> bool {
        self.tool.is_match(tool)
    }

    /// The glob of a path rule (`secrets/**`), `None` for other rules.
    pub fn path_glob(&self) -> Option<&str> {
        match &self.spec {
            Spec::Path(p) => Some(p.glob.glob().glob()),
            _ => None,
        }
    }

    /// Whether the rule applies to a call of `tool` with `args` in `workspace` (its `command`
    /// and `path` arguments; see [`Rule::matches_subject`]).
    pub fn matches(&self, tool: &str, args: &serde_json::Value, workspace: &Path) -> bool {
        self.command_match(tool, &Target::of_args(args), workspace) == CommandMatch::Yes
    }

    /// Whether the rule applies to a call of `tool` that asks for `subject` in `workspace`.
    pub fn matches_subject(
        &self,
        tool: &str,
        subject: &PermissionSubject,
        workspace: &Path,
    ) -> bool {
        self.command_match(tool, &Target::of_subject(subject), workspace) == CommandMatch::Yes
    }

    /// Whether the rule applies, and for a deny or ask rule on commands whether it could
    /// apply to a part of the command that cannot be analysed.
    fn command_match(&self, tool: &str, target: &Target<'_>, workspace: &Path) -> CommandMatch {
        let command = target.command;
        // A deny or ask rule on a command-running tool binds every tool that runs a command
        // (`run_shell(rm:*)` also stops `exec_command`).
        if let Spec::Host(pattern) = &self.spec {
            // A network rule binds every tool by the hosts it reaches.
            let hit = |h: &String| pattern.matches(h);
            let applies = !target.hosts.is_empty()
                && match self.decision {
                    RuleDecision::Allow => target.hosts.iter().all(hit),
                    _ => target.hosts.iter().any(hit),
                };
            return if applies {
                CommandMatch::Yes
            } else {
                CommandMatch::No
            };
        }
        let named = self.tool.is_match(tool)
            || (self.decision != RuleDecision::Allow
                && command.is_some()
                && EXEC_TOOLS.iter().any(|t| self.tool.is_match(t)));
        if !named {
            return CommandMatch::No;
        }
        let yes = |b: bool| {
            if b {
                CommandMatch::Yes
            } else {
                CommandMatch::No
            }
        };
        match &self.spec {
            Spec::Any => CommandMatch::Yes,
            Spec::Command { words, prefix } => {
                let Some(cmd) = command else {
                    return CommandMatch::No;
                };
                match self.decision {
                    RuleDecision::Allow => yes(allow_matches(cmd, words, *prefix)),
                    _ => restrict_matches(cmd, words, *prefix),
                }
            }
            Spec::Path(_) => yes(self.matches_paths(tool, &target.paths, workspace)),
            Spec::Host(_) => CommandMatch::No,
        }
    }

    /// The host pattern of a network rule (`Network(*.crates.io)`), `None` for other rules.
    pub fn host_pattern(&self) -> Option<&crate::net_rules::HostPattern> {
        match &self.spec {
            Spec::Host(p) => Some(p),
            _ => None,
        }
    }

    /// Whether a path rule applies to a call of `tool` that writes `paths`. Each path is
    /// matched both as written (normalised) and where its symlinks really lead: a deny or
    /// ask rule applies when any path matches either way, an allow rule only when every path
    /// matches both ways (a symlinked alias cannot ride on it).
    pub fn matches_paths(&self, tool: &str, paths: &[String], workspace: &Path) -> bool {
        let Spec::Path(glob) = &self.spec else {
            return false;
        };
        if !self.tool.is_match(tool) || paths.is_empty() {
            return false;
        }
        let one = |p: &String| {
            let lexical = relative(workspace, p);
            let physical = crate::paths::physical_path(workspace, p).and_then(|real| {
                real.strip_prefix(crate::paths::canonical_workspace(workspace))
                    .ok()
                    .map(|r| r.to_string_lossy().replace('\\', "/"))
            });
            let hit = |r: &Option<String>| r.as_ref().is_some_and(|r| glob.is_match(r));
            match self.decision {
                RuleDecision::Allow => hit(&lexical) && hit(&physical),
                _ => hit(&lexical) || hit(&physical),
            }
        };
        match self.decision {
            RuleDecision::Allow => paths.iter().all(one),
            _ => paths.iter().any(one),
        }
    }

    /// Checks an example: as a command, a path or a tool name depending on the rule.
    fn example_matches(&self, example: &str) -> bool {
        let ws = Path::new("/workspace");
        match &self.spec {
            Spec::Any => self.tool.is_match(example),
            Spec::Command { .. } => {
                let name = self.tool.glob().glob().replace('*', "x");
                self.matches(&name, &serde_json::json!({ "command": example }), ws)
            }
            Spec::Path(_) => {
                let name = self.tool.glob().glob().replace('*', "x");
                self.matches(&name, &serde_json::json!({ "path": example }), ws)
            }
            Spec::Host(p) => crate::net_rules::ascii_host(example).is_some_and(|h| p.matches(&h)),
        }
    }
}

/// Rules from every source, evaluated together.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads a TOML file of `[[rule]]` tables; a missing file is an empty set. With
    /// `untrusted` (a file inside the workspace), allow rules are ignored: a repository cannot
    /// grant itself permissions. Rules limited to a project are skipped (no project is
    /// current); see [`RuleSet::load_file_for`].
    pub fn load_file(&mut self, path: &Path, untrusted: bool) -> Result<(), RuleError> {
        self.load_file_for(path, untrusted, None)
    }

    /// [`RuleSet::load_file`] in the project whose folder key is `project`: a rule limited to
    /// another project (or to any project when `project` is `None`) is skipped. In an
    /// `untrusted` file the `project` field means nothing and is ignored (the file belongs to
    /// its project anyway, and its allow rules are ignored as ever).
    pub fn load_file_for(
        &mut self,
        path: &Path,
        untrusted: bool,
        project: Option<&str>,
    ) -> Result<(), RuleError> {
        self.load_read_for(path, std::fs::read_to_string(path), untrusted, project)
    }

    /// [`RuleSet::load_file_for`] with what reading the file at `path` gave (a project's
    /// file is read refusing links by the caller); `NotFound` is an empty set.
    pub fn load_read_for(
        &mut self,
        path: &Path,
        read: std::io::Result<String>,
        untrusted: bool,
        project: Option<&str>,
    ) -> Result<(), RuleError> {
        let text = match read {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(RuleError::Parse {
                    file: path.display().to_string(),
                    reason: e.to_string(),
                });
            }
        };
        let file: RuleFile = toml::from_str(&text).map_err(|e| RuleError::Parse {
            file: path.display().to_string(),
            reason: e.to_string(),
        })?;
        for mut spec in file.rule {
            if untrusted {
                if spec.decision == RuleDecision::Allow {
                    continue;
                }
                spec.project = None;
            } else if spec.project.is_some() && spec.project.as_deref() != project {
                continue;
            }
            self.add_spec(&spec, &path.display().to_string())?;
        }
        Ok(())
    }

    /// Adds one rule after checking its examples.
    pub fn add_spec(&mut self, spec: &RuleSpec, source: &str) -> Result<(), RuleError> {
        let rule = Rule::parse(&spec.rule, spec.decision, source)?;
        for ex in &spec.matches {
            if !rule.example_matches(ex) {
                return Err(RuleError::Example {
                    rule: spec.rule.clone(),
                    example: ex.clone(),
                    expected: "match",
                    actual: "does not",
                });
            }
        }
        for ex in &spec.not_match {
            if rule.example_matches(ex) {
                return Err(RuleError::Example {
                    rule: spec.rule.clone(),
                    example: ex.clone(),
                    expected: "not match",
                    actual: "does",
                });
            }
        }
        self.rules.push(Rule {
            project: spec.project.clone(),
            ..rule
        });
        Ok(())
    }

    /// The strongest decision of the rules that apply (deny > ask > allow), with the rule, for
    /// a call's `command` and `path` arguments.
    pub fn decide(&self, tool: &str, args: &serde_json::Value, workspace: &Path) -> Option<&Rule> {
        self.decide_target(tool, &Target::of_args(args), workspace)
    }

    /// The strongest decision of the rules that apply to a call of `tool` asking for
    /// `subject`: command rules match the command it runs (or names), path rules every path
    /// it writes (else every path it reads or names).
    pub fn decide_subject(
        &self,
        tool: &str,
        subject: &PermissionSubject,
        workspace: &Path,
    ) -> Option<&Rule> {
        self.decide_target(tool, &Target::of_subject(subject), workspace)
    }

    fn decide_target(&self, tool: &str, target: &Target<'_>, workspace: &Path) -> Option<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.command_match(tool, target, workspace) == CommandMatch::Yes)
            .max_by_key(|r| r.decision)
    }

    /// The strongest deny or ask rule on commands that could apply to a part of `args`'s
    /// command that cannot be analysed (a computed program, `eval` of a variable, a shell
    /// reading a script file), with why: such a command asks, naming the rule.
    pub fn uncertain(
        &self,
        tool: &str,
        args: &serde_json::Value,
        workspace: &Path,
    ) -> Option<(&Rule, String)> {
        self.uncertain_target(tool, &Target::of_args(args), workspace)
    }

    /// [`RuleSet::uncertain`] for a call of `tool` asking for `subject`.
    pub fn uncertain_subject(
        &self,
        tool: &str,
        subject: &PermissionSubject,
        workspace: &Path,
    ) -> Option<(&Rule, String)> {
        self.uncertain_target(tool, &Target::of_subject(subject), workspace)
    }

    fn uncertain_target(
        &self,
        tool: &str,
        target: &Target<'_>,
        workspace: &Path,
    ) -> Option<(&Rule, String)> {
        self.rules
            .iter()
            .filter_map(|r| match r.command_match(tool, target, workspace) {
                CommandMatch::Maybe(why) => Some((r, why)),
                _ => None,
            })
            .max_by_key(|(r, _)| r.decision)
    }

    /// Like [`RuleSet::decide`] for a call that writes `targets` (paths from a patch, not
    /// only its `path` argument): path rules are matched against every target.
    pub fn decide_targets(
        &self,
        tool: &str,
        args: &serde_json::Value,
        workspace: &Path,
        targets: &[String],
    ) -> Option<&Rule> {
        let target = Target {
            paths: targets.to_vec(),
            ..Target::of_args(args)
        };
        self.decide_target(tool, &target, workspace)
    }

    /// The strongest network rule on `host` (in [`crate::net_rules::ascii_host`] form):
    /// deny > ask > allow. Nothing is resolved: rules match names (and addresses as written).
    pub fn decide_host(&self, host: &str) -> Option<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.host_pattern().is_some_and(|p| p.matches(host)))
            .max_by_key(|r| r.decision)
    }

    /// Whether an allow rule names the address `ip` itself (`Network(127.0.0.1)`): what lets
    /// a sandboxed command reach an address on this machine or its network.
    pub fn names_address(&self, ip: std::net::IpAddr) -> bool {
        self.rules.iter().any(|r| {
            r.decision == RuleDecision::Allow
                && r.host_pattern().is_some_and(|p| p.names_address(ip))
        })
    }

    /// All rules, in load order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Removes rules whose text equals `text`; returns how many.
    pub fn revoke(&mut self, text: &str) -> usize {
        let before = self.rules.len();
        self.rules.retain(|r| r.text != text.trim());
        before - self.rules.len()
    }
}

/// The tools that run a shell command.
const EXEC_TOOLS: &[&str] = &["run_shell", "exec_command", "shell"];

fn is_exec_tool(tool: &str) -> bool {
    EXEC_TOOLS.contains(&tool)
}

/// What rules match in one call: the command line and the paths.
struct Target<'a> {
    command: Option<&'a str>,
    paths: Vec<String>,
    /// The hosts of the URLs the call reaches (ASCII form).
    hosts: Vec<String>,
}

impl<'a> Target<'a> {
    /// A call's `command` and `path` arguments.
    fn of_args(args: &'a serde_json::Value) -> Self {
        Target {
            command: args.get("command").and_then(|c| c.as_str()),
            paths: args
                .get("path")
                .and_then(|c| c.as_str())
                .map(str::to_string)
                .into_iter()
                .collect(),
            hosts: args
                .get("url")
                .and_then(|u| u.as_str())
                .and_then(url_host)
                .into_iter()
                .collect(),
        }
    }

    /// What a tool names as its call's subject.
    fn of_subject(subject: &'a PermissionSubject) -> Self {
        Target {
            command: subject.rule_command(),
            paths: subject.rule_paths(),
            hosts: subject.urls().filter_map(url_host).collect(),
        }
    }
}

/// The host of a URL in ASCII form.
fn url_host(u: &str) -> Option<String> {
    let parsed = url::Url::parse(u.trim()).ok()?;
    crate::net_rules::ascii_host(&parsed.host()?.to_string())
}

/// How a command rule relates to a command.
#[derive(Debug, Clone, PartialEq, Eq)]
enum CommandMatch {
    /// It applies.
    Yes,
    /// It could apply to a part that cannot be analysed (why).
    Maybe(String),
    /// It does not apply.
    No,
}

/// An allow rule covers one plain command that starts with (or is) its words, without an
/// option past them that writes, runs a program or changes configuration.
fn allow_matches(cmd: &str, words: &[String], prefix: bool) -> bool {
    let ShellAnalysis::Simple(w) = ShellAnalysis::of(cmd) else {
        return false;
    };
    if prefix {
        w.len() >= words.len()
            && w[..words.len()] == *words
            && crate::risky_options::risky_option(&w, words.len()).is_none()
    } else {
        w == words
    }
}

/// A deny or ask rule applies to every command the line runs, wrappers unwrapped
/// ([`Effective`]); it could apply wherever a word it compares is computed, or where part of
/// the line cannot be analysed.
fn restrict_matches(cmd: &str, words: &[String], prefix: bool) -> CommandMatch {
    let effective = Effective::of(cmd);
    let mut maybe = None;
    for c in &effective.commands {
        match words_match(words, prefix, c) {
            CommandMatch::Yes => return CommandMatch::Yes,
            CommandMatch::Maybe(why) => maybe = maybe.or(Some(why)),
            CommandMatch::No => {}
        }
    }
    match (maybe, effective.opaque.into_iter().next()) {
        (Some(why), _) | (None, Some(why)) => CommandMatch::Maybe(why),
        (None, None) => CommandMatch::No,
    }
}

fn words_match(rule: &[String], prefix: bool, cmd: &[Word]) -> CommandMatch {
    for (i, r) in rule.iter().enumerate() {
        let Some(c) = cmd.get(i) else {
            return CommandMatch::No;
        };
        if !c.literal {
            return CommandMatch::Maybe(format!("computes the word `{}`", c.text));
        }
        let expected = if i == 0 { program_name(r) } else { r.as_str() };
        if c.text != expected {
            return CommandMatch::No;
        }
    }
    if prefix || cmd.len() == rule.len() {
        CommandMatch::Yes
    } else {
        CommandMatch::No
    }
}

/// `path` relative to `workspace` after lexical normalisation; `None` when outside (a `..`
/// above the root counts as outside).
fn relative(workspace: &Path, path: &str) -> Option<String> {
    let joined = workspace.join(path);
    fold_dots(&joined, Climb::Refuse)?
        .strip_prefix(workspace)
        .ok()
        .map(|p| p.to_string_lossy().replace('\\', "/"))
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
