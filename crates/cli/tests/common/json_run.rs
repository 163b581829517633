//! `cairn run --json` against the scripted mock server: the command, its parsed events and
//! assertions on how it ended.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use cairn_testkit::MockLlmServer;
use serde_json::Value;
use tokio::process::Command;

/// The API key the runs are given (and must never leak).
pub const KEY: &str = "sk-test-SECRET-key-0123456789abcdef";

/// How one run ended: exit code, stdout parsed as JSON lines, and both streams as text.
pub struct Run {
    pub code: i32,
    pub events: Vec<Value>,
    pub stdout: String,
    pub stderr: String,
}

/// `cairn run` in `ws` / `state` against `server` (model `mock-model`, key [`KEY`], fast
/// retries) with `extra` flags and the prompt last; stdout and stderr piped.
pub fn cmd(ws: &Path, state: &Path, server: &MockLlmServer, extra: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.arg("run")
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .arg("--base-url")
        .arg(server.base_url())
        .arg("--model")
        .arg("mock-model")
        .args(extra)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .env_remove("CAIRN_MODEL")
        .env_remove("OPENAI_FORCE_API_MODE")
        .env("OPENAI_API_KEY", KEY)
        .env("NETWORK_RETRY_BASE_MS", "20")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    c
}

/// Runs `c` to its end (at most 60 s) and parses its stdout as JSON events.
pub async fn run(mut c: Command) -> Run {
    let out = tokio::time::timeout(Duration::from_secs(60), c.output())
        .await
        .expect("cairn finished in time")
        .expect("cairn ran");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let events = stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    Run {
        code: out.status.code().unwrap_or(-1),
        events,
        stdout,
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

/// The events of type `t`.
pub fn of_type<'a>(events: &'a [Value], t: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == t).collect()
}

/// Asserts the run ended with a `turn_end` of `status`.
pub fn last_is_turn_end(r: &Run, status: &str) {
    let last = r.events.last().expect("some events");
    assert_eq!(last["type"], "turn_end", "stderr: {}", r.stderr);
    assert_eq!(last["data"]["status"], status, "stderr: {}", r.stderr);
}

/// [`run`], asserting the command exited 0 (its stderr shown otherwise).
pub async fn run_ok(c: Command) -> Run {
    let r = run(c).await;
    assert_eq!(r.code, 0, "stderr: {}", r.stderr);
    r
}
