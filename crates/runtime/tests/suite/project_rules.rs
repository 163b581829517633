//! "Always allow in this project": the answer keeps a user-level rule limited to the
//! repository (never written into it) that every session of the repository and of its
//! worktrees obeys, open or opened later, that other folders ignore, and that revoking ends.

use crate::common;
use common::opts;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cairn_engine::testing::{FakeLlm, FakeReply};
use cairn_engine::EventStream;
use cairn_protocol::{AlwaysAllow, ApprovalDecision, Event, TurnStatus};
use cairn_runtime::host::{Answerer, Host, HostError, OpenSession, SessionHandle};
use cairn_runtime::llm_setup::LlmSetup;
use cairn_runtime::permissions::{add_project_rule, project_key, revoke_user_rule_for};
use cairn_testkit::{child, git};
use serde_json::json;

/// A session in `ws` whose model asks `turns` times to run `touch <n>.txt` (then says done).
fn open(host: &Host, ws: &Path, state: &Path, turns: usize) -> Arc<SessionHandle> {
    let mut script = Vec::new();
    for n in 0..turns {
        script.push(FakeReply::tool(
            &format!("c{n}"),
            "run_shell",
            json!({"command": format!("touch made{n}.txt")}),
        ));
        script.push(FakeReply::text("done"));
    }
    host.open(OpenSession {
        options: opts(ws, state, None),
        llm: Some(LlmSetup {
            client: Arc::new(FakeLlm::new(script)),
            provider: "openai".into(),
            model: "mock-model".into(),
            blocked: None,
        }),
        answerer: Answerer::waiting(),
        terminals: None,
    })
    .unwrap()
}

/// Runs a turn; `Some(request id)` when it stops to ask for an approval, `None` when it ends
/// (completed) without asking.
async fn asks(stream: &mut EventStream) -> Option<String> {
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), stream.recv())
            .await
            .expect("an event in time")
            .expect("the stream is open");
        match e {
            Event::PermissionRequired(r) => return Some(r.req_id),
            Event::TurnEnd(end) => {
                assert_eq!(end.status, TurnStatus::Completed);
                return None;
            }
            _ => {}
        }
    }
}

async fn until_end(stream: &mut EventStream) {
    loop {
        let e = tokio::time::timeout(Duration::from_secs(20), stream.recv())
            .await
            .expect("an event in time")
            .expect("the stream is open");
        if matches!(e, Event::TurnEnd(_)) {
            return;
        }
    }
}

