//! Under bubblewrap, shell commands cannot write outside the workspace or into `.git`, and a
//! vault value never reaches the model. Where bwrap cannot run, the test says so (and fails
//! when `CAIRN_SANDBOX_TEST=1` demands it); `required` mode then refuses to start.

mod denied_mounts;
mod escalation;
mod network_keep;
mod projects;
mod pty_interrupt;

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{EngineConfig, Session, ShellPolicy, ToolRegistry};
use cairn_policy::sandbox::{bwrap_works, SandboxMode};
use cairn_protocol::{Event, Message, Mode, ToolStatus};
use cairn_runtime::sandbox::exec_environment;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn bubblewrap_confines_shell_commands() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
    std::fs::write(
        state.path().join("vault.toml"),
        "DEPLOY_TOKEN = \"vault-secret-9876\"\n",
    )
    .unwrap();
    if !bwrap_works() {
        let demanded = std::env::var("CAIRN_SANDBOX_TEST").as_deref() == Ok("1");
        let r = exec_environment(
            ws.path(),
            state.path(),
            SandboxMode::Required,
            ShellPolicy::Sandbox,
        );
        assert!(
            r.is_err(),
            "required mode must refuse to start without a sandbox"
        );
        assert!(
            !demanded,
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED sandbox: bubblewrap cannot run here (required mode errors, as checked)");
        return;
    }
    // Outside the workspace and not under /tmp (which the sandbox keeps writable).
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let escape = outside.path().join("escaped.txt");
    let exec = exec_environment(
        ws.path(),
        state.path(),
        SandboxMode::Required,
        ShellPolicy::Sandbox,
    )
    .unwrap();
    assert!(exec.wrapper.is_some());
    let llm = FakeLlm::new(vec![
        FakeReply::tool(
            "a",
            "run_shell",
            json!({"command": format!("echo pwned > {}", escape.display())}),
        ),
        FakeReply::tool(
            "b",
            "run_shell",
            json!({"command": "echo evil > .git/hooks/pre-commit"}),
        ),
        FakeReply::tool(
            "c",
            "run_shell",
            json!({"command": "echo fine > inside.txt && echo token=$DEPLOY_TOKEN"}),
        ),
        FakeReply::text("done"),
    ]);
    let mut cfg = EngineConfig::new(ws.path().to_path_buf(), state.path().to_path_buf(), "m");
    cfg.mode = Mode::Interactive;
    let mut reg = ToolRegistry::new();
    reg.register_all(cairn_tools::core_tools());
    // Interactive mode with the sandbox shell policy: the sandbox is what lets these run unasked.
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .permission_rules(Default::default(), ShellPolicy::Sandbox, true)
        .exec_environment(exec)
        .build();
    let mut stream = s.run("try it");
    let mut events = Vec::new();
    while let Some(e) = stream.recv().await {
        events.push(e);
    }
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::PermissionRequired(_))));
    assert!(
        !escape.exists(),
        "a write outside the workspace escaped the sandbox"
    );
    let hook = std::fs::read_to_string(ws.path().join(".git/hooks/pre-commit")).unwrap_or_default();
    assert!(
        !hook.contains("evil"),
        ".git/hooks was writable inside the sandbox"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("inside.txt"))
            .unwrap()
            .trim(),
        "fine"
    );
    let results: Vec<(String, ToolStatus, String)> = s
        .messages()
        .await
        .into_iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some((r.call_id, r.status, r.content)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3);
    assert!(
        results[0].2.contains("exit code") && !results[0].2.contains("exit code: 0"),
        "{:?}",
        results[0]
    );
    let last = &results[2].2;
    assert!(last.contains("token=[vault:DEPLOY_TOKEN]"), "{last}");
    assert!(!format!("{events:?}").contains("vault-secret-9876"));
}

