//! Trust boundaries in the decision order: Cairn's own folders are never written by tools,
//! and commands reading a process's environment or memory never run unasked.

use std::path::Path;

use cairn_engine::permission::{Decision, PermissionEngine};
use cairn_engine::ShellPolicy;
use cairn_protocol::{Mode, RiskLevel, ToolMeta};
use serde_json::json;

fn write_meta() -> ToolMeta {
    ToolMeta::mutating("file", RiskLevel::Medium, &["write"])
}

fn shell_meta() -> ToolMeta {
    ToolMeta::mutating("shell", RiskLevel::High, &["exec"])
}

fn is_deny(d: &Decision) -> bool {
    !d.is_allow() && !d.is_ask()
}

fn is_ask(d: &Decision) -> bool {
    d.is_ask()
}

#[test]
fn the_state_and_config_folders_are_never_written_by_tools() {
    let d = crate::common::TempDir::new();
    let base = std::fs::canonicalize(&d.0).unwrap();
    let ws = base.join("ws");
    let state_inside = ws.join(".state");
    let state_outside = base.join("state");
    for dir in [&state_inside, &state_outside] {
        std::fs::create_dir_all(dir.join("sessions/s1")).unwrap();
    }
    std::os::unix::fs::symlink(&state_outside, ws.join("state_link")).unwrap();
    for mode in [Mode::Interactive, Mode::Auto] {
        let mut p = PermissionEngine::new(ws.clone(), mode, vec![]);
        p.add_private_dir(&state_inside);
        p.add_private_dir(&state_outside);
        // Even a writable grant covering the state dir does not open it.
        p.grant_directory(&base.display().to_string(), true);
        for path in [
            state_inside
                .join("sessions/s1/state.json")
                .display()
                .to_string(),
            ".state/sessions/s1/state.json".to_string(),
            state_outside
                .join("sessions/s1/state.json")
                .display()
                .to_string(),
            "state_link/sessions/s1/state.json".to_string(),
        ] {
            let decision = p.evaluate("write_file", &write_meta(), &json!({ "path": path }));
            assert!(is_deny(&decision), "{mode:?} {path}: {decision:?}");
        }
        // Unconfined commands that name the state dir need the user.
        let cmd = format!(
            "sed -i s/interactive/auto/ {}/sessions/s1/state.json",
            state_outside.display()
        );
        p.set_shell_policy(ShellPolicy::All, false);
        let decision = p.evaluate("run_shell", &shell_meta(), &json!({ "command": cmd }));
        assert!(is_ask(&decision), "{mode:?}: {decision:?}");
    }
}

#[test]
fn reading_a_process_environment_or_memory_always_asks() {
    let ws = Path::new("/tmp/cairn-trust-ws");
    let allow: Vec<String> = ["grep", "cut", "tr", "cat", "head", "strings", "ps"]
        .map(String::from)
        .to_vec();
    let commands = [
        "grep -a KEY /proc/$PPID/environ",
        "grep -a -o 'OPENAI_API_KEY=.\\{4\\}' /proc/1/environ",
        "cut -c1-20 /proc/$PPID/environ",
        "tr '\\0' '\\n' < /proc/$PPID/environ | rev",
        "cat /proc/self/../1/environ",
        "head -c 64 /proc/self/mem",
        "strings /proc/$PPID/maps",
        "cat /proc/*/cmdline",
        "ps eww",
    ];
    for (mode, sandboxed) in [
        (Mode::Interactive, false),
        (Mode::Auto, false),
        (Mode::Auto, true),
    ] {
        let mut p = PermissionEngine::new(ws.to_path_buf(), mode, allow.clone());
        p.set_shell_policy(ShellPolicy::All, sandboxed);
        for cmd in commands {
            let typed = json!({ "session_id": "1", "input": format!("{cmd}\n") });
            let decision = p.evaluate("input_command", &shell_meta(), &typed);
            assert!(is_ask(&decision), "{mode:?} typed `{cmd}`: {decision:?}");
            let decision = p.evaluate("run_shell", &shell_meta(), &json!({ "command": cmd }));
            assert!(
                is_ask(&decision),
                "{mode:?} sandboxed={sandboxed} `{cmd}`: {decision:?}"
            );
        }
    }
}
