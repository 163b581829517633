//! Unit tests of the decision order, the offers and the boundary helpers.
use super::*;
use cairn_protocol::{RiskLevel, ToolMeta};
use serde_json::json;

fn write_meta() -> ToolMeta {
    ToolMeta::mutating("file", RiskLevel::Medium, &["write"])
}
fn shell_meta() -> ToolMeta {
    ToolMeta::mutating("shell", RiskLevel::High, &["exec"])
}
/// The subject a command-running tool names for `args`.
fn shell_call(args: &serde_json::Value) -> PermissionSubject {
    PermissionSubject::from_arguments(&shell_meta().capabilities, args, None)
}

#[test]
fn fetching_a_local_address_asks_except_in_auto_mode() {
    let web = ToolMeta {
        capabilities: vec!["network".into(), "read".into()],
        ..ToolMeta::read_only("web")
    };
    let ws = std::env::temp_dir().join("cairn-perm-net");
    let fetch =
        |p: &PermissionEngine, url: &str| p.evaluate("web_fetch", &web, &json!({ "url": url }));
    let mut p = PermissionEngine::new(ws, Mode::Interactive, vec![]);
    let d = fetch(&p, "http://169.254.169.254/latest/meta-data/");
    assert!(d.is_ask() && d.reason().contains("local network"), "{d:?}");
    assert!(fetch(&p, "http://localhost:3000/").is_ask());
    let d = fetch(&p, "https://docs.rs/serde");
    assert!(d.is_allow() && !d.is_ask(), "{d:?}");
    p.set_mode(Mode::Plan);
    assert!(
        fetch(&p, "http://127.0.0.1/").is_ask(),
        "read-only modes ask too"
    );
    p.set_mode(Mode::Auto);
    assert!(
        !fetch(&p, "http://127.0.0.1/").is_ask(),
        "auto mode allows it"
    );
}

#[test]
fn commands_naming_a_protected_folder_ask_in_every_mode() {
    let ws = std::env::temp_dir().join("cairn-perm-protected");
    let mut p = PermissionEngine::new(ws.clone(), Mode::Auto, vec![]);
    p.set_shell_policy(ShellPolicy::All, false);
    let shell = |p: &PermissionEngine, c: &str| {
        p.evaluate("run_shell", &shell_meta(), &json!({ "command": c }))
    };
    for c in [
        "echo evil > .git/hooks/post-checkout",
        "cp x ./.git/hooks/pre-commit",
        "sh -c 'cat hook >> .git/config'",
        "rm -rf .agent",
        "mv a .cairn/b",
    ] {
        let d = shell(&p, c);
        assert!(d.is_ask(), "{c}: {d:?}");
        assert!(d.reason().contains("protected"), "{c}: {}", d.reason());
    }
    for c in [
        "git status",
        "cat .gitignore",
        "cat .git/HEAD",
        "ls src/.github",
        "echo git",
        "cargo test --all",
    ] {
        let d = shell(&p, c);
        assert!(!d.is_ask(), "{c}: {d:?}");
    }
    // The sandbox keeps protected folders read-only: no need to ask there.
    p.set_shell_policy(ShellPolicy::All, true);
    assert!(!shell(&p, "echo x > .git/hooks/x").is_ask());
}

#[test]
fn always_allow_offers_a_program_a_tool_or_nothing() {
    use cairn_protocol::AlwaysAllow;
    let command = |c: &str| always_allow("run_shell", &shell_call(&json!({ "command": c })));
    assert_eq!(
        command("cargo test --all"),
        Some(AlwaysAllow::Command {
            program: "cargo".into()
        })
    );
    for compound in [
        "echo hi > out.txt",
        "ls && rm -rf x",
        "cat $(ls)",
        "./script.sh",
        "",
    ] {
        assert_eq!(command(compound), None, "{compound}");
    }
    assert_eq!(
        always_allow("run_shell", &shell_call(&json!({ "command": 7 }))),
        None
    );
    for catastrophic in [
        "rm -rf /",
        "rm -rf ~",
        "sudo rm -fr $HOME",
        "rm -rf .",
        "chmod -R 777 /",
    ] {
        assert_eq!(command(catastrophic), None, "{catastrophic}");
    }
    assert_eq!(
        always_allow(
            "write_file",
            &PermissionSubject::from_arguments(
                &write_meta().capabilities,
                &json!({"path": "a"}),
                None
            )
        ),
        Some(AlwaysAllow::Tool {
            name: "write_file".into()
        })
    );
}