/// A protected folder that does not exist yet cannot be created from inside the sandbox
/// (`git init`, `mkdir -p .git/hooks`, a background job outliving the command, a dangling
/// `.agent` symlink pointing into the workspace), and the empty mount points the sandbox needs
/// are gone from the workspace afterwards.
#[tokio::test(flavor = "multi_thread")]
async fn missing_protected_folders_cannot_be_created_and_leave_nothing_behind() {
    if !bwrap_works() {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED sandbox: bubblewrap cannot run here");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("agent-data", ws.path().join(".agent")).unwrap();
    let exec = exec_environment(
        ws.path(),
        state.path(),
        SandboxMode::Required,
        ShellPolicy::Sandbox,
    )
    .unwrap();
    let commands = [
        "git init -q . ; mkdir -p .git/hooks ; echo evil > .git/hooks/pre-commit",
        "mkdir -p .cairn && echo '{}' > .cairn/settings.json",
        "mkdir -p agent-data && echo evil > agent-data/x",
        // Outlives the shell unless the sandbox takes it down with the command.
        "(sleep 2; mkdir -p .git/hooks; echo late > .git/hooks/post-checkout) & echo started",
        "echo fine > inside.txt",
    ];
    let mut replies: Vec<FakeReply> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| FakeReply::tool(&format!("c{i}"), "run_shell", json!({ "command": c })))
        .collect();
    replies.push(FakeReply::text("done"));
    let mut cfg = EngineConfig::new(ws.path().to_path_buf(), state.path().to_path_buf(), "m");
    cfg.mode = Mode::Interactive;
    let mut reg = ToolRegistry::new();
    reg.register_all(cairn_tools::core_tools());
    let s = Session::builder(cfg, Arc::new(FakeLlm::new(replies)))
        .tools(reg)
        .permission_rules(Default::default(), ShellPolicy::Sandbox, true)
        .exec_environment(exec)
        .build();
    let mut stream = s.run("try it");
    while stream.recv().await.is_some() {}
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(
        std::fs::read_to_string(ws.path().join("inside.txt"))
            .unwrap()
            .trim(),
        "fine",
        "ordinary writes still work"
    );
    let mut left: Vec<String> = std::fs::read_dir(ws.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(
        left,
        vec![".agent".to_string(), "inside.txt".to_string()],
        "no .git, .cairn or agent-data created, no mount point left behind"
    );
    assert!(std::fs::symlink_metadata(ws.path().join(".agent"))
        .unwrap()
        .file_type()
        .is_symlink());
}

/// Saved sessions are read-only inside the sandbox, wherever the state dir lives (here under
/// `/tmp`, which the sandbox otherwise keeps writable): a sandboxed command cannot rewrite
/// another session's permissions.
#[test]
fn a_sandboxed_command_cannot_write_the_state_dir() {
    if !bwrap_works() {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED: bubblewrap cannot run here");
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let saved = state.path().join("sessions/other/state.json");
    std::fs::create_dir_all(saved.parent().unwrap()).unwrap();
    std::fs::write(&saved, "{\"permissions\":{\"mode\":\"interactive\"}}").unwrap();
    let exec = exec_environment(
        ws.path(),
        state.path(),
        SandboxMode::Required,
        ShellPolicy::Sandbox,
    )
    .unwrap();
    let wrapper = exec.wrapper.clone().unwrap();
    let script = format!(
        "echo '{{\"permissions\":{{\"mode\":\"auto\"}}}}' > {0}; touch {1}/planted; echo ok > ws-ok",
        saved.display(),
        state.path().display()
    );
    let wrapped = wrapper.wrap_guarded(vec!["sh".into(), "-c".into(), script], &[]);
    std::process::Command::new(&wrapped.argv[0])
        .args(&wrapped.argv[1..])
        .current_dir(ws.path())
        .status()
        .unwrap();
    drop(wrapped);
    assert!(
        ws.path().join("ws-ok").exists(),
        "the workspace stays writable"
    );
    assert_eq!(
        std::fs::read_to_string(&saved).unwrap(),
        "{\"permissions\":{\"mode\":\"interactive\"}}"
    );
    assert!(!state.path().join("planted").exists());
}
