//! Pins every cell of the decision order: mode × kind of call × shell policy × approver answer,
//! through real sessions (the tool records whether it ran).

use crate::common;
mod trust;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply, FnTool, ScriptedApprover};
use cairn_engine::{Session, ShellPolicy, ToolOutput, ToolRegistry};
use cairn_protocol::{ApprovalDecision, Event, Mode, RiskLevel, ToolMeta};
use common::*;
use serde_json::json;

/// Kinds of call: (tool, arguments).
fn kinds(outside: &str) -> Vec<(&'static str, &'static str, serde_json::Value)> {
    vec![
        ("read", "read_file", json!({"path": "a.txt"})),
        ("write_in", "write_file", json!({"path": "src/a.txt"})),
        ("write_out", "write_file", json!({"path": outside})),
        (
            "write_protected",
            "write_file",
            json!({"path": ".git/hooks/pre-commit"}),
        ),
        ("exec_safe", "run_shell", json!({"command": "git status"})),
        (
            "exec_unsafe",
            "run_shell",
            json!({"command": "rm -rf build"}),
        ),
        (
            "exec_compound",
            "run_shell",
            json!({"command": "git status && rm -rf build"}),
        ),
    ]
}

/// Expected outcome per shell policy [approve, workspace, sandbox (enforced), all]:
/// Y = runs without asking, N = refused without asking, ? = the approver decides.
fn expected(mode: Mode, kind: &str) -> &'static str {
    match (mode, kind) {
        (_, "read") => "YYYY",
        (_, "write_out") => "NNNN",
        (Mode::Discuss | Mode::Plan, _) => "NNNN",
        (_, "write_protected") => "????",
        (Mode::Auto, _) => "YYYY",
        (Mode::Interactive, "write_in") => "????",
        (Mode::Interactive, "exec_safe") => "?YYY",
        (Mode::Interactive, "exec_unsafe") => "??YY",
        (Mode::Interactive, "exec_compound") => "??YY",
        other => panic!("no expectation for {other:?}"),
    }
}

#[tokio::test]
async fn every_cell_of_the_approval_matrix() {
    let outside = TempDir::new();
    let outside_path = outside.0.join("x.txt").display().to_string();
    let policies = [
        (ShellPolicy::Approve, false),
        (ShellPolicy::Workspace, false),
        (ShellPolicy::Sandbox, true),
        (ShellPolicy::All, false),
    ];
    let mut cells = 0;
    for mode in [Mode::Discuss, Mode::Plan, Mode::Interactive, Mode::Auto] {
        for (kind, tool, args) in kinds(&outside_path) {
            let row = expected(mode, kind).as_bytes();
            for (pi, (policy, enforced)) in policies.iter().enumerate() {
                for answer in [ApprovalDecision::Once, ApprovalDecision::Deny] {
                    let dir = TempDir::new();
                    let ran = Arc::new(AtomicUsize::new(0));
                    let r = ran.clone();
                    let meta = match tool {
                        "read_file" => ToolMeta::read_only("file"),
                        "write_file" => ToolMeta::mutating("file", RiskLevel::Medium, &["write"]),
                        _ => ToolMeta::mutating("shell", RiskLevel::High, &["exec"]),
                    };
                    let mut reg = ToolRegistry::new();
                    reg.register(FnTool::new(tool, meta, move |_, _| {
                        let r = r.clone();
                        async move {
                            r.fetch_add(1, Ordering::SeqCst);
                            Ok(ToolOutput::text("ran"))
                        }
                    }));
                    let llm = FakeLlm::new(vec![
                        FakeReply::tool("c", tool, args.clone()),
                        FakeReply::text("ok"),
                    ]);
                    let approver = ScriptedApprover::new(vec![], answer);
                    let s = Session::builder(config(&dir, mode), Arc::new(llm))
                        .tools(reg)
                        .approver(Arc::new(approver.clone()))
                        .permission_rules(Default::default(), *policy, *enforced)
                        .build();
                    let ev = collect(s.run("go")).await;
                    let asked = ev.iter().any(|e| matches!(e, Event::PermissionRequired(_)));
                    let did_run = ran.load(Ordering::SeqCst) == 1;
                    let cell = format!("{mode:?} {kind} {policy:?} answer={answer:?}");
                    match row[pi] {
                        b'Y' => assert!(!asked && did_run, "{cell}: expected to run unasked"),
                        b'N' => assert!(!asked && !did_run, "{cell}: expected refusal unasked"),
                        b'?' => {
                            assert!(asked, "{cell}: expected a prompt");
                            assert_eq!(did_run, answer == ApprovalDecision::Once, "{cell}");
                        }
                        _ => unreachable!(),
                    }
                    cells += 1;
                }
            }
        }
    }
    assert_eq!(cells, 4 * 7 * 4 * 2);
}

