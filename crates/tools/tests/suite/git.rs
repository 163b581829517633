//! git_status, git_log and git_diff against a real repository made with the git CLI.

use crate::common;

use std::path::Path;
use std::process::Command;

use cairn_engine::ToolError;
use cairn_tools::core_tools;
use common::{tool, Ws};
use serde_json::json;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.test")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.test")
        .env("GIT_AUTHOR_DATE", "2024-05-01T10:00:00+02:00")
        .env("GIT_COMMITTER_DATE", "2024-05-01T10:00:00+02:00")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository with three commits, then staged, unstaged and untracked changes.
fn repo() -> Ws {
    let ws = Ws::new();
    let r = &ws.root;
    git(r, &["init", "-q", "-b", "main"]);
    ws.write("README.md", "# Demo\n");
    ws.write("src/lib.rs", "pub fn one() -> i32 {\n    1\n}\n");
    git(r, &["add", "."]);
    git(r, &["commit", "-q", "-m", "Initial commit"]);
    ws.write(
        "src/lib.rs",
        "pub fn one() -> i32 {\n    1\n}\n\npub fn two() -> i32 {\n    2\n}\n",
    );
    git(r, &["commit", "-q", "-am", "Add two"]);
    ws.write("docs/guide.md", "guide\n");
    git(r, &["add", "docs"]);
    git(r, &["commit", "-q", "-m", "Write the guide"]);
    // Work in progress.
    ws.write(
        "src/lib.rs",
        "pub fn one() -> i32 {\n    1\n}\n\npub fn two() -> i32 {\n    22\n}\n",
    );
    ws.write("README.md", "# Demo\n\nStaged line.\n");
    git(r, &["add", "README.md"]);
    ws.write("notes.txt", "untracked\n");
    ws
}

#[tokio::test]
async fn status_lists_staged_unstaged_and_untracked() {
    let ws = repo();
    let tools = core_tools();
    let out = ws
        .call(&tool(&tools, "git_status"), json!({}))
        .await
        .unwrap()
        .content;
    assert!(out.starts_with("On branch main\n"), "{out}");
    assert!(
        out.contains("Changes staged for commit (1):\n  modified: README.md\n"),
        "{out}"
    );
    assert!(
        out.contains("Changes not staged for commit (1):\n  modified: src/lib.rs\n"),
        "{out}"
    );
    assert!(out.contains("Untracked files (1):\n  notes.txt\n"), "{out}");
    let out = ws
        .call(&tool(&tools, "git_status"), json!({"path": "docs"}))
        .await
        .unwrap()
        .content;
    assert!(out.contains("working tree clean (in docs)"), "{out}");
}

#[tokio::test]
async fn log_shows_commits_newest_first_and_filters_by_path() {
    let ws = repo();
    let tools = core_tools();
    let log = tool(&tools, "git_log");
    let out = ws.call(&log, json!({})).await.unwrap().content;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[0].ends_with("2024-05-01 10:00 +02:00 Ada Write the guide"),
        "{out}"
    );
    assert!(lines[2].ends_with("Initial commit"), "{out}");
    let out = ws
        .call(&log, json!({"max_count": 1}))
        .await
        .unwrap()
        .content;
    assert_eq!(out.lines().count(), 1);
    let out = ws
        .call(&log, json!({"path": "src/lib.rs"}))
        .await
        .unwrap()
        .content;
    let subjects: Vec<&str> = out
        .lines()
        .map(|l| l.rsplit("Ada ").next().unwrap())
        .collect();
    assert_eq!(subjects, ["Add two", "Initial commit"], "{out}");
    let out = ws
        .call(&log, json!({"path": "notes.txt"}))
        .await
        .unwrap()
        .content;
    assert_eq!(out, "No commits touch `notes.txt`.");
}