/// Whether a turn of `h` asks; an asked approval is denied so that the turn ends.
async fn turn_asks(h: &SessionHandle) -> bool {
    let mut stream = super::start(h, "make a file").await;
    let asked = asks(&mut stream).await;
    if let Some(id) = &asked {
        // The request is parked right after its event.
        let mut waiting = h.pending().approvals_waiting();
        waiting.wait_for(|n| *n == 1).await.unwrap();
        assert!(h.answer_approval(id, ApprovalDecision::Deny));
        until_end(&mut stream).await;
    }
    drop(stream);
    h.idle().await;
    asked.is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_in_this_project_reaches_every_session_of_the_repository() {
    let name = child::test_name(
        module_path!(),
        "always_allow_in_this_project_reaches_every_session_of_the_repository",
    );
    if !child::in_child(&name) {
        // The user-level rules file is process-wide: the body runs in a child process.
        let perms = tempfile::tempdir().unwrap();
        let file = perms.path().join("cairn").join("permissions.toml");
        let file = file.display().to_string();
        return tokio::task::block_in_place(|| {
            child::rerun_alone(&name, &[("CAIRN_PERMISSIONS_FILE", &file)])
        });
    }
    let user_file = std::path::PathBuf::from(std::env::var("CAIRN_PERMISSIONS_FILE").unwrap());
    let repo = tempfile::tempdir().unwrap();
    git::repo_with(repo.path(), &[("README.md", "hi\n")]);
    let outside = tempfile::tempdir().unwrap();
    let wt = outside.path().join("wt");
    git::git(
        repo.path(),
        &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()],
    );
    let other = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let key = project_key(repo.path());
    assert_eq!(project_key(&wt), key, "a linked worktree shares the key");
    assert_ne!(project_key(other.path()), key);

    let host = Host::new();
    // Open before the answer: it must hear of the rule too.
    let live = open(&host, repo.path(), state.path(), 2);
    let a = open(&host, repo.path(), state.path(), 2);
    let mut stream = super::start(&a, "make a file").await;
    let req = asks(&mut stream).await.expect("asked before any rule");
    a.pending()
        .approvals_waiting()
        .wait_for(|n| *n == 1)
        .await
        .unwrap();
    // Unknown requests are refused, nothing written.
    assert!(matches!(
        host.allow_in_project(&a, "nope"),
        Err(HostError::NotPending(_))
    ));
    assert!(!user_file.exists());
    assert!(host.allow_in_project(&a, &req).unwrap(), "answered");
    until_end(&mut stream).await;
    drop(stream);
    a.idle().await;
    assert!(repo.path().join("made0.txt").exists());
    assert!(!turn_asks(&a).await, "the session itself stops asking");

    // Kept once, in the user's file, limited to the repository; nothing in the repository.
    let text = std::fs::read_to_string(&user_file).unwrap();
    assert_eq!(text.matches("[[rule]]").count(), 1, "{text}");
    assert!(text.contains("run_shell(touch:*)"), "{text}");
    assert!(text.contains(&format!("project = {:?}", key)), "{text}");
    assert!(!repo.path().join(".agent").join("permissions.toml").exists());
    assert!(!wt.join(".agent").join("permissions.toml").exists());
    let touch = AlwaysAllow::Command {
        program: "touch".into(),
    };
    add_project_rule(&wt, "run_shell", &touch).unwrap();
    let again = std::fs::read_to_string(&user_file).unwrap();
    assert_eq!(again, text, "adding it again keeps one");

    assert!(!turn_asks(&live).await, "an open session of the repository");
    let b = open(&host, repo.path(), state.path(), 1);
    assert!(!turn_asks(&b).await, "a session opened later");
    let w = open(&host, &wt, state.path(), 1);
    assert!(
        !turn_asks(&w).await,
        "a session in a worktree of the repository"
    );
    let o = open(&host, other.path(), state.path(), 1);
    assert!(
        turn_asks(&o).await,
        "a session in another folder is still asked"
    );

    // Revoking the repository's rule leaves the same text of another project alone.
    add_project_rule(other.path(), "run_shell", &touch).unwrap();
    assert_eq!(
        revoke_user_rule_for("run_shell(touch:*)", Some(&key)).unwrap(),
        1
    );
    assert_eq!(
        revoke_user_rule_for("run_shell(touch:*)", Some(&key)).unwrap(),
        0
    );
    let left = std::fs::read_to_string(&user_file).unwrap();
    assert_eq!(left.matches("[[rule]]").count(), 1, "{left}");
    assert!(!left.contains(&format!("project = {:?}", key)), "{left}");
    let c = open(&host, repo.path(), state.path(), 1);
    assert!(turn_asks(&c).await, "asked again after revoking");
    host.reload_rules();
    assert!(
        turn_asks(&live).await,
        "the open session too, once reloaded"
    );
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_an_allowance_keeps_no_rule() {
    let name = child::test_name(
        module_path!(),
        "a_request_without_an_allowance_keeps_no_rule",
    );
    if !child::in_child(&name) {
        let perms = tempfile::tempdir().unwrap();
        let file = perms.path().join("permissions.toml").display().to_string();
        return tokio::task::block_in_place(|| {
            child::rerun_alone(&name, &[("CAIRN_PERMISSIONS_FILE", &file)])
        });
    }
    let user_file = std::path::PathBuf::from(std::env::var("CAIRN_PERMISSIONS_FILE").unwrap());
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let host = Host::new();
    let h = host
        .open(OpenSession {
            options: opts(ws.path(), state.path(), None),
            llm: Some(LlmSetup {
                client: Arc::new(FakeLlm::new(vec![
                    FakeReply::tool("c1", "run_shell", json!({"command": "touch a && touch b"})),
                    FakeReply::text("done"),
                ])),
                provider: "openai".into(),
                model: "mock-model".into(),
                blocked: None,
            }),
            answerer: Answerer::waiting(),
            terminals: None,
        })
        .unwrap();
    let mut stream = super::start(&h, "go").await;
    let req = asks(&mut stream).await.expect("asked");
    h.pending()
        .approvals_waiting()
        .wait_for(|n| *n == 1)
        .await
        .unwrap();
    assert!(matches!(
        host.allow_in_project(&h, &req),
        Err(HostError::NoAllowance(_))
    ));
    assert!(!user_file.exists());
    assert!(h.answer_approval(&req, ApprovalDecision::Deny));
    until_end(&mut stream).await;
    drop(stream);
    host.shutdown().await;
}

#[test]
fn a_worktree_cairn_made_shares_the_repository_key() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("repo");
    git::repo_with(&folder, &[("a.txt", "one\n")]);
    let state = dir.path().join("state");
    let p = cairn_runtime::worktrees::prepare(&folder, &state, "k", false, &|_, _| {}).unwrap();
    let wt = std::path::PathBuf::from(&p.worktree.path);
    assert_ne!(wt, folder);
    assert_eq!(project_key(&wt), project_key(&folder));
}