#[tokio::test]
async fn without_an_approver_the_default_is_a_clear_error() {
    let dir = TempDir::new();
    let llm = FakeLlm::new(vec![FakeReply::tool(
        "w",
        "write_file",
        json!({"path": "a.txt", "content": "x"}),
    )]);
    let mut reg = ToolRegistry::new();
    reg.register(write_tool());
    let s = Session::builder(config(&dir, Mode::Interactive), Arc::new(llm))
        .tools(reg)
        .build();
    let ev = collect(s.run("go")).await;
    let err = ev
        .iter()
        .find_map(|e| match e {
            Event::Error(e) => Some(e),
            _ => None,
        })
        .expect("an error");
    assert_eq!(err.error_type, "approval_unavailable");
    assert!(err.error.contains("write_file") && err.error.contains("no approver"));
    assert_eq!(turn_end(&ev).status, cairn_protocol::TurnStatus::Error);
    assert!(!dir.0.join("a.txt").exists());
}

#[tokio::test]
async fn the_always_offer_reaches_the_event_and_the_approver() {
    use cairn_protocol::AlwaysAllow;
    let dir = TempDir::new();
    let mut reg = ToolRegistry::new();
    for (name, meta) in [
        (
            "write_file",
            ToolMeta::mutating("file", RiskLevel::Medium, &["write"]),
        ),
        (
            "run_shell",
            ToolMeta::mutating("shell", RiskLevel::High, &["exec"]),
        ),
    ] {
        reg.register(FnTool::new(name, meta, |_, _| async {
            Ok(ToolOutput::text("ran"))
        }));
    }
    let llm = FakeLlm::new(vec![
        FakeReply::tool("w", "write_file", json!({"path": "a.txt"})),
        FakeReply::tool("s", "run_shell", json!({"command": "cargo test"})),
        FakeReply::tool("r", "run_shell", json!({"command": "echo hi > out.txt"})),
        FakeReply::text("ok"),
    ]);
    let approver = ScriptedApprover::new(vec![], ApprovalDecision::Once);
    let s = Session::builder(config(&dir, Mode::Interactive), Arc::new(llm))
        .tools(reg)
        .approver(Arc::new(approver.clone()))
        .build();
    let ev = collect(s.run("go")).await;
    let offered: Vec<Option<AlwaysAllow>> = ev
        .iter()
        .filter_map(|e| match e {
            Event::PermissionRequired(p) => Some(p.always_allow.clone()),
            _ => None,
        })
        .collect();
    let expected = vec![
        Some(AlwaysAllow::Tool {
            name: "write_file".into(),
        }),
        Some(AlwaysAllow::Command {
            program: "cargo".into(),
        }),
        None,
    ];
    assert_eq!(offered, expected, "in the events");
    let asked: Vec<Option<AlwaysAllow>> = approver
        .seen()
        .into_iter()
        .map(|r| r.always_allow)
        .collect();
    assert_eq!(asked, expected, "in the approver's requests");
}

