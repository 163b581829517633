//! `cairn acp` driven by real third-party ACP clients against the mock model: the `acpx` CLI
//! and a small script on the official `@agentclientprotocol/sdk` client for what acpx does
//! not exercise (`tests/acp/sdk_client.mjs`). Both are pinned in `tests/acp/package.json`
//! with a lock file, installed by `scripts/setup.sh` (`npm ci`), else once into Cargo's test
//! temp dir; without `node`/`npm`, offline, or with `CAIRN_SKIP_NPM_TESTS=1`, the tests
//! print why and skip. Every client runs with a throwaway `HOME`.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const ACPX: &str = "node_modules/acpx/dist/cli.js";
const FILES: &[&str] = &["package.json", "package-lock.json", "sdk_client.mjs"];

/// The folder with the installed clients; `Err` is the reason to skip.
fn clients() -> Result<PathBuf, String> {
    cairn_testkit::npm::installed(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp"),
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("acp-clients"),
        FILES,
        ACPX,
    )
}

/// A workspace, a state dir, a throwaway HOME and the mock model.
struct Env {
    dir: PathBuf,
    mock: MockLlmServer,
    ws: tempfile::TempDir,
    state: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Env {
    async fn new() -> Option<Env> {
        let dir = match clients() {
            Ok(d) => d,
            Err(why) => {
                eprintln!("skipped: {why}");
                return None;
            }
        };
        Some(Env {
            dir,
            mock: MockLlmServer::start().await.unwrap(),
            ws: cairn_testkit::temp_workspace().unwrap(),
            state: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        })
    }

    /// The agent command line the clients start.
    fn agent(&self) -> Vec<String> {
        vec![
            env!("CARGO_BIN_EXE_cairn").to_string(),
            "acp".into(),
            "--state-dir".into(),
            self.state.path().display().to_string(),
            "--model".into(),
            "m".into(),
            "--base-url".into(),
            self.mock.base_url(),
            "--sandbox".into(),
            "off".into(),
        ]
    }

    /// A client process with the test's environment: a throwaway HOME, a key for the mock.
    fn node(&self) -> Command {
        let mut c = Command::new("node");
        c.env("HOME", self.home.path())
            .env("OPENAI_API_KEY", "k")
            .env("CAIRN_KEYSTORE", "memory")
            .env(
                "CAIRN_PERMISSIONS_FILE",
                self.home.path().join("rules.toml"),
            )
            .env_remove("CAIRN_LOG")
            .env_remove("CAIRN_MODEL")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_FORCE_API_MODE")
            .current_dir(self.ws.path())
            .stdin(Stdio::null())
            .kill_on_drop(true);
        c
    }

    /// `acpx --agent 'cairn acp …' --cwd WS ARGS…`.
    fn acpx(&self, args: &[&str]) -> Command {
        let mut c = self.node();
        c.arg(self.dir.join(ACPX))
            .arg("--agent")
            .arg(self.agent().join(" "))
            .arg("--cwd")
            .arg(self.ws.path())
            // The queue owner acpx keeps between commands lives 10 s after the last one: long
            // enough that no command of a test meets it shutting down (it then ends the agent).
            .args(["--ttl", "10", "--timeout", "60"])
            .args(args);
        c
    }

    async fn run(&self, args: &[&str]) -> Output {
        let out = tokio::time::timeout(Duration::from_secs(90), self.acpx(args).output())
            .await
            .expect("acpx ends")
            .unwrap();
        eprintln!(
            "acpx {args:?}: {}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// `node sdk_client.mjs SCENARIO WS ARG -- cairn acp …`, its JSON report.
    async fn sdk(&self, scenario: &str, arg: &str) -> Value {
        let mut c = self.node();
        c.arg(self.dir.join("sdk_client.mjs"))
            .arg(scenario)
            .arg(self.ws.path())
            .arg(arg)
            .arg("--")
            .args(self.agent());
        let out = tokio::time::timeout(Duration::from_secs(90), c.output())
            .await
            .expect("the SDK client ends")
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "sdk_client {scenario}: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.ws.path().join(name)).unwrap_or_default()
    }

    fn write_reply(&self, id: &str, content: &str) {
        self.mock.push(Reply::tool_call(
            id,
            "write_file",
            json!({"path": "notes.txt", "content": content}),
        ));
        self.mock.push(Reply::text("written"));
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

#[tokio::test]
async fn acpx_streams_a_reply_and_an_edit_asks_first_with_its_diff() {
    let Some(env) = Env::new().await else { return };
    env.mock.push(Reply::text("Hello from Cairn"));
    let out = env.run(&["--approve-all", "exec", "say hello"]).await;
    assert!(out.status.success());
    assert!(stdout(&out).contains("Hello from Cairn"));

    // interactive (the default): allowed, the file is written; the request carried the diff.
    std::fs::write(env.ws.path().join("notes.txt"), "old\n").unwrap();
    env.write_reply("w1", "new\n");
    let out = env
        .run(&["--format", "json", "--approve-all", "exec", "edit it"])
        .await;
    assert!(out.status.success());
    assert_eq!(env.read("notes.txt"), "new\n");
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let asked = lines
        .iter()
        .find(|l| l["method"] == "session/request_permission")
        .expect("a permission request");
    let call = &asked["params"]["toolCall"];
    assert_eq!(call["kind"], "edit");
    assert_eq!(call["content"][0]["type"], "diff");
    assert_eq!(call["content"][0]["oldText"], "old\n");
    assert_eq!(call["content"][0]["newText"], "new\n");
    let done = lines
        .iter()
        .filter(|l| l["params"]["update"]["sessionUpdate"] == "tool_call_update")
        .find(|l| l["params"]["update"]["status"] == "completed")
        .expect("the call completed");
    assert_eq!(done["params"]["update"]["content"][0]["newText"], "new\n");

    // Rejected: the file is left as it was.
    env.write_reply("w2", "rejected\n");
    let out = env.run(&["--deny-all", "exec", "edit it again"]).await;
    assert!(stdout(&out).contains("denied"), "{}", stdout(&out));
    assert_eq!(env.read("notes.txt"), "new\n");
}

#[tokio::test]
async fn acpx_cancel_during_a_long_command_returns_cancelled_within_two_seconds() {
    let Some(env) = Env::new().await else { return };
    let out = env.run(&["sessions", "new"]).await;
    assert!(out.status.success());
    env.mock.push(Reply::tool_call(
        "c1",
        "run_shell",
        json!({"command": "sleep 60"}),
    ));
    let mut prompt = env.acpx(&["--approve-all", "prompt", "wait a minute"]);
    prompt.stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = prompt.spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = String::new();
    // The command runs once its call is allowed (acpx prints the request being answered).
    while let Some(l) = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("acpx output")
        .unwrap()
    {
        seen.push_str(&l);
        seen.push('\n');
        if l.contains("session/request_permission") {
            break;
        }
    }
    assert!(seen.contains("sleep 60"), "{seen}");
    let t = Instant::now();
    let cancel = env.run(&["cancel"]).await;
    assert!(cancel.status.success());
    let rest = async {
        while let Ok(Some(l)) = lines.next_line().await {
            seen.push_str(&l);
            seen.push('\n');
        }
        child.wait().await.unwrap()
    };
    let status = tokio::time::timeout(Duration::from_secs(10), rest)
        .await
        .expect("the prompt ends");
    let took = t.elapsed();
    assert!(seen.contains("cancelled"), "{seen}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert!(status.success() || status.code().is_some());
}

#[tokio::test]
async fn acpx_switches_modes_and_undo_from_the_client_puts_the_file_back() {
    let Some(env) = Env::new().await else { return };
    std::fs::write(env.ws.path().join("notes.txt"), "original\n").unwrap();
    assert!(env.run(&["sessions", "new"]).await.status.success());
    // plan: read-only, the write is refused even with every request approved.
    assert!(env.run(&["set-mode", "plan"]).await.status.success());
    env.write_reply("w1", "in plan mode\n");
    env.run(&["--approve-all", "prompt", "edit"]).await;
    assert_eq!(env.read("notes.txt"), "original\n");
    // auto: the write needs no permission (every request would be denied).
    assert!(env.run(&["set-mode", "auto"]).await.status.success());
    env.write_reply("w2", "changed\n");
    let out = env.run(&["--deny-all", "prompt", "edit"]).await;
    assert!(out.status.success());
    assert_eq!(env.read("notes.txt"), "changed\n");
    // `/undo` from the client.
    let out = env.run(&["prompt", "/undo"]).await;
    assert!(out.status.success());
    assert!(stdout(&out).contains("Restored"), "{}", stdout(&out));
    assert_eq!(env.read("notes.txt"), "original\n");
}

#[tokio::test]
async fn the_sdk_client_loads_a_finished_session_with_its_history() {
    let Some(env) = Env::new().await else { return };
    env.mock.push(Reply::text("the answer is 42"));
    let out = env
        .run(&["--approve-all", "exec", "what is the answer"])
        .await;
    assert!(out.status.success());
    // The session acpx ran (its agent has ended) is on disk.
    let sessions = cairn_runtime::SessionStore::new(env.state.path())
        .list()
        .unwrap();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let id = sessions[0].id.clone();
    let report = env.sdk("load", &id).await;
    assert_eq!(
        report["result"]["loaded"]["modes"]["currentModeId"],
        "interactive"
    );
    let updates = report["updates"].as_array().unwrap();
    let said = |kind: &str| -> String {
        updates
            .iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    };
    assert!(
        said("user_message_chunk").contains("what is the answer"),
        "{updates:?}"
    );
    assert!(
        said("agent_message_chunk").contains("the answer is 42"),
        "{updates:?}"
    );
    assert_eq!(report["exitCode"], 0);
}

#[tokio::test]
async fn the_sdk_client_serves_an_unsaved_buffer_the_model_reads_and_the_write_lands_on_disk() {
    let Some(env) = Env::new().await else { return };
    std::fs::write(env.ws.path().join("notes.txt"), "saved text\n").unwrap();
    env.mock.push(Reply::tool_call(
        "r1",
        "read_file",
        json!({"path": "notes.txt"}),
    ));
    env.write_reply("w1", "agent text\n");
    let report = env.sdk("buffer", "unsaved editor text\n").await;
    // The agent asked the editor for the buffer, and the model saw it.
    let reads = report["reads"].as_array().unwrap();
    assert!(
        reads
            .iter()
            .any(|p| p.as_str().unwrap_or_default().ends_with("notes.txt")),
        "{report}"
    );
    let requests = env.mock.requests();
    let after_read = requests[1].body.to_string();
    assert!(after_read.contains("unsaved editor text"), "{after_read}");
    // The write landed on disk, then /undo put the saved text back (a checkpoint was kept).
    assert_eq!(report["result"]["afterWrite"], "agent text\n", "{report}");
    assert_eq!(report["result"]["prompt"]["stopReason"], "end_turn");
    assert_eq!(report["result"]["afterUndo"], "saved text\n", "{report}");
    assert_eq!(report["exitCode"], 0);
}
