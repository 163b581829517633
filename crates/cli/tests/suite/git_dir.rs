//! A repository's git directory is never a workspace: `.git`, a folder inside it, a bare
//! repository, a linked worktree's and a submodule's git directory and a link to `.git` are
//! each refused with exit 2 and a sentence naming the work tree to open instead, before
//! anything is written anywhere; the repository itself still works.

use std::path::Path;

use cairn_testkit::git::{digest, git, repo_with};
use cairn_testkit::{MockLlmServer, Reply};
use serde_json::json;

use crate::common;

/// A model that would plant a pre-commit hook if it ever got a turn.
async fn planting_model() -> MockLlmServer {
    MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "write_file",
            json!({"path": "hooks/pre-commit", "content": "#!/bin/sh\necho pwned\n"}),
        ),
        Reply::text("done"),
    ])
    .await
    .unwrap()
}

/// `top/repo` (one commit, a linked worktree `top/wt`, a submodule `sub`), `top/bare.git`
/// and `top/link` → `repo/.git`.
fn repositories(top: &Path) {
    repo_with(&top.join("lib"), &[("lib.txt", "lib\n")]);
    repo_with(&top.join("repo"), &[("a.txt", "a\n")]);
    let repo = top.join("repo");
    git(
        &repo,
        &[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            &top.join("lib").display().to_string(),
            "sub",
        ],
    );
    git(&repo, &["commit", "-q", "-m", "submodule"]);
    git(&repo, &["worktree", "add", "-q", "../wt", "-b", "side"]);
    git(top, &["init", "-q", "--bare", "bare.git"]);
    std::os::unix::fs::symlink(repo.join(".git"), top.join("link")).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn git_directories_are_refused_naming_the_work_tree_and_nothing_is_written() {
    let d = tempfile::tempdir().unwrap();
    let top = d.path().canonicalize().unwrap();
    repositories(&top);
    let repo = top.join("repo");
    let server = planting_model().await;
    let cases = [
        (top.join("repo/.git"), Some(repo.clone())),
        (top.join("repo/.git/hooks"), Some(repo.clone())),
        (top.join("link"), Some(repo.clone())),
        (top.join("repo/.git/worktrees/wt"), Some(top.join("wt"))),
        (top.join("repo/.git/modules/sub"), Some(repo.join("sub"))),
        (
            top.join("repo/.git/modules/sub/hooks"),
            Some(repo.join("sub")),
        ),
        (top.join("bare.git"), None),
        (top.join("bare.git/hooks"), None),
    ];
    for (ws, work_tree) in cases {
        let state = top.join("state");
        let before = digest(&top, &[]);
        let out = common::run_auto(&server.base_url(), &ws, &state, "k", &[], "hi").await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", ws.display());
        assert!(stderr.contains("git directory") || stderr.contains("bare git repository"));
        match &work_tree {
            Some(w) => assert!(
                stderr.contains(&format!("open {} instead", w.display())),
                "{}: {stderr}",
                ws.display()
            ),
            None => assert!(
                stderr.contains("bare git repository with no work tree"),
                "{}: {stderr}",
                ws.display()
            ),
        }
        assert_eq!(
            digest(&top, &[]),
            before,
            "{}: something was written",
            ws.display()
        );
        assert!(!state.exists(), "{}: a state folder was made", ws.display());
    }
    // Nor is it the way to a new worktree of its repository.
    let before = digest(&top, &[]);
    let state = top.join("state");
    let ws = top.join("repo/.git");
    let out = common::run_auto(
        &server.base_url(),
        &ws,
        &state,
        "k",
        &["--worktree", "x"],
        "hi",
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("open {} instead", repo.display())),
        "{stderr}"
    );
    assert_eq!(
        digest(&top, &[]),
        before,
        "--worktree: something was written"
    );
    assert!(!state.exists(), "--worktree: a state folder was made");
    assert!(
        server.requests().is_empty(),
        "the model was asked although every workspace was refused"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn git_dir_set_in_the_environment_is_refused_too() {
    let d = tempfile::tempdir().unwrap();
    let top = d.path().canonicalize().unwrap();
    // A git directory git would not take for one by its shape alone (no HEAD yet), named by
    // GIT_DIR as a user's dotfiles setup does.
    let dir = top.join("dotfiles");
    std::fs::create_dir_all(dir.join("info")).unwrap();
    let mut c = common::auto_cmd(
        "http://127.0.0.1:9/v1",
        &dir.join("info"),
        &top.join("state"),
        "k",
        &[],
        "hi",
    );
    c.env("GIT_DIR", &dir).env("GIT_WORK_TREE", &top);
    let out = c.output().await.unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("open {} instead", top.display())),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_repository_itself_is_still_a_workspace() {
    let d = tempfile::tempdir().unwrap();
    let top = d.path().canonicalize().unwrap();
    repositories(&top);
    let server = MockLlmServer::with_script(vec![Reply::text("hello"); 3])
        .await
        .unwrap();
    for ws in [top.join("repo"), top.join("wt"), top.join("repo/sub")] {
        let state = tempfile::tempdir().unwrap();
        let out = common::run_auto(&server.base_url(), &ws, state.path(), "k", &[], "hi").await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{}: {stderr}", ws.display());
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("hello"),
            "{}",
            ws.display()
        );
    }
}
