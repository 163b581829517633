//! Unit tests of rule parsing and matching.
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
                project: None,
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
        project: None,
    };
    assert!(s.add_spec(&ok, "t").is_ok());
    let bad = RuleSpec {
        rule: "run_shell(cargo test)".into(),
        decision: RuleDecision::Allow,
        matches: vec!["cargo test -p x".into()],
        not_match: vec![],
        project: None,
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
        project: None,
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

#[test]
fn a_rule_limited_to_a_project_applies_only_under_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("permissions.toml");
    std::fs::write(
        &f,
        "[[rule]]\nrule = \"write_file\"\ndecision = \"allow\"\nproject = \"/src/a\"\n\n\
         [[rule]]\nrule = \"run_shell(make:*)\"\ndecision = \"allow\"\n",
    )
    .unwrap();
    let ws = Path::new("/w");
    let write = json!({"path": "x.txt"});
    let load = |project: Option<&str>| {
        let mut s = RuleSet::new();
        s.load_file_for(&f, false, project).unwrap();
        s
    };
    let in_a = load(Some("/src/a"));
    let rule = in_a.decide("write_file", &write, ws).unwrap();
    assert_eq!(rule.decision, RuleDecision::Allow);
    assert_eq!(rule.project.as_deref(), Some("/src/a"));
    // The global rule applies everywhere, the limited one nowhere else.
    for s in [load(Some("/src/b")), load(Some("/src/a/sub")), load(None)] {
        assert!(s.decide("write_file", &write, ws).is_none());
        let make = s.decide("run_shell", &json!({"command": "make all"}), ws);
        assert_eq!(make.map(|r| r.project.clone()), Some(None));
    }
    let mut plain = RuleSet::new();
    plain.load_file(&f, false).unwrap();
    assert_eq!(plain.rules().len(), 1, "no project is current");
}

#[test]
fn a_project_file_cannot_limit_or_allow_with_the_project_field() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("permissions.toml");
    std::fs::write(
        &f,
        "[[rule]]\nrule = \"write_file\"\ndecision = \"allow\"\nproject = \"/src/a\"\n\n\
         [[rule]]\nrule = \"run_shell(curl:*)\"\ndecision = \"deny\"\nproject = \"/elsewhere\"\n",
    )
    .unwrap();
    let mut s = RuleSet::new();
    s.load_file_for(&f, true, Some("/src/a")).unwrap();
    // The allow is ignored even for its own key; the deny binds, its field ignored.
    assert_eq!(s.rules().len(), 1);
    assert_eq!(s.rules()[0].decision, RuleDecision::Deny);
    assert_eq!(s.rules()[0].project, None);
}

#[test]
fn the_project_field_round_trips_and_is_omitted_when_none() {
    #[derive(Serialize, Deserialize)]
    struct File {
        rule: Vec<RuleSpec>,
    }
    let global = RuleSpec {
        rule: "read_thing".into(),
        decision: RuleDecision::Allow,
        matches: vec![],
        not_match: vec![],
        project: None,
    };
    let limited = RuleSpec {
        project: Some("/src/a".into()),
        ..global.clone()
    };
    let text = toml::to_string(&File {
        rule: vec![global.clone()],
    })
    .unwrap();
    assert!(!text.contains("project"), "{text}");
    let text = toml::to_string(&File {
        rule: vec![global.clone(), limited.clone()],
    })
    .unwrap();
    assert!(text.contains("project = \"/src/a\""), "{text}");
    let back: File = toml::from_str(&text).unwrap();
    assert_eq!(back.rule, vec![global, limited]);
}

/// `Network(...)` rules: one home for the hosts sandboxed commands reach through the proxy
/// and the URLs `web_fetch` reaches; deny wins; an address is named only by a literal rule.
#[test]
fn network_rules_match_hosts_for_the_proxy_and_web_fetch() {
    let s = set(&[
        ("Network(*.crates.io)", RuleDecision::Allow),
        ("Network(evil.crates.io)", RuleDecision::Deny),
        ("Network(127.0.0.1)", RuleDecision::Allow),
    ]);
    let d = |h: &str| s.decide_host(h).map(|r| r.decision);
    assert_eq!(d("index.crates.io"), Some(RuleDecision::Allow));
    assert_eq!(d("evil.crates.io"), Some(RuleDecision::Deny));
    assert_eq!(d("crates.io"), None);
    assert!(s.names_address("127.0.0.1".parse().unwrap()));
    assert!(!s.names_address("169.254.169.254".parse().unwrap()));
    let ws = Path::new("/w");
    let fetch = |u: &str| {
        s.decide("web_fetch", &json!({ "url": u }), ws)
            .map(|r| r.decision)
    };
    assert_eq!(fetch("https://EVIL.crates.io./x"), Some(RuleDecision::Deny));
    assert_eq!(
        fetch("https://static.crates.io/x"),
        Some(RuleDecision::Allow)
    );
    assert_eq!(fetch("https://example.com/"), None);
    // A network rule says nothing about commands or paths.
    assert!(s
        .decide("run_shell", &json!({"command": "curl index.crates.io"}), ws)
        .is_none());
    let bad = Rule::parse("Network(a b)", RuleDecision::Allow, "t");
    assert!(bad.is_err());
    let mut ex = RuleSet::new();
    ex.add_spec(
        &RuleSpec {
            rule: "Network(*.pypi.org)".into(),
            decision: RuleDecision::Deny,
            matches: vec!["upload.pypi.org".into()],
            not_match: vec!["pypi.org".into()],
            project: None,
        },
        "t",
    )
    .unwrap();
}