#[test]
fn running_outside_the_sandbox_asks_in_every_mode_and_is_never_remembered() {
    let ws = std::env::temp_dir().join("cairn-perm-unsandboxed");
    let mut p = PermissionEngine::new(ws, Mode::Auto, vec!["git commit".into()]);
    p.set_shell_policy(ShellPolicy::All, true);
    p.allow_tool_for_session("run_shell");
    p.allow_command_for_session("git commit");
    let args = json!({"command": "git commit -m x", "sandbox": false});
    for mode in [Mode::Auto, Mode::Interactive] {
        p.set_mode(mode);
        let d = p.evaluate("run_shell", &shell_meta(), &args);
        assert!(
            d.is_ask() && d.reason().contains("outside the sandbox"),
            "{d:?}"
        );
        let sandboxed = json!({"command": "git commit -m x"});
        assert!(!p.evaluate("run_shell", &shell_meta(), &sandboxed).is_ask());
    }
    for mode in [Mode::Plan, Mode::Discuss] {
        p.set_mode(mode);
        let d = p.evaluate("run_shell", &shell_meta(), &args);
        assert!(!d.is_allow() && !d.is_ask(), "{d:?}");
    }
    assert_eq!(always_allow("run_shell", &shell_call(&args)), None);
    let as_text = json!({"command": "ls", "sandbox": "false"});
    assert_eq!(always_allow("exec_command", &shell_call(&as_text)), None);
    // Without a sandbox the argument changes nothing.
    p.set_mode(Mode::Auto);
    p.set_shell_policy(ShellPolicy::Approve, false);
    assert!(!p.evaluate("run_shell", &shell_meta(), &args).is_ask());
}

#[test]
fn prefix_matching_respects_word_boundaries_and_operators() {
    assert!(command_matches_prefix("ls -la", "ls"));
    assert!(!command_matches_prefix("lsof", "ls"));
    assert!(!command_matches_prefix("ls; rm -rf /", "ls"));
    assert!(!command_matches_prefix("ls && rm x", "ls"));
    assert!(!command_matches_prefix("ls $(rm x)", "ls"));
    assert!(!command_matches_prefix("ls `rm x`", "ls"));
    assert!(!command_matches_prefix("ls > f", "ls"));
    assert!(command_matches_prefix("git status --short", "git status"));
    assert!(!command_matches_prefix("git stash", "git status"));
    assert!(!command_matches_prefix("ls\nrm x", "ls"));
    assert!(command_matches_prefix("'git' status", "git status"));
}

