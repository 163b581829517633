//! The API key never reaches the commands the agent runs, nor (through tool output) the
//! model, the events or the session files.

use std::path::Path;

use crate::common;
mod trust;

use cairn_testkit::{MockLlmServer, Reply};
use serde_json::json;

const KEY: &str = "sk-test-LEAKCHECK-0123456789abcdef";

fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return hits;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            hits.extend(files_holding(&p, needle));
        } else if std::fs::read(&p)
            .map(|b| String::from_utf8_lossy(&b).contains(needle))
            .unwrap_or(false)
        {
            hits.push(p.display().to_string());
        }
    }
    hits
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_is_not_in_commands_tool_output_events_or_session_files() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    // A project file that happens to hold the same key (a .env, say).
    std::fs::write(
        ws.path().join("settings.env"),
        format!("OPENAI_API_KEY={KEY}\n"),
    )
    .unwrap();
    let server = MockLlmServer::with_script(vec![
        Reply::tool_call(
            "c1",
            "run_shell",
            json!({"command": "echo \"env=[$OPENAI_API_KEY]\"; env | grep -c LEAKCHECK || true"}),
        ),
        Reply::tool_call("c2", "read_file", json!({"path": "settings.env"})),
        Reply::text("done"),
    ])
    .await
    .unwrap();
    let out = common::run_auto(
        &server.base_url(),
        ws.path(),
        state.path(),
        KEY,
        &["--json"],
        "look",
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].bearer(), Some(KEY), "the key still authenticates");
    let seen = reqs[2].body.to_string();
    // The command ran without the variable; the file's copy is scrubbed.
    assert!(seen.contains("env=[]"), "{seen}");
    assert!(
        seen.contains("OPENAI_API_KEY=[redacted credential]"),
        "{seen}"
    );
    assert!(!seen.contains(KEY), "the model never sees the key");
    assert!(!stdout.contains(KEY), "events: {stdout}");
    assert!(!stderr.contains(KEY));
    assert_eq!(files_holding(state.path(), KEY), Vec::<String>::new());
}
