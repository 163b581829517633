//! Worktree sessions through the CLI contract, with real git: `cairn run --worktree`,
//! `cairn worktrees list|diff|apply|remove|restore`, `cairn sessions --json`.

use std::path::{Path, PathBuf};

use cairn_testkit::git::{digest, git, repo_with};
use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};

use super::checkpoints::{cairn, lines, Out};

mod apply;
mod concurrent;
mod handoff;
mod keep;
mod recovery;

/// A repository, a state dir and a worktree root in one temporary folder.
pub(super) struct Env {
    _dir: tempfile::TempDir,
    pub folder: PathBuf,
    pub state: PathBuf,
    pub root: PathBuf,
}

impl Env {
    pub fn new(files: &[(&str, &str)]) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("repo");
        repo_with(&folder, files);
        Env {
            folder: folder.canonicalize().unwrap(),
            state: dir.path().join("state"),
            root: dir.path().join("worktrees"),
            _dir: dir,
        }
    }

    pub fn envs(&self) -> Vec<(&'static str, String)> {
        vec![("CAIRN_WORKTREES_DIR", self.root.display().to_string())]
    }

    /// `cairn ARGS -w FOLDER --state-dir STATE`.
    pub async fn cairn(&self, args: &[&str]) -> Out {
        let mut all: Vec<&str> = args.to_vec();
        let (folder, state) = (
            self.folder.display().to_string(),
            self.state.display().to_string(),
        );
        all.extend(["-w", &folder, "--state-dir", &state]);
        let envs = self.envs();
        let envs: Vec<(&str, &str)> = envs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        cairn(&all, &envs).await
    }

    /// One `cairn run --json` turn with `extra` flags against `script`.
    pub async fn run(&self, script: Vec<Reply>, prompt: &str, extra: &[&str]) -> (Out, Vec<Value>) {
        let server = MockLlmServer::with_script(script).await.unwrap();
        let base = server.base_url();
        let mut args = vec![
            "run",
            "--base-url",
            &base,
            "--model",
            "mock-model",
            "--mode",
            "auto",
            "--json",
        ];
        args.extend_from_slice(extra);
        args.push(prompt);
        let out = self.cairn(&args).await;
        let events = out
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect();
        (out, events)
    }

    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.folder.join(rel)).ok()
    }

    /// The user's `.git`, apart from what a worktree may add.
    pub fn dot_git(&self) -> String {
        digest(
            &self.folder.join(".git"),
            &["worktrees", "refs/heads/cairn", "logs/refs/heads/cairn"],
        )
    }
}

pub(super) fn turn_start(events: &[Value]) -> &Value {
    events
        .iter()
        .find(|e| e["type"] == "turn_start")
        .unwrap_or_else(|| panic!("no turn_start in {events:?}"))
}

