//! `cairn sessions` through the SQLite index (`--search`, `--workspace`) and
//! `cairn run --attach`.

use std::path::Path;
use std::process::Stdio;

use base64::Engine as _;
use cairn_engine::PermissionState;
use cairn_protocol::Message;
use cairn_runtime::{SavedSession, SessionStore};
use cairn_testkit::{MockLlmServer, Reply};
use serde_json::Value;
use tokio::process::Command;

use crate::common::json_run::{cmd, run, run_ok};

fn saved(id: &str, workspace: &str, updated: &str, said: &str) -> SavedSession {
    SavedSession {
        session_id: id.into(),
        name: format!("session {id}"),
        name_source: String::new(),
        workspace: workspace.into(),
        model: "m".into(),
        provider: "openai".into(),
        messages: vec![Message::user(said)],
        permissions: PermissionState::default(),
        turns: 2,
        todos: Vec::new(),
        usage: Default::default(),
        cost_usd: 0.0,
        created_at: updated.into(),
        updated_at: updated.into(),
        protocol_version: 1,
        turn_marks: Vec::new(),
        worktree: None,
    }
}

/// `cairn sessions --json` in `state` with `extra` flags: exit code and one object per session.
pub(crate) async fn sessions(state: &Path, extra: &[&str]) -> (i32, Vec<Value>) {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("sessions")
        .arg("--state-dir")
        .arg(state)
        .arg("--json")
        .args(extra)
        .output()
        .await
        .unwrap();
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

fn ids(lines: &[Value]) -> Vec<&str> {
    lines.iter().map(|l| l["id"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_lists_and_searches_through_the_index() {
    let state = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let ws_path = ws.path().canonicalize().unwrap().display().to_string();
    let store = SessionStore::new(state.path());
    store
        .save(&saved(
            "s1",
            &ws_path,
            "2026-01-01T00:00:00Z",
            "refactor the tokenizer",
        ))
        .unwrap();
    store
        .save(&saved(
            "s2",
            "/elsewhere",
            "2026-02-01T00:00:00Z",
            "write release notes",
        ))
        .unwrap();
    let (code, all) = sessions(state.path(), &[]).await;
    assert_eq!(code, 0);
    assert_eq!(ids(&all), vec!["s2", "s1"]);
    // The contract's fields, exactly.
    let keys: Vec<&str> = all[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut keys = keys;
    keys.sort();
    assert_eq!(
        keys,
        vec![
            "createdAt",
            "id",
            "model",
            "name",
            "turns",
            "updatedAt",
            "workspace",
            "worktree"
        ]
    );
    assert_eq!(
        all[0]["worktree"],
        serde_json::Value::Null,
        "a folder session"
    );
    assert_eq!(all[0]["turns"], 2);
    assert!(state.path().join("sessions/index.sqlite").exists());

    let (_, found) = sessions(state.path(), &["--search", "TOKENIZER"]).await;
    assert_eq!(ids(&found), vec!["s1"]);
    let (_, found) = sessions(state.path(), &["--search", "release notes"]).await;
    assert_eq!(ids(&found), vec!["s2"]);
    let (_, found) = sessions(state.path(), &["--search", "nothing matches this"]).await;
    assert!(found.is_empty());
    let (_, found) = sessions(state.path(), &["--workspace", ws.path().to_str().unwrap()]).await;
    assert_eq!(ids(&found), vec!["s1"]);

    // A damaged index is rebuilt; a changed checkpoint is picked up.
    std::fs::write(state.path().join("sessions/index.sqlite"), "garbage").unwrap();
    let mut s1 = store.load("s1").unwrap();
    s1.messages.push(Message::user("also the release notes"));
    s1.updated_at = "2026-03-01T00:00:00Z".into();
    store.save(&s1).unwrap();
    let (code, found) = sessions(state.path(), &["--search", "release"]).await;
    assert_eq!(code, 0);
    assert_eq!(ids(&found), vec!["s1", "s2"]);
}

/// `cairn run --json` without git checkpoints, `extra` flags and the prompt last.
fn run_cmd(ws: &Path, state: &Path, server: &MockLlmServer, extra: &[&str]) -> Command {
    let args: Vec<&str> = ["--vcs", "off", "--json"]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    cmd(ws, state, server, &args)
}

#[tokio::test(flavor = "multi_thread")]
async fn run_attach_sends_the_image_once_and_keeps_a_stored_copy() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let png: Vec<u8> = b"\x89PNG\r\n\x1a\n-unique-test-image-bytes-0123456789".to_vec();
    let shot = files.path().join("shot.png");
    std::fs::write(&shot, &png).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    let server = MockLlmServer::with_script(vec![Reply::text("a screenshot"), Reply::text("yes")])
        .await
        .unwrap();

    let r = run_ok(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--attach", shot.to_str().unwrap(), "what is this?"],
    ))
    .await;
    let start = &r.events[0]["data"];
    assert_eq!(start["attachmentCount"], 1);
    let path = start["attachments"][0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let id = start["sessionId"].as_str().unwrap().to_string();
    let stored = state.path().join("sessions").join(&id).join(&path);
    assert_eq!(std::fs::read(&stored).unwrap(), png);
    assert!(server.requests()[0].body.to_string().contains(&b64));
    // Neither the checkpoint nor the event log holds the bytes.
    let dir = state.path().join("sessions").join(&id);
    assert!(!std::fs::read_to_string(dir.join("state.json"))
        .unwrap()
        .contains(&b64));
    assert!(!std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .contains(&b64));

    run_ok(run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--session", &id, "and again?"],
    ))
    .await;
    let second = server.requests()[1].body.to_string();
    assert!(
        !second.contains(&b64),
        "base64 only in the turn that carried it"
    );
    assert!(second.contains(&path), "the reference stays in history");
}

/// A model that cannot see images (here declared so with `CAIRN_MODEL_VISION=0`) gets the
/// reference to the stored image, not the image: a text-only endpoint would refuse it.
#[tokio::test(flavor = "multi_thread")]
async fn images_are_referenced_not_sent_to_a_model_that_cannot_see() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let png: Vec<u8> = b"\x89PNG\r\n\x1a\n-text-only-model-image-bytes-0123456789".to_vec();
    let shot = files.path().join("shot.png");
    std::fs::write(&shot, &png).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&png);
    let server = MockLlmServer::with_script(vec![Reply::text("no eyes")])
        .await
        .unwrap();
    let mut cmd = run_cmd(
        ws.path(),
        state.path(),
        &server,
        &["--attach", shot.to_str().unwrap(), "what is this?"],
    );
    cmd.env("CAIRN_MODEL_VISION", "0");
    let r = run_ok(cmd).await;
    assert!(r.stderr.contains("does not accept images"), "{}", r.stderr);
    let path = r.events[0]["data"]["attachments"][0]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let body = server.requests()[0].body.to_string();
    assert!(!body.contains(&b64), "no image data");
    assert!(!body.contains("image_url"), "no image part");
    assert!(body.contains(&path), "the stored copy is referenced");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_attachments_are_usage_errors_before_anything_runs() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let server = MockLlmServer::with_script(vec![Reply::text("never")])
        .await
        .unwrap();
    let txt = files.path().join("notes.txt");
    std::fs::write(&txt, "hello").unwrap();
    let png = files.path().join("a.png");
    std::fs::write(&png, "x").unwrap();
    let p = png.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["--attach", txt.to_str().unwrap(), "hi"],
        vec!["--attach", "/no/such/file.png", "hi"],
        vec![
            "--attach", p, "--attach", p, "--attach", p, "--attach", p, "--attach", p, "hi",
        ],
    ];
    for args in cases {
        let r = run(run_cmd(ws.path(), state.path(), &server, &args)).await;
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.events.is_empty());
        assert!(r.stderr.contains("attachment"), "{}", r.stderr);
    }
    assert!(server.requests().is_empty());
    assert!(!state.path().join("sessions").exists());
}

#[test]
fn a_reader_that_went_away_ends_the_listing_quietly() {
    let state = tempfile::tempdir().unwrap();
    SessionStore::new(state.path())
        .save(&saved("s1", "/w", "2026-01-01T00:00:00Z", "hello"))
        .unwrap();
    for json in [true, false] {
        // `cairn sessions | head -0`: the read end is closed before anything is written.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        c.arg("sessions").arg("--state-dir").arg(state.path());
        if json {
            c.arg("--json");
        }
        let out = c.stdout(writer).stderr(Stdio::piped()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "json={json}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn listing_a_state_dir_that_does_not_exist_creates_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-state");
    let (code, lines) = sessions(&missing, &[]).await;
    assert_eq!((code, lines.len()), (0, 0));
    assert!(!missing.exists(), "a listing creates no folders");
}