/// Catastrophic commands (removing `/`, home, the workspace or a folder above it; recursive
/// chmod/chown of those) ask in every mode and shell policy, sandboxed or not, allowlisted or
/// not, and are never offered "always allow". The tool is a fake: nothing is removed.
#[tokio::test]
async fn catastrophic_commands_ask_in_every_mode_and_are_never_offered_always() {
    use cairn_engine::PermissionState;
    let commands = [
        "rm -rf /",
        "rm -r -f /",
        "rm --recursive --force /",
        "rm -fr /",
        "rm -rf --no-preserve-root /",
        "rm -rf /*",
        "rm -rf ~",
        "rm -rf ~/",
        "rm -rf $HOME",
        "rm -rf \"$HOME\"",
        "rm -rf ${HOME}/*",
        "echo $(rm -rf ~)",
        "cd / && rm -rf *",
        "cd ~ && rm -rf .",
        "cd /tmp; cd / ; rm -rf usr/..",
        "sudo rm -rf /",
        "bash -c 'rm -rf ~'",
        "sh -c 'cd / && rm -rf *'",
        "env rm -rf /",
        "/bin/rm -rf /",
        "timeout 9 rm -rf $HOME",
        "find / -delete",
        "find ~ -delete",
        "find / -exec rm -rf {} +",
        "chmod -R 777 /",
        "chown -R nobody ~",
        "chmod --recursive 000 $HOME",
        "rm -rf {ws}",
        "rm -rf {ws}/..",
        "rm -rf .",
    ];
    let policies = [
        (ShellPolicy::Approve, false),
        (ShellPolicy::Workspace, false),
        (ShellPolicy::Workspace, true),
        (ShellPolicy::Sandbox, true),
        (ShellPolicy::All, false),
    ];
    let mut cells = 0;
    for mode in [Mode::Interactive, Mode::Auto] {
        for (policy, enforced) in policies {
            for allowlisted in [false, true] {
                for command in commands {
                    let dir = TempDir::new();
                    let command = command.replace("{ws}", &dir.0.display().to_string());
                    let ran = Arc::new(AtomicUsize::new(0));
                    let r = ran.clone();
                    let mut reg = ToolRegistry::new();
                    reg.register(FnTool::new(
                        "run_shell",
                        ToolMeta::mutating("shell", RiskLevel::High, &["exec"]),
                        move |_, _| {
                            let r = r.clone();
                            async move {
                                r.fetch_add(1, Ordering::SeqCst);
                                Ok(ToolOutput::text("ran"))
                            }
                        },
                    ));
                    let llm = FakeLlm::new(vec![
                        FakeReply::tool("c", "run_shell", json!({ "command": command })),
                        FakeReply::text("ok"),
                    ]);
                    let mut cfg = config(&dir, mode);
                    let mut state = PermissionState {
                        mode,
                        ..Default::default()
                    };
                    if allowlisted {
                        cfg.allowed_commands = vec!["rm".into(), "chmod".into(), "find".into()];
                        state.allow_commands =
                            ["rm", "chmod", "chown", "find", "echo", "cd", "sudo", "bash"]
                                .map(String::from)
                                .into_iter()
                                .collect();
                    }
                    let s = Session::builder(cfg, Arc::new(llm))
                        .tools(reg)
                        .approver(Arc::new(ScriptedApprover::new(
                            vec![],
                            ApprovalDecision::Deny,
                        )))
                        .permission_state(state)
                        .permission_rules(Default::default(), policy, enforced)
                        .build();
                    let ev = collect(s.run("go")).await;
                    let cell = format!(
                        "{mode:?} {policy:?} sandboxed={enforced} allowlisted={allowlisted}: \
                         {command}"
                    );
                    let asked: Vec<_> = ev
                        .iter()
                        .filter_map(|e| match e {
                            Event::PermissionRequired(p) => Some(p),
                            _ => None,
                        })
                        .collect();
                    assert_eq!(asked.len(), 1, "{cell}: expected one prompt");
                    assert!(
                        asked[0].reason.contains("catastrophic"),
                        "{cell}: {}",
                        asked[0].reason
                    );
                    assert_eq!(asked[0].always_allow, None, "{cell}: offered always-allow");
                    assert_eq!(ran.load(Ordering::SeqCst), 0, "{cell}: ran");
                    cells += 1;
                }
            }
        }
    }
    assert_eq!(cells, 2 * 5 * 2 * commands.len());
}

/// A session's "always allow `git`" and `--allow-command "git log"` cover their words, not
/// an option after them that reconfigures git or writes a file.
#[test]
fn session_grants_and_allowlists_do_not_cover_risky_options() {
    use cairn_engine::PermissionEngine;
    let meta = ToolMeta::mutating("shell", RiskLevel::High, &["exec"]);
    let ask = |p: &PermissionEngine, c: &str| {
        p.evaluate("run_shell", &meta, &json!({ "command": c }))
            .is_ask()
    };
    let mut p = PermissionEngine::new("/w".into(), Mode::Interactive, vec![]);
    p.allow_command_for_session("git status");
    assert!(!ask(&p, "git log --oneline"));
    assert!(ask(&p, "git -c core.pager=sh log"));
    assert!(ask(&p, "git log --output=/tmp/x"));
    let p = PermissionEngine::new("/w".into(), Mode::Interactive, vec!["git log".into()]);
    assert!(!ask(&p, "git log -n 1"));
    assert!(ask(&p, "git log --out=/tmp/x"));
}