#[tokio::test]
async fn diff_unstaged_staged_and_against_a_revision() {
    let ws = repo();
    let tools = core_tools();
    let diff = tool(&tools, "git_diff");
    let out = ws.call(&diff, json!({})).await.unwrap().content;
    assert!(out.starts_with("1 file(s) with unstaged changes:"), "{out}");
    assert!(out.contains("-    2\n+    22\n"), "{out}");
    assert!(!out.contains("Staged line"), "{out}");

    let out = ws
        .call(&diff, json!({"staged": true}))
        .await
        .unwrap()
        .content;
    assert!(out.starts_with("1 file(s) with staged changes:"), "{out}");
    assert!(out.contains("+Staged line.\n"), "{out}");
    assert!(!out.contains("+    22"), "{out}");

    let out = ws
        .call(&diff, json!({"rev": "HEAD~2"}))
        .await
        .unwrap()
        .content;
    assert!(
        out.contains("changes in the work tree against HEAD~2"),
        "{out}"
    );
    assert!(
        out.contains("docs/guide.md") && out.contains("+pub fn two()"),
        "{out}"
    );
    assert!(out.contains("+Staged line."), "{out}");

    let out = ws
        .call(&diff, json!({"rev": "HEAD~2", "path": "docs"}))
        .await
        .unwrap()
        .content;
    assert!(
        out.contains("docs/guide.md") && !out.contains("src/lib.rs"),
        "{out}"
    );

    let e = ws
        .call(&diff, json!({"rev": "no-such-branch"}))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ToolError::InvalidArguments(m) if m.contains("unknown revision `no-such-branch`")),
        "{e}"
    );
    let out = ws
        .call(&diff, json!({"path": "docs"}))
        .await
        .unwrap()
        .content;
    assert_eq!(out, "No unstaged changes.");
}

#[tokio::test]
async fn git_tools_only_read() {
    let ws = repo();
    let tools = core_tools();
    let before: Vec<(String, Vec<u8>)> = ["index", "HEAD", "config"]
        .iter()
        .map(|f| {
            (
                f.to_string(),
                std::fs::read(ws.root.join(".git").join(f)).unwrap(),
            )
        })
        .collect();
    for name in ["git_status", "git_log", "git_diff"] {
        ws.call(&tool(&tools, name), json!({})).await.unwrap();
    }
    ws.call(&tool(&tools, "git_diff"), json!({"staged": true}))
        .await
        .unwrap();
    for (f, bytes) in before {
        assert_eq!(
            std::fs::read(ws.root.join(".git").join(&f)).unwrap(),
            bytes,
            "{f} changed"
        );
    }
}

#[tokio::test]
async fn outside_a_repository_the_answer_is_clear() {
    let ws = Ws::new();
    ws.write("a.txt", "x");
    let tools = core_tools();
    for name in ["git_status", "git_log", "git_diff"] {
        let e = ws.call(&tool(&tools, name), json!({})).await.unwrap_err();
        assert!(
            matches!(&e, ToolError::NotFound(m) if m.contains("is not inside a git repository")),
            "{name}: {e}"
        );
    }
    let e = ws
        .call(&tool(&tools, "git_status"), json!({"path": "missing"}))
        .await
        .unwrap_err();
    assert!(matches!(e, ToolError::NotFound(_)), "{e}");
}

#[tokio::test]
async fn an_empty_repository_has_no_history() {
    let ws = Ws::new();
    git(&ws.root, &["init", "-q", "-b", "trunk"]);
    ws.write("new.txt", "n\n");
    git(&ws.root, &["add", "new.txt"]);
    let tools = core_tools();
    let out = ws
        .call(&tool(&tools, "git_log"), json!({}))
        .await
        .unwrap()
        .content;
    assert_eq!(out, "The repository has no commits yet.");
    let out = ws
        .call(&tool(&tools, "git_status"), json!({}))
        .await
        .unwrap()
        .content;
    assert!(out.starts_with("On branch trunk (no commits yet)"), "{out}");
    assert!(out.contains("new file: new.txt"), "{out}");
    let out = ws
        .call(&tool(&tools, "git_diff"), json!({"staged": true}))
        .await
        .unwrap()
        .content;
    assert!(out.contains("+n\n"), "{out}");
}