#[test]
fn decision_order() {
    let ws = PathBuf::from("/w");
    let mut p = PermissionEngine::new(ws.clone(), Mode::Interactive, vec!["cargo test".into()]);
    let read = ToolMeta::read_only("file");
    assert!(p
        .evaluate("read_file", &read, &json!({"path": "a"}))
        .is_allow());
    let d = p.evaluate("write_file", &write_meta(), &json!({"path": "a"}));
    assert!(d.is_ask());
    let d = p.evaluate("write_file", &write_meta(), &json!({"path": "../x"}));
    assert!(!d.is_allow() && !d.is_ask());
    let d = p.evaluate(
        "run_shell",
        &shell_meta(),
        &json!({"command": "cargo test -p x"}),
    );
    assert!(d.is_allow() && !d.is_ask());
    let d = p.evaluate(
        "run_shell",
        &shell_meta(),
        &json!({"command": "cargo test; rm -rf ~"}),
    );
    assert!(d.is_ask());
    p.set_mode(Mode::Plan);
    let d = p.evaluate("write_file", &write_meta(), &json!({"path": "a"}));
    assert!(!d.is_allow() && !d.is_ask());
    assert!(p
        .evaluate("read_file", &read, &json!({"path": "a"}))
        .is_allow());
    p.set_mode(Mode::Auto);
    assert!(p
        .evaluate("write_file", &write_meta(), &json!({"path": "a"}))
        .is_allow());
    let d = p.evaluate("write_file", &write_meta(), &json!({"path": "/etc/passwd"}));
    assert!(
        !d.is_allow(),
        "auto mode never writes outside the workspace"
    );
    let d = p.evaluate(
        "write_file",
        &write_meta(),
        &json!({"path": ".git/hooks/pre-commit"}),
    );
    assert!(d.is_ask(), "protected paths ask even in auto mode");
    let d = p.evaluate(
        "write_file",
        &write_meta(),
        &json!({"path": "sub/.GIT/config"}),
    );
    assert!(d.is_ask());
}

#[test]
fn session_allowances() {
    let mut p = PermissionEngine::new(PathBuf::from("/w"), Mode::Interactive, vec![]);
    p.allow_tool_for_session("write_file");
    assert!(p
        .evaluate("write_file", &write_meta(), &json!({"path": "a"}))
        .is_allow());
    p.allow_command_for_session("npm test");
    assert!(p
        .evaluate(
            "run_shell",
            &shell_meta(),
            &json!({"command": "npm run build"})
        )
        .is_allow());
    assert!(p
        .evaluate(
            "run_shell",
            &shell_meta(),
            &json!({"command": "npm x | sh"})
        )
        .is_ask());
    p.allow_command_for_session("rm -rf / ; ls");
    assert_eq!(p.state().allow_commands.len(), 1);
}

#[test]
fn workspace_shell_policy_passes_only_known_safe_commands() {
    let mut p = PermissionEngine::new(PathBuf::from("/w"), Mode::Interactive, vec![]);
    p.set_shell_policy(ShellPolicy::Workspace, false);
    let ask = |p: &PermissionEngine, c: &str| {
        p.evaluate("run_shell", &shell_meta(), &json!({"command": c}))
            .is_ask()
    };
    assert!(!ask(&p, "git status"));
    assert!(!ask(&p, "cat a | wc -l"));
    assert!(ask(&p, "git status && rm x"));
    assert!(ask(&p, "find . -delete"));
    assert!(ask(&p, "cat a > b"));
    // The ask says which part is not read-only.
    let reason = p
        .evaluate(
            "run_shell",
            &shell_meta(),
            &json!({"command": "sort x | uniq -c"}),
        )
        .reason();
    assert!(
        reason.contains("`uniq` is not a known read-only command"),
        "{reason}"
    );
    p.set_shell_policy(ShellPolicy::Sandbox, true);
    assert!(!ask(&p, "make"));
    p.set_shell_policy(ShellPolicy::Sandbox, false);
    assert!(ask(&p, "make"));
    // `workspace` means read-only commands, with or without the sandbox.
    p.set_shell_policy(ShellPolicy::Workspace, true);
    assert!(ask(&p, "rm -rf src README.md"));
    assert!(!ask(&p, "git status"));
    assert!(!ask(&p, "bash -lc 'git status'"));
}

