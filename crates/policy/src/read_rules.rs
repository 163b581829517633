//! Deny path rules as a filter on reading: what a walking tool (grep, list_files, the git
//! tools) skips, and which paths the read-only shell classification will not vouch for. A
//! deny path rule binds a tool's reads when its tool glob names that tool or `read_file`
//! (`*(secrets/**)`, `read_file(secrets/**)`, `grep(secrets/**)`): reading a file's content
//! is reading it, whichever tool does it.

use std::path::{Component, Path, PathBuf};

use crate::paths::canonical_workspace;
use crate::rules::{Rule, RuleDecision, RuleSet};

/// Folder entries a directory check looks at before it gives up and assumes the worst.
const MAX_WALK: usize = 10_000;

/// The deny path rules that bind what one tool reads in one workspace.
#[derive(Debug, Clone, Default)]
pub struct ReadDenials {
    workspace: PathBuf,
    canonical: PathBuf,
    tool: String,
    rules: Vec<Rule>,
}

impl ReadDenials {
    /// The deny path rules of `rules` that bind reads by `tool` in `workspace`.
    pub fn new(rules: &RuleSet, tool: &str, workspace: &Path) -> Self {
        let probe = |r: &Rule, t: &str| r.matches_tool(t);
        ReadDenials {
            workspace: workspace.to_path_buf(),
            canonical: canonical_workspace(workspace),
            tool: tool.to_string(),
            rules: rules
                .rules()
                .iter()
                .filter(|r| r.decision == RuleDecision::Deny && r.path_glob().is_some())
                .filter(|r| probe(r, tool) || probe(r, "read_file"))
                .cloned()
                .collect(),
        }
    }

    /// Whether no rule denies anything (then nothing needs checking).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The first rule (its text), for messages about reads that may reach a denied path.
    pub fn first_rule(&self) -> Option<&Rule> {
        self.rules.first()
    }

    /// The rule that denies reading `path` (relative to the workspace, or absolute), as
    /// written or where its symbolic links lead.
    pub fn denied(&self, path: &Path) -> Option<&Rule> {
        if self.rules.is_empty() {
            return None;
        }
        let text = path.to_string_lossy().into_owned();
        let one = [text];
        self.rules.iter().find(|r| {
            r.matches_paths(&self.tool, &one, &self.workspace)
                || r.matches_paths("read_file", &one, &self.workspace)
        })
    }

    /// The rule that denies something inside the folder `dir` (absolute, or relative to the
    /// workspace), or `dir` itself: a program walking `dir` would read it. A rule with a
    /// literal folder (`secrets/**`) is compared by its path; any other (`**/.env`) by
    /// walking `dir` without following links (a folder too large to walk counts as a hit).
    pub fn denied_within(&self, dir: &Path) -> Option<&Rule> {
        if let Some(r) = self.denied(dir) {
            return Some(r);
        }
        let abs = if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            self.workspace.join(dir)
        };
        let rel = abs
            .strip_prefix(&self.canonical)
            .or_else(|_| abs.strip_prefix(&self.workspace))
            .ok()?
            .to_path_buf();
        let mut walked = None;
        self.rules.iter().find(|r| {
            let glob = r.path_glob().unwrap_or_default();
            let literal = literal_prefix(glob);
            if !literal.as_os_str().is_empty() {
                return literal.starts_with(&rel) || rel.starts_with(&literal);
            }
            *walked.get_or_insert_with(|| self.walk_hits(&abs))
        })
    }

    /// What the sandbox mounts away for these rules, so that a denied path is empty inside
    /// whoever reads it and through whatever link: each rule whose glob is a literal path
    /// in the workspace, alone or followed by `/**` (`secrets/**`, `.env`), gives that
    /// path when it exists. The texts of the rules that name no such path (`**/*.pem`)
    /// come second: the sandbox cannot mount those, the tools' own checks still apply.
    pub fn mountable(&self) -> (Vec<PathBuf>, Vec<String>) {
        let mut paths = Vec::new();
        let mut not = Vec::new();
        for r in &self.rules {
            let glob = r.path_glob().unwrap_or_default();
            let literal = glob
                .strip_suffix("/**/*")
                .or_else(|| glob.strip_suffix("/**"))
                .unwrap_or(glob)
                .trim_start_matches("./");
            let plain = !literal.is_empty()
                && !literal.contains(['*', '?', '[', '{', '\\'])
                && Path::new(literal)
                    .components()
                    .all(|c| matches!(c, Component::Normal(_)));
            if !plain {
                not.push(r.text.clone());
                continue;
            }
            let p = self.workspace.join(literal);
            if std::fs::symlink_metadata(&p).is_ok() && !paths.contains(&p) {
                paths.push(p);
            }
        }
        (paths, not)
    }

    /// Whether a walk of `dir` (no links followed) meets a denied entry, or is too large.
    fn walk_hits(&self, dir: &Path) -> bool {
        let mut pending = vec![dir.to_path_buf()];
        let mut seen = 0usize;
        while let Some(d) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                seen += 1;
                if seen > MAX_WALK {
                    return true;
                }
                let p = e.path();
                if self.denied(&p).is_some() {
                    return true;
                }
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    pending.push(p);
                }
            }
        }
        false
    }
}

