//! Helpers shared by the CLI integration tests.
#![allow(dead_code)]

pub mod everything;
pub mod json_run;
pub mod tty;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

/// `cairn run --mode auto --model m <extra…> <prompt>` against `base_url` in `ws` / `state`
/// with the API key `key`, sandbox off, stdin closed; stdout and stderr are the caller's.
pub fn auto_cmd(
    base_url: &str,
    ws: &Path,
    state: &Path,
    key: &str,
    extra: &[&str],
    prompt: &str,
) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    c.args([
        "run",
        "--mode",
        "auto",
        "--model",
        "m",
        "--base-url",
        base_url,
    ])
    .arg("--workspace")
    .arg(ws)
    .arg("--state-dir")
    .arg(state)
    .args(extra)
    .arg(prompt)
    .env("OPENAI_API_KEY", key)
    .env("CAIRN_SANDBOX", "off")
    .env_remove("OPENAI_FORCE_API_MODE")
    .stdin(Stdio::null())
    .kill_on_drop(true);
    c
}

/// [`auto_cmd`]'s output once it ended (at most 60 s).
pub async fn run_auto(
    base_url: &str,
    ws: &Path,
    state: &Path,
    key: &str,
    extra: &[&str],
    prompt: &str,
) -> Output {
    let out = auto_cmd(base_url, ws, state, key, extra, prompt).output();
    tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("cairn finished in time")
        .expect("cairn ran")
}

/// The id of the only session under `state`.
pub fn only_session_id(state: &Path) -> String {
    let list = cairn_runtime::SessionStore::new(state).list().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    list[0].id.clone()
}

/// Starts `cairn run --mode auto --session ID PROMPT` in the background, its output discarded.
pub fn spawn_turn(
    base_url: &str,
    ws: &Path,
    state: &Path,
    session: &str,
    prompt: &str,
) -> tokio::process::Child {
    auto_cmd(base_url, ws, state, "k", &["--session", session], prompt)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}