/// `Network(...)` rules are one home for the proxy and `web_fetch` (issue 35): a deny rule
/// refuses the fetch, an allow rule lets it run unasked.
#[test]
fn network_rules_bind_web_fetch() {
    let web = ToolMeta {
        capabilities: vec!["network".into(), "read".into()],
        ..ToolMeta::mutating("web", RiskLevel::Medium, &["network"])
    };
    let mut p = PermissionEngine::new(PathBuf::from("/w"), Mode::Interactive, vec![]);
    let mut rules = cairn_policy::RuleSet::new();
    for (rule, decision) in [
        ("Network(*.evil.example)", cairn_policy::RuleDecision::Deny),
        ("Network(docs.example)", cairn_policy::RuleDecision::Allow),
    ] {
        let spec = cairn_policy::RuleSpec {
            rule: rule.into(),
            decision,
            matches: vec![],
            not_match: vec![],
            project: None,
        };
        assert!(rules.add_spec(&spec, "test").is_ok());
    }
    p.set_rules(rules);
    let fetch =
        |p: &PermissionEngine, url: &str| p.evaluate("web_fetch", &web, &json!({ "url": url }));
    let d = fetch(&p, "https://a.EVIL.example/x");
    assert!(matches!(d, Decision::Deny(_)), "{d:?}");
    let d = fetch(&p, "https://docs.example/page");
    assert!(d.is_allow() && !d.is_ask(), "{d:?}");
    assert!(fetch(&p, "https://other.example/").is_ask());
}

/// Issue 35's friction list: inside the sandbox (reads confined by the boundary, denied
/// paths mounted away) known-safe read-only commands run unasked in interactive mode under
/// the default policy, those that follow links too; without the sandbox they still ask.
#[test]
fn inside_the_sandbox_read_only_commands_run_unasked_in_interactive_mode() {
    let ws = std::env::temp_dir().join("cairn-perm-friction");
    let mut p = PermissionEngine::new(ws, Mode::Interactive, vec![]);
    let ask = |p: &PermissionEngine, c: &str| {
        p.evaluate("run_shell", &shell_meta(), &json!({"command": c}))
            .is_ask()
    };
    let read_only = [
        "grep -R todo .",
        "rg -L todo",
        "find -L . -name x",
        "git branch --show-current",
        "git rev-parse HEAD",
        "base64 a.bin",
        "tac log.txt",
        "numfmt --to=iec 2048",
        "sha256sum a b",
    ];
    p.set_shell_policy(ShellPolicy::Approve, false);
    for c in read_only {
        assert!(ask(&p, c), "{c} runs unasked without a sandbox");
    }
    p.set_shell_policy(ShellPolicy::Approve, true);
    for c in read_only {
        assert!(!ask(&p, c), "{c} still asks inside the sandbox");
    }
    for c in [
        "sha256sum -c sums",
        "cat /etc/hosts",
        "rm x",
        "make",
        "uniq a b",
    ] {
        assert!(ask(&p, c), "{c} must ask");
    }
    // Following links is no reason to ask inside the sandbox; the rest of the check holds.
    p.set_shell_policy(ShellPolicy::Workspace, true);
    assert!(!ask(&p, "grep -R todo ."));
    p.set_shell_policy(ShellPolicy::Workspace, false);
    assert!(ask(&p, "grep -R todo ."));
}

