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
    /// grant itself permissions.
    pub fn load_file(&mut self, path: &Path, untrusted: bool) -> Result<(), RuleError> {
        let text = match std::fs::read_to_string(path) {
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
        for spec in file.rule {
            if untrusted && spec.decision == RuleDecision::Allow {
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
        self.rules.push(rule);
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
        }
    }

    /// What a tool names as its call's subject.
    fn of_subject(subject: &'a PermissionSubject) -> Self {
        Target {
            command: subject.rule_command(),
            paths: subject.rule_paths(),
        }
    }
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
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn set(rules: &[(&str, RuleDecision)]) -> RuleSet {
        let mut s = RuleSet::new();
        for (r, d) in rules {
            s.add_spec(
                &RuleSpec {
                    rule: r.to_string(),
                    decision: *d,
                    matches: vec![],
                    not_match: vec![],
                },
                "test",
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        s
    }

    #[test]
    fn command_prefix_rules() {
        let s = set(&[("run_shell(npm test:*)", RuleDecision::Allow)]);
        let ws = Path::new("/w");
        let d = |c: &str| {
            s.decide("run_shell", &json!({"command": c}), ws)
                .map(|r| r.decision)
        };
        assert_eq!(d("npm test"), Some(RuleDecision::Allow));
        assert_eq!(d("npm test -- --watch"), Some(RuleDecision::Allow));
        assert_eq!(d("npm testx"), None);
        assert_eq!(d("npm test; rm -rf /"), None);
        assert_eq!(d("npm test && curl x | sh"), None);
        assert_eq!(d("npm run build"), None);
    }

    #[test]
    fn deny_beats_ask_beats_allow_and_sees_inside_compounds() {
        let s = set(&[
            ("run_shell(git:*)", RuleDecision::Allow),
            ("run_shell(git push:*)", RuleDecision::Deny),
            ("run_shell(git commit:*)", RuleDecision::Ask),
        ]);
        let ws = Path::new("/w");
        let d = |c: &str| {
            s.decide("run_shell", &json!({"command": c}), ws)
                .map(|r| r.decision)
        };
        assert_eq!(d("git status"), Some(RuleDecision::Allow));
        assert_eq!(d("git push origin main"), Some(RuleDecision::Deny));
        assert_eq!(d("git status && git push"), Some(RuleDecision::Deny));
        assert_eq!(d("git commit -m x"), Some(RuleDecision::Ask));
        assert_eq!(d("git push $(echo origin)"), Some(RuleDecision::Deny));
    }

    /// The README's table for `deny run_shell(rm:*)`, exactly.
    #[test]
    fn deny_rules_see_through_wrappers_as_the_readme_says() {
        let s = set(&[("run_shell(rm:*)", RuleDecision::Deny)]);
        let ws = Path::new("/w");
        for tool in ["run_shell", "exec_command", "shell"] {
            for c in [
                "rm -rf x",
                "command rm x",
                "env FOO=1 rm x",
                "timeout 5 rm x",
                "echo x | xargs rm",
                "bash -c 'rm x'",
                "sh -lc \"cd a && rm x\"",
                "/bin/rm x",
                "$'\\x72m' x",
                "r\\m x",
                "find . -exec rm {} ';'",
                "ls; rm x",
                "echo $(rm x)",
            ] {
                let d = s.decide(tool, &json!({ "command": c }), ws);
                assert_eq!(
                    d.map(|r| r.decision),
                    Some(RuleDecision::Deny),
                    "{tool}: {c}"
                );
            }
            for c in [
                "X=rm; $X x",
                "$(echo rm) x",
                "echo 'rm x' | sh",
                "bash -c \"$CMD\"",
            ] {
                let args = json!({ "command": c });
                assert!(s.decide(tool, &args, ws).is_none(), "{c}");
                assert!(s.uncertain(tool, &args, ws).is_some(), "{c}");
            }
            for c in ["ls", "rmdir x", "git rm x", "command -v rm", "echo rm"] {
                let args = json!({ "command": c });
                assert!(s.decide(tool, &args, ws).is_none(), "{c}");
                assert!(s.uncertain(tool, &args, ws).is_none(), "{c}");
            }
        }
        // Path tools are not command tools.
        assert!(s.decide("write_file", &json!({"path": "rm"}), ws).is_none());
    }

    #[test]
    fn allow_rules_do_not_cover_risky_options_after_their_words() {
        let s = set(&[("run_shell(git log:*)", RuleDecision::Allow)]);
        let ws = Path::new("/w");
        let d = |c: &str| {
            s.decide("run_shell", &json!({ "command": c }), ws)
                .is_some()
        };
        assert!(d("git log --oneline -n 5"));
        assert!(d("git log -p src"));
        assert!(!d("git log --output=/tmp/x"));
        assert!(!d("git log --outp=/tmp/x"));
        assert!(!d("git log --ext-diff"));
        assert!(
            s.decide("exec_command", &json!({"command": "git log"}), ws)
                .is_none(),
            "an allow rule covers only the tool it names"
        );
    }

    #[test]
    fn path_and_tool_glob_rules() {
        let s = set(&[
            ("write_file(src/**)", RuleDecision::Allow),
            ("mcp__github__*", RuleDecision::Ask),
        ]);
        let ws = Path::new("/w");
        assert!(s
            .decide("write_file", &json!({"path": "src/a/b.rs"}), ws)
            .is_some());
        assert!(s
            .decide("write_file", &json!({"path": "src/../secrets.txt"}), ws)
            .is_none());
        assert!(s
            .decide("write_file", &json!({"path": "/w/src/x.rs"}), ws)
            .is_some());
        assert!(s
            .decide("write_file", &json!({"path": "../w2/src/x"}), ws)
            .is_none());
        assert!(s
            .decide("mcp__github__create_issue", &json!({}), ws)
            .is_some());
        assert!(s.decide("mcp__gitlab__x", &json!({}), ws).is_none());
    }

    #[test]
    fn examples_are_checked_at_load() {
        let mut s = RuleSet::new();
        let ok = RuleSpec {
            rule: "run_shell(cargo test:*)".into(),
            decision: RuleDecision::Allow,
            matches: vec!["cargo test".into(), "cargo test -p x".into()],
            not_match: vec!["cargo testing".into(), "cargo test; rm x".into()],
        };
        assert!(s.add_spec(&ok, "t").is_ok());
        let bad = RuleSpec {
            rule: "run_shell(cargo test)".into(),
            decision: RuleDecision::Allow,
            matches: vec!["cargo test -p x".into()],
            not_match: vec![],
        };
        let err = s.add_spec(&bad, "t").unwrap_err();
        assert!(
            err.to_string().contains("should match but does not"),
            "{err}"
        );
        let bad = RuleSpec {
            rule: "run_shell(npm test:*)".into(),
            decision: RuleDecision::Allow,
            matches: vec![],
            not_match: vec!["npm test -- -u".into()],
        };
        let err = s.add_spec(&bad, "t").unwrap_err();
        assert!(
            err.to_string().contains("should not match but does"),
            "{err}"
        );
        assert!(Rule::parse("run_shell(ls; rm)", RuleDecision::Allow, "t").is_err());
        assert!(Rule::parse("write_file(src/**", RuleDecision::Allow, "t").is_err());
    }

    #[test]
    fn untrusted_files_cannot_allow() {
        let dir = std::env::temp_dir().join(format!("cairn-rules-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("permissions.toml");
        std::fs::write(
            &f,
            "[[rule]]\nrule = \"run_shell(rm:*)\"\ndecision = \"allow\"\n\n[[rule]]\nrule = \"run_shell(curl:*)\"\ndecision = \"deny\"\n",
        )
        .unwrap();
        let mut s = RuleSet::new();
        s.load_file(&f, true).unwrap();
        assert_eq!(s.rules().len(), 1);
        assert_eq!(s.rules()[0].decision, RuleDecision::Deny);
        std::fs::write(&f, "[[rule]]\nrule = 5\n").unwrap();
        assert!(s.load_file(&f, false).is_err());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn path_rules_see_through_symlinks() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(ws.join("secrets")).unwrap();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        symlink("secrets", ws.join("alias")).unwrap();
        symlink("../secrets", ws.join("src/leak")).unwrap();
        let s = set(&[
            ("write_file(secrets/**)", RuleDecision::Deny),
            ("write_file(src/**)", RuleDecision::Allow),
        ]);
        let d = |p: &str| {
            s.decide("write_file", &json!({"path": p}), &ws)
                .map(|r| r.decision)
        };
        assert_eq!(d("alias/key"), Some(RuleDecision::Deny));
        assert_eq!(d("src/leak/key"), Some(RuleDecision::Deny));
        assert_eq!(d("src/main.rs"), Some(RuleDecision::Allow));
        let allow_only = set(&[("write_file(src/**)", RuleDecision::Allow)]);
        assert!(
            allow_only
                .decide("write_file", &json!({"path": "src/leak/key"}), &ws)
                .is_none(),
            "an allow rule does not ride on a symlink that leads elsewhere"
        );
        let targets = ["src/a.rs".to_string(), "secrets/b".to_string()];
        assert_eq!(
            s.decide_targets("write_file", &json!({}), &ws, &targets)
                .map(|r| r.decision),
            Some(RuleDecision::Deny)
        );
    }

    #[test]
    fn subjects_are_matched_as_the_arguments_were() {
        use crate::subject::{CommandRun, PermissionSubject};
        let s = set(&[
            ("run_shell(rm:*)", RuleDecision::Deny),
            ("run_shell(ls:*)", RuleDecision::Allow),
            ("write_file(secrets/**)", RuleDecision::Deny),
            ("mcp__fs__*(private/**)", RuleDecision::Ask),
        ]);
        let ws = Path::new("/w");
        let d = |tool: &str, subject: &PermissionSubject| {
            s.decide_subject(tool, subject, ws).map(|r| r.decision)
        };
        let run = |c: &str| PermissionSubject::command(Some(CommandRun::new(c)));
        assert_eq!(d("run_shell", &run("rm -rf x")), Some(RuleDecision::Deny));
        assert_eq!(d("exec_command", &run("rm x")), Some(RuleDecision::Deny));
        assert_eq!(d("run_shell", &run("ls -la")), Some(RuleDecision::Allow));
        assert_eq!(
            d("exec_command", &run("ls")),
            None,
            "allow rules name their tool"
        );
        // A command an MCP tool names is bound by deny rules on commands, as before.
        let mcp = PermissionSubject::opaque(&json!({"command": "rm x", "path": "private/k"}));
        assert_eq!(d("mcp__sh__run", &mcp), Some(RuleDecision::Deny));
        assert_eq!(
            d(
                "mcp__fs__read",
                &PermissionSubject::opaque(&json!({"path": "private/k"}))
            ),
            Some(RuleDecision::Ask)
        );
        let writes = PermissionSubject::writes(["src/a", "secrets/b"]);
        assert_eq!(d("write_file", &writes), Some(RuleDecision::Deny));
        assert_eq!(
            d("write_file", &PermissionSubject::reads(["secrets/b"])),
            Some(RuleDecision::Deny)
        );
        assert_eq!(d("write_file", &PermissionSubject::none()), None);
        let opaque = run("X=rm; $X x");
        assert!(s.decide_subject("run_shell", &opaque, ws).is_none());
        assert!(s.uncertain_subject("run_shell", &opaque, ws).is_some());
    }
}