/// The leading components of `glob` without glob syntax (`secrets` for `secrets/**`,
/// empty for `**/.env`).
fn literal_prefix(glob: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in Path::new(glob).components() {
        match c {
            Component::Normal(n) => {
                let n = n.to_string_lossy();
                if n.contains(['*', '?', '[', '{', '\\']) {
                    break;
                }
                out.push(n.as_ref());
            }
            Component::CurDir => {}
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::rules::RuleSpec;

    fn rules(specs: &[(&str, RuleDecision)]) -> RuleSet {
        let mut s = RuleSet::new();
        for (rule, decision) in specs {
            s.add_spec(
                &RuleSpec {
                    rule: rule.to_string(),
                    decision: *decision,
                    matches: vec![],
                    not_match: vec![],
                    project: None,
                },
                "test",
            )
            .unwrap();
        }
        s
    }

    #[test]
    fn literal_deny_rules_are_mountable_and_patterns_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(ws.join("secrets")).unwrap();
        std::fs::write(ws.join(".env"), "x").unwrap();
        let set = rules(&[
            ("*(secrets/**)", RuleDecision::Deny),
            ("read_file(.env)", RuleDecision::Deny),
            ("read_file(**/*.pem)", RuleDecision::Deny),
            ("read_file(missing/**)", RuleDecision::Deny),
            ("read_file(docs/**)", RuleDecision::Allow),
        ]);
        let (paths, not) = ReadDenials::new(&set, "run_shell", &ws).mountable();
        assert_eq!(paths, vec![ws.join("secrets"), ws.join(".env")]);
        assert_eq!(not, vec!["read_file(**/*.pem)".to_string()]);
    }

    #[test]
    fn deny_path_rules_bind_reads_of_the_tool_and_of_read_file() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(ws.join("secrets/deep")).unwrap();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(ws.join("src/.env"), "x").unwrap();
        std::os::unix::fs::symlink("secrets", ws.join("alias")).unwrap();
        let set = rules(&[
            ("*(secrets/**)", RuleDecision::Deny),
            ("write_file(src/**)", RuleDecision::Deny),
            ("read_file(**/.env)", RuleDecision::Deny),
            ("*(docs/**)", RuleDecision::Ask),
        ]);
        let d = ReadDenials::new(&set, "grep", &ws);
        let hit = |p: &str| d.denied(Path::new(p)).map(|r| r.text.clone());
        assert_eq!(hit("secrets/key").as_deref(), Some("*(secrets/**)"));
        assert_eq!(hit("secrets").as_deref(), Some("*(secrets/**)"));
        assert_eq!(hit("alias/key").as_deref(), Some("*(secrets/**)"));
        assert!(hit(&ws.join("secrets/x").display().to_string()).is_some());
        assert_eq!(hit("src/.env").as_deref(), Some("read_file(**/.env)"));
        assert_eq!(hit("src/main.rs"), None, "write rules do not bind reads");
        assert_eq!(hit("docs/x"), None, "ask rules do not filter");
        let within = |p: &str| d.denied_within(Path::new(p)).map(|r| r.text.clone());
        assert_eq!(within(".").as_deref(), Some("*(secrets/**)"));
        assert_eq!(within("secrets/deep").as_deref(), Some("*(secrets/**)"));
        assert_eq!(within("src").as_deref(), Some("read_file(**/.env)"));
        let only_secrets =
            ReadDenials::new(&rules(&[("*(secrets/**)", RuleDecision::Deny)]), "ls", &ws);
        assert!(only_secrets.denied_within(Path::new("src")).is_none());
        assert!(ReadDenials::new(&RuleSet::new(), "grep", &ws).is_empty());
    }
}