#[test]
#[allow(clippy::unwrap_used)]
fn symlinks_and_patch_targets_cannot_carry_a_write_past_the_boundary() {
    use std::os::unix::fs::symlink;
    let dir = std::env::temp_dir().join(format!("cairn-perm-{}", std::process::id()));
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    std::fs::create_dir_all(dir.join("out")).unwrap();
    let ws = std::fs::canonicalize(&ws).unwrap();
    symlink(".git/hooks", ws.join("h")).unwrap();
    symlink("../out", ws.join("o")).unwrap();
    let p = PermissionEngine::new(ws.clone(), Mode::Auto, vec![]);
    let write = |path: &str| p.evaluate("write_file", &write_meta(), &json!({"path": path}));
    assert!(
        write("h/pre-commit").is_ask(),
        "a symlink into .git still asks"
    );
    let d = write("o/new.txt");
    assert!(
        !d.is_allow() && !d.is_ask(),
        "a symlink out of the workspace is refused"
    );
    assert!(write("plain.txt").is_allow());
    let patch = |targets: &[&str]| {
        p.evaluate_call(
            "apply_patch",
            &write_meta(),
            &json!({"patch": "…"}),
            Some(targets.iter().map(|t| t.to_string()).collect()),
        )
    };
    assert!(patch(&["a.txt", ".agent/mcp.json"]).is_ask());
    let d = patch(&["a.txt", "../out/x"]);
    assert!(!d.is_allow() && !d.is_ask() && d.reason().contains("../out/x"));
    assert!(patch(&["a.txt", "b.txt"]).is_allow());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn lexical_containment() {
    let ws = Path::new("/w/proj");
    assert!(lexically_inside(ws, "a/b"));
    assert!(lexically_inside(ws, "./a/../b"));
    assert!(lexically_inside(ws, "/w/proj/x"));
    assert!(!lexically_inside(ws, "../proj2/x"));
    assert!(!lexically_inside(ws, "/w/projX"));
    assert!(!lexically_inside(ws, "a/../../x"));
}

#[test]
fn a_command_allowance_is_offered_and_granted_only_for_command_running_tools() {
    use cairn_protocol::{AlwaysAllow, ApprovalDecision};
    // An MCP tool that happens to take a `command` argument does not run it here.
    let args = json!({"command": "cargo test"});
    let mcp = PermissionSubject::opaque(&args);
    let tool = Some(AlwaysAllow::Tool {
        name: "mcp__x__run".into(),
    });
    assert_eq!(always_allow("mcp__x__run", &mcp), tool);
    let mcp_meta = ToolMeta::mutating("mcp", RiskLevel::High, &["mcp"]);
    let default = PermissionSubject::from_arguments(&mcp_meta.capabilities, &args, None);
    assert_eq!(always_allow("mcp__x__run", &default), tool);
    assert_eq!(
        always_allow("run_shell", &shell_call(&args)),
        Some(AlwaysAllow::Command {
            program: "cargo".into()
        })
    );
    // An "always allow this command" answer grants only what was offered.
    let mut p = PermissionEngine::new(PathBuf::from("/w"), Mode::Interactive, vec![]);
    p.remember(
        "mcp__x__run",
        ApprovalDecision::AlwaysCommand,
        tool.as_ref(),
    );
    assert!(p.state().allow_commands.is_empty(), "{:?}", p.state());
    assert!(p.state().allow_tools.contains("mcp__x__run"));
    let d = p.evaluate("run_shell", &shell_meta(), &args);
    assert!(
        d.is_ask(),
        "run_shell does not ride on the MCP tool's answer: {d:?}"
    );
    p.remember("run_shell", ApprovalDecision::AlwaysCommand, None);
    assert!(
        p.state().allow_commands.is_empty(),
        "nothing offered, nothing kept"
    );
    let offered = always_allow("run_shell", &shell_call(&args));
    p.remember(
        "run_shell",
        ApprovalDecision::AlwaysCommand,
        offered.as_ref(),
    );
    assert!(p.state().allow_commands.contains("cargo"));
    assert!(p.evaluate("run_shell", &shell_meta(), &args).is_allow());
}

#[test]
fn decisions_round_trip_with_their_reasons() {
    let s = |t: &str| t.to_string();
    let samples = [
        (
            Decision::Allow(AllowReason::ApprovalFree),
            "read-only or approval-free tool",
        ),
        (Decision::Allow(AllowReason::AutoMode), "auto mode"),
        (
            Decision::Allow(AllowReason::ShellPolicyAll),
            "shell policy `all`",
        ),
        (
            Decision::Allow(AllowReason::Sandboxed),
            "runs inside the OS sandbox",
        ),
        (
            Decision::Allow(AllowReason::KnownSafe),
            "known-safe read-only command",
        ),
        (
            Decision::Allow(AllowReason::Rule {
                rule: s("run_shell(ls)"),
                source: s("f.toml"),
            }),
            "allowed by rule `run_shell(ls)` (f.toml)",
        ),
        (
            Decision::Allow(AllowReason::Allowlisted {
                prefix: s("cargo test"),
            }),
            "command allowlisted (`cargo test`)",
        ),
        (
            Decision::Allow(AllowReason::SessionCommand { program: s("npm") }),
            "`npm` allowed for this session",
        ),
        (
            Decision::Allow(AllowReason::SessionTool {
                tool: s("write_file"),
            }),
            "write_file allowed for this session",
        ),
        (
            Decision::Deny(DenyReason::Rule {
                rule: s("write_file(secrets/**)"),
                source: s("session"),
            }),
            "denied by rule `write_file(secrets/**)` (session)",
        ),
        (
            Decision::Deny(DenyReason::ReadOnlyMode {
                tool: s("write_file"),
                mode: Mode::Plan,
            }),
            "write_file has side effects, and the session is in plan mode (read-only)",
        ),
        (
            Decision::Deny(DenyReason::OutsideWorkspace {
                path: s("../x"),
                workspace: s("/w"),
            }),
            "../x is outside the workspace /w",
        ),
        (
            Decision::Deny(DenyReason::PrivateFolder { path: s("/s/x") }),
            "/s/x is inside Cairn's own state or config folder, which tools never write",
        ),
        (
            Decision::Ask(AskReason::Unsandboxed {
                tool: s("run_shell"),
                command: s("make"),
            }),
            "run_shell asks to run a command outside the sandbox (`sandbox: false`; asked every \
             time, in every mode): make",
        ),
        (
            Decision::Ask(AskReason::ProtectedWrite {
                tool: s("write_file"),
                path: s(".git/x"),
                folder: s(".git"),
            }),
            "write_file writes .git/x, inside the protected `.git` folder (asked in every mode)",
        ),
        (
            Decision::Ask(AskReason::NamesPrivateFolder {
                tool: s("run_shell"),
                folder: s("/s"),
                command: s("cat /s/x"),
            }),
            "run_shell runs a command that names Cairn's own folder /s (asked in every mode): \
             cat /s/x",
        ),
        (
            Decision::Ask(AskReason::NamesProtectedFolder {
                tool: s("run_shell"),
                folder: s(".git"),
                command: s("rm .git/x"),
            }),
            "run_shell runs a command that names the protected `.git` folder (asked in every \
             mode): rm .git/x",
        ),
        (
            Decision::Ask(AskReason::ProcessSecrets {
                tool: s("run_shell"),
                why: s("environ"),
                command: s("cat /proc/1/environ"),
            }),
            "run_shell runs a command that may read another process's secrets (environ; asked \
             in every mode): cat /proc/1/environ",
        ),
        (
            Decision::Ask(AskReason::NamesDeniedPath {
                tool: s("run_shell"),
                path: s("secrets/k"),
                rule: s("`read_file(secrets/**)` (f)"),
                command: s("cat secrets/k"),
            }),
            "run_shell runs a command that names secrets/k, denied by rule \
             `read_file(secrets/**)` (f) (asked in every mode): cat secrets/k",
        ),
        (
            Decision::Ask(AskReason::LocalAddress {
                tool: s("web_fetch"),
                host: s("localhost"),
                url: s("http://localhost/"),
            }),
            "web_fetch reaches localhost, an address on this machine or its local network: \
             http://localhost/",
        ),
        (
            Decision::Ask(AskReason::Catastrophic {
                tool: s("run_shell"),
                why: s("removes /"),
            }),
            "run_shell runs a catastrophic command (asked in every mode): removes /",
        ),
        (
            Decision::Ask(AskReason::UncertainRule {
                rule: s("run_shell(rm:*)"),
                source: s("f"),
                why: s("computes the word `$X`"),
            }),
            "rule `run_shell(rm:*)` (f) may apply: the command computes the word `$X`",
        ),
        (
            Decision::Ask(AskReason::Rule {
                rule: s("run_shell(git push:*)"),
                source: s("f"),
            }),
            "rule `run_shell(git push:*)` (f) asks for this",
        ),
        (
            Decision::Ask(AskReason::Unallowed {
                tool: s("run_shell"),
                effect: Effect::Command { command: s("make") },
                why: None,
            }),
            "run_shell runs a command: make",
        ),
        (
            Decision::Ask(AskReason::Unallowed {
                tool: s("run_shell"),
                effect: Effect::Commands {
                    command: s("a | b"),
                },
                why: Some(s("`b` is not a known read-only command")),
            }),
            "run_shell runs several commands: a | b (`b` is not a known read-only command)",
        ),
        (
            Decision::Ask(AskReason::Unallowed {
                tool: s("run_shell"),
                effect: Effect::OpaqueCommand {
                    command: s("eval $X"),
                    why: s("evaluates text"),
                },
                why: None,
            }),
            "run_shell runs a command that evaluates text: eval $X",
        ),
        (
            Decision::Ask(AskReason::Unallowed {
                tool: s("apply_patch"),
                effect: Effect::Writes {
                    paths: vec![s("a"), s("b")],
                },
                why: None,
            }),
            "apply_patch writes a, b",
        ),
        (
            Decision::Ask(AskReason::Unallowed {
                tool: s("mcp__x__y"),
                effect: Effect::SideEffects,
                why: None,
            }),
            "mcp__x__y has side effects",
        ),
    ];
    for (decision, text) in samples {
        assert_eq!(decision.reason(), text);
        let json = serde_json::to_value(&decision).unwrap_or_else(|e| panic!("{text}: {e}"));
        let back: Decision =
            serde_json::from_value(json.clone()).unwrap_or_else(|e| panic!("{json}: {e}"));
        assert_eq!(back, decision, "{json}");
        assert_eq!(back.reason(), text, "{json}");
        assert!(decision.is_allow() ^ decision.is_deny() ^ decision.is_ask());
    }
}

#[test]
#[allow(clippy::unwrap_used)]
fn a_turns_grants_allow_only_past_what_asks_anyway_and_end_with_it() {
    let ws = PathBuf::from("/w");
    let mut p = PermissionEngine::new(ws, Mode::Interactive, Vec::new());
    let mut grants = cairn_policy::RuleSet::new();
    for rule in ["run_shell(rm:*)", "write_file"] {
        let spec = cairn_policy::RuleSpec {
            rule: rule.into(),
            decision: cairn_policy::RuleDecision::Allow,
            matches: Vec::new(),
            not_match: Vec::new(),
            project: None,
        };
        grants.add_spec(&spec, "allowed-tools of /x").unwrap();
    }
    let rm = json!({"command": "rm build/out.o"});
    assert!(p.evaluate("run_shell", &shell_meta(), &rm).is_ask());
    p.set_turn_grants(grants);
    assert!(p.evaluate("run_shell", &shell_meta(), &rm).is_allow());
    assert!(p
        .evaluate("write_file", &write_meta(), &json!({"path": "a"}))
        .is_allow());
    // Never past a catastrophic command, the boundary, a protected path or plan mode.
    let all = json!({"command": "rm -rf /"});
    assert!(p.evaluate("run_shell", &shell_meta(), &all).is_ask());
    let outside = p.evaluate("write_file", &write_meta(), &json!({"path": "/etc/x"}));
    assert!(!outside.is_allow());
    let git = json!({"path": ".git/config"});
    assert!(p.evaluate("write_file", &write_meta(), &git).is_ask());
    p.set_mode(Mode::Plan);
    assert!(!p.evaluate("run_shell", &shell_meta(), &rm).is_allow());
    p.set_mode(Mode::Interactive);
    // The turn ended: asked again.
    p.end_turn_grants();
    assert!(p.evaluate("run_shell", &shell_meta(), &rm).is_ask());
}