pub(super) fn edit_script(file: &str, text: &str, shell: &str) -> Vec<Reply> {
    vec![
        Reply::tool_call("c1", "write_file", json!({"path": file, "content": text})),
        Reply::tool_call("c2", "run_shell", json!({"command": shell})),
        Reply::text("done"),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worktree_session_changes_only_its_worktree_and_is_listed_as_one() {
    let env = Env::new(&[("a.txt", "original\n"), ("keep.txt", "k\n")]);
    env.git_setup();
    let before = env.dot_git();
    let (out, events) = env
        .run(
            edit_script(
                "a.txt",
                "agent\n",
                "printf shell > shell.txt && rm keep.txt",
            ),
            "edit things",
            &["--worktree", "feat"],
        )
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let start = turn_start(&events);
    let wt = &start["data"]["worktree"];
    assert_eq!(wt["name"], "feat");
    assert_eq!(wt["branch"], "cairn/feat");
    assert_eq!(wt["created"], true);
    let path = PathBuf::from(wt["path"].as_str().unwrap());
    assert!(
        path.starts_with(&env.root),
        "{path:?} under the worktree root"
    );
    // The folder is untouched; the worktree has the changes of both the file tool and the
    // shell.
    assert_eq!(env.read("a.txt").as_deref(), Some("original\n"));
    assert_eq!(env.read("keep.txt").as_deref(), Some("k\n"));
    assert!(env.read("shell.txt").is_none());
    assert_eq!(
        std::fs::read_to_string(path.join("a.txt")).unwrap(),
        "agent\n"
    );
    assert_eq!(
        std::fs::read_to_string(path.join("shell.txt")).unwrap(),
        "shell"
    );
    assert!(!path.join("keep.txt").exists());
    assert_eq!(
        env.dot_git(),
        before,
        "HEAD, index, stash, branches unchanged"
    );
    let list = git(&env.folder, &["worktree", "list", "--porcelain"]);
    assert!(
        list.contains(&format!("worktree {}", path.display())),
        "{list}"
    );
    assert!(env.read("git-stash-marker").is_none());
    assert_eq!(git(&env.folder, &["stash", "list"]).lines().count(), 1);

    // `cairn sessions --json`: the session's workspace is the worktree, `worktree` its NAME.
    let sid = start["data"]["sessionId"].as_str().unwrap().to_string();
    let state = env.state.display().to_string();
    let sessions = cairn(&["sessions", "--json", "--state-dir", &state], &[]).await;
    let rows = lines(&sessions.stdout);
    let row = rows.iter().find(|r| r["id"] == sid.as_str()).unwrap();
    assert_eq!(row["worktree"], "feat");
    assert_eq!(row["workspace"], path.display().to_string());

    // `--session` continues in the worktree; with another NAME it is a usage error.
    let (out, events) = env
        .run(vec![Reply::text("again")], "more", &["--session", &sid])
        .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(turn_start(&events)["data"]["worktree"]["created"], false);
    let (out, _) = env
        .run(
            vec![Reply::text("x")],
            "x",
            &["--session", &sid, "--worktree", "other"],
        )
        .await;
    assert_eq!(out.code, 2, "{}", out.stderr);

    // `cairn worktrees list --json` and `diff`.
    let listed = env.cairn(&["worktrees", "list", "--json"]).await;
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let rows = lines(&listed.stdout);
    assert_eq!(rows.len(), 1, "{}", listed.stdout);
    assert_eq!(rows[0]["name"], "feat");
    assert_eq!(rows[0]["sessions"], json!([sid]));
    assert_eq!(rows[0]["changedFiles"], 3);
    assert_eq!(rows[0]["unappliedFiles"], 3);
    assert_eq!(rows[0]["commitsAhead"], 0);
    assert!(rows[0]["bytes"].as_u64().unwrap() > 0);
    let diff = env.cairn(&["worktrees", "diff", "feat"]).await;
    assert_eq!(diff.code, 0, "{}", diff.stderr);
    assert!(
        diff.stdout.contains("-original\n+agent\n"),
        "{}",
        diff.stdout
    );
    assert!(diff.stdout.contains("+++ b/shell.txt"), "{}", diff.stdout);
}

#[tokio::test(flavor = "multi_thread")]
async fn folder_sessions_outside_git_and_bad_names_are_usage_errors() {
    let env = Env::new(&[("a.txt", "one\n")]);
    let (out, events) = env.run(vec![Reply::text("hi")], "hi", &[]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(turn_start(&events)["data"].get("worktree").is_none());
    let sid = turn_start(&events)["data"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let (out, _) = env
        .run(
            vec![Reply::text("x")],
            "x",
            &["--session", &sid, "--worktree", "w"],
        )
        .await;
    assert_eq!(
        out.code, 2,
        "a folder session cannot move into a worktree: {}",
        out.stderr
    );
    let (out, _) = env
        .run(vec![Reply::text("x")], "x", &["--worktree", "-bad"])
        .await;
    assert_eq!(out.code, 2, "{}", out.stderr);

    let plain = tempfile::tempdir().unwrap();
    let state = env.state.display().to_string();
    let ws = plain.path().display().to_string();
    let out = cairn(
        &[
            "run",
            "--worktree",
            "w",
            "-w",
            &ws,
            "--state-dir",
            &state,
            "--model",
            "m",
            "hi",
        ],
        &[("CAIRN_WORKTREES_DIR", &env.root.display().to_string())],
    )
    .await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("not inside a git repository"),
        "{}",
        out.stderr
    );
    let out = cairn(
        &[
            "worktrees",
            "list",
            "-w",
            &ws,
            "--state-dir",
            &state,
            "--json",
        ],
        &[],
    )
    .await;
    assert_eq!(out.code, 2);
    assert!(out.stdout.contains("\"error\""), "{}", out.stdout);
}

impl Env {
    /// A stash and a second branch, so the test proves they stay as they are.
    pub fn git_setup(&self) {
        git(&self.folder, &["branch", "other"]);
        std::fs::write(self.folder.join("git-stash-marker"), "x").unwrap();
        git(&self.folder, &["stash", "push", "-u", "-q"]);
    }
}

pub(super) fn path_of(events: &[Value]) -> PathBuf {
    PathBuf::from(
        turn_start(events)["data"]["worktree"]["path"]
            .as_str()
            .unwrap(),
    )
}

pub(super) fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}
