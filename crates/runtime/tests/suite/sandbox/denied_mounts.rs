//! Path deny rules are mounts inside the sandbox (issue 35): a folder the rules deny
//! reading is empty inside, so a program the permission engine cannot see into (a script
//! running `grep -R`, which follows links) finds nothing there, through a link either, while
//! it still reads the rest of the workspace.

use std::sync::Arc;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::{EngineConfig, FixedApprover, Session, ShellPolicy, ToolRegistry};
use cairn_policy::sandbox::{bwrap_works, SandboxMode};
use cairn_protocol::{ApprovalDecision, Message, Mode};
use cairn_runtime::sandbox::exec_environment;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_read_denied_folder_is_empty_inside_even_through_a_link() {
    if !bwrap_works() {
        assert!(
            std::env::var("CAIRN_SANDBOX_TEST").as_deref() != Ok("1"),
            "CAIRN_SANDBOX_TEST=1 but bubblewrap cannot run here"
        );
        println!("SKIPPED sandbox: bubblewrap cannot run here");
        return;
    }
    let ws = tempfile::tempdir_in("/var/tmp").unwrap();
    let root = std::fs::canonicalize(ws.path()).unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::create_dir_all(root.join("docs")).unwrap();
    std::fs::write(root.join("secrets/token.txt"), "TOKEN-denied-123\n").unwrap();
    std::fs::write(root.join("docs/readme.txt"), "TOKEN-visible\n").unwrap();
    std::os::unix::fs::symlink("../secrets", root.join("docs/link")).unwrap();
    std::fs::write(
        root.join("reader.sh"),
        "grep -R TOKEN . ; echo reader-ran\n",
    )
    .unwrap();
    let exec = exec_environment(
        &root,
        state.path(),
        SandboxMode::Required,
        ShellPolicy::Approve,
    )
    .unwrap();
    let mut rules = cairn_policy::RuleSet::new();
    rules
        .add_spec(
            &cairn_policy::RuleSpec {
                rule: "*(secrets/**)".into(),
                decision: cairn_policy::RuleDecision::Deny,
                matches: vec![],
                not_match: vec![],
                project: None,
            },
            "user settings",
        )
        .unwrap();
    let llm = FakeLlm::new(vec![
        FakeReply::tool("a", "run_shell", json!({"command": "sh reader.sh"})),
        FakeReply::text("done"),
    ]);
    let mut cfg = EngineConfig::new(root.clone(), state.path().to_path_buf(), "m");
    cfg.mode = Mode::Auto;
    let mut reg = ToolRegistry::new();
    reg.register_all(cairn_tools::core_tools());
    let s = Session::builder(cfg, Arc::new(llm.clone()))
        .tools(reg)
        .approver(Arc::new(FixedApprover(ApprovalDecision::Once)))
        .permission_rules(rules, ShellPolicy::Approve, true)
        .exec_environment(exec)
        .build();
    let mut stream = s.run("go");
    while stream.recv().await.is_some() {}
    let out: String = s
        .messages()
        .await
        .into_iter()
        .filter_map(|m| match m {
            Message::Tool(r) => Some(r.content),
            _ => None,
        })
        .collect();
    assert!(out.contains("reader-ran"), "the script did not run: {out}");
    assert!(out.contains("TOKEN-visible"), "grep read nothing: {out}");
    assert!(
        !out.contains("TOKEN-denied-123"),
        "the denied folder was read: {out}"
    );
    assert!(root.join("secrets/token.txt").exists());
}
