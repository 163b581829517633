//! "Always allow in this project" through IPC: `allow_in_project` answers the approval and
//! keeps a user-level rule limited to the project; the Settings list shows it as limited
//! (with the global rules, not other projects'), a later session is not asked, and revoking
//! removes just that rule.

use super::*;
use cairn_testkit::child;

/// Runs `run_turn` on another thread until it ends or stops at an approval; the request
/// ids waiting and the turn's thread.
fn start_turn(
    h: &Harness,
    text: &str,
    channel: u32,
) -> (Vec<String>, std::thread::JoinHandle<Result<Value, String>>) {
    let w = h.window.clone();
    let body = json!({"text": text, "onEvent": format!("__CHANNEL__:{channel}")});
    let run = std::thread::spawn(move || invoke(&w, "run_turn", body));
    wait_for("the turn to end or ask", || {
        run.is_finished() || !pending_approvals(h).is_empty()
    });
    (pending_approvals(h), run)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_in_this_project_keeps_a_rule_settings_shows_and_revokes() {
    let name = child::test_name(
        module_path!(),
        "always_allow_in_this_project_keeps_a_rule_settings_shows_and_revokes",
    );
    if !child::in_child(&name) {
        // The user-level rules file is process-wide: the body runs in a child process.
        let perms = tempfile::tempdir().unwrap();
        let file = perms.path().join("permissions.toml").display().to_string();
        return tokio::task::block_in_place(|| {
            child::rerun_alone(&name, &[("CAIRN_PERMISSIONS_FILE", &file)])
        });
    }
    let user_file = std::path::PathBuf::from(std::env::var("CAIRN_PERMISSIONS_FILE").unwrap());
    // A global rule and one of another project, with the text the answer will keep.
    std::fs::write(
        &user_file,
        "[[rule]]\nrule = \"run_shell(curl:*)\"\ndecision = \"deny\"\n\n\
         [[rule]]\nrule = \"run_shell(touch:*)\"\ndecision = \"allow\"\nproject = \"/elsewhere\"\n",
    )
    .unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call("call_p1", "run_shell", json!({"command": "touch a.txt"})),
        Reply::text("made a"),
        Reply::tool_call("call_p2", "run_shell", json!({"command": "touch b.txt"})),
        Reply::text("made b"),
    ])
    .await
    .unwrap();
    let env = env_for(&server);
    tokio::task::block_in_place(|| {
        let h = harness(&refs(&env), ApprovalHost::Ui);
        let key = cairn_runtime::permissions::project_key(h.workspace.path());
        ok(
            &h.window,
            "open_workspace",
            json!({"path": h.workspace.path()}),
        );
        ok(&h.window, "new_session", json!({}));
        let listed = ok(&h.window, "permission_rules", json!({}));
        assert_eq!(
            listed["persistent"].as_array().unwrap().len(),
            1,
            "the global rule only: {listed}"
        );
        assert_eq!(listed["persistent"][0]["project"], Value::Null);

        let (asked, run) = start_turn(&h, "make a", 40);
        assert_eq!(asked, vec!["call_p1".to_string()]);
        let err = invoke(&h.window, "allow_in_project", json!({"reqId": "nope"})).unwrap_err();
        assert!(err.contains("no approval"), "{err}");
        let answered = ok(&h.window, "allow_in_project", json!({"reqId": "call_p1"}));
        assert_eq!(answered, json!(true));
        assert_eq!(run.join().unwrap().unwrap()["status"], "completed");
        assert!(h.workspace.path().join("a.txt").exists());
        assert!(!h.workspace.path().join(".agent/permissions.toml").exists());

        // Settings: the kept rule, limited to this project and revocable, beside the global.
        let listed = ok(&h.window, "permission_rules", json!({}));
        let persistent = listed["persistent"].as_array().unwrap();
        assert_eq!(persistent.len(), 2, "{listed}");
        let kept = persistent
            .iter()
            .find(|r| r["text"] == "run_shell(touch:*)")
            .unwrap();
        assert_eq!(kept["project"], json!(key));
        assert_eq!(kept["decision"], "allow");
        assert_eq!(kept["revocable"], true);

        // A new session of the project is not asked.
        ok(&h.window, "new_session", json!({}));
        let (asked, run) = start_turn(&h, "make b", 41);
        assert!(asked.is_empty(), "asked again: {asked:?}");
        assert_eq!(run.join().unwrap().unwrap()["status"], "completed");
        assert!(h.workspace.path().join("b.txt").exists());

        // Revoking removes just this project's rule.
        let after = ok(
            &h.window,
            "revoke_rule",
            json!({"text": "run_shell(touch:*)", "project": key}),
        );
        let persistent = after["persistent"].as_array().unwrap();
        assert_eq!(persistent.len(), 1, "{after}");
        assert_eq!(persistent[0]["text"], "run_shell(curl:*)");
        let file = std::fs::read_to_string(&user_file).unwrap();
        assert!(
            file.contains("/elsewhere") && file.contains("curl"),
            "{file}"
        );
        assert!(!file.contains(&key), "{file}");
        assert!(invoke(
            &h.window,
            "revoke_rule",
            json!({"text": "run_shell(touch:*)", "project": key})
        )
        .is_err());
    });
}
