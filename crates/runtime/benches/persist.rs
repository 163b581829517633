#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Persistence cost per tool iteration on a 2,000-message history, as the turn loop sees it:
//! the hook calls it waits on (two `on_state` — before the tools run and at the iteration's
//! end — each followed by a `failure` check). The new path (background writer) against the
//! named baseline `sync_full_save`: what every iteration did before, the whole history
//! pretty-printed, fsynced and renamed into place on the loop's thread, twice. Prints p50 /
//! p95 of both and the ratio; target: p95 of the new path < 2 ms.
//!
//! `cargo bench -p cairn-runtime --bench persist` measures. Under `cargo test` (no `--bench`
//! argument) it runs a small round as a smoke check.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cairn_engine::{EngineHook, PermissionState, StateSnapshot};
use cairn_protocol::{Message, ToolCall, ToolResult, ToolStatus};
use cairn_runtime::{SavedSession, SessionStore};

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let (history, iterations) = if measuring { (2_000, 200) } else { (200, 5) };
    let messages = history_of(history);

    let tmp = tempfile::tempdir().unwrap();
    let baseline = {
        let saved = Mutex::new(session("baseline", &tmp.path().display().to_string()));
        let dir = SessionStore::new(tmp.path())
            .session_dir("baseline")
            .unwrap();
        run(&messages, iterations, |state| {
            // What `on_state` did: copy the state in, then save it whole, synchronously.
            let mut s = saved.lock().unwrap();
            s.messages = state.messages.to_vec();
            s.turns = state.turns;
            sync_full_save(&dir, &s);
        })
    };

    let store = SessionStore::new(tmp.path());
    let lock = store.lock("new").unwrap();
    let persister = store
        .persister(session("new", &tmp.path().display().to_string()), lock)
        .unwrap();
    let (new_path, flush) = {
        let samples = run(&messages, iterations, |state| {
            persister.on_state(state);
            assert!(persister.failure().is_none());
        });
        let t0 = Instant::now();
        persister.end_turn().unwrap();
        (samples, t0.elapsed())
    };
    let saved = store.load("new").unwrap();
    assert_eq!(saved.messages.len(), history + 2 * iterations);
    let dir = store.session_dir("new").unwrap();
    let compact = fs::metadata(dir.join("state.json")).unwrap().len();
    let pretty = fs::metadata(
        SessionStore::new(tmp.path())
            .session_dir("baseline")
            .unwrap()
            .join("state.json"),
    )
    .unwrap()
    .len();

    let (b50, b95) = percentiles(baseline);
    let (n50, n95) = percentiles(new_path);
    println!(
        "persistence per tool iteration, {history}-message history ({} KiB compact / {} KiB \
         pretty checkpoint), {iterations} iterations: sync_full_save (baseline) p50 {:.2} ms \
         p95 {:.2} ms; background writer p50 {:.3} ms p95 {:.3} ms; ratio p50 {:.1}x p95 \
         {:.1}x faster (target: p95 < 2 ms); turn-end flush {:.2} ms{}",
        compact / 1024,
        pretty / 1024,
        ms(b50),
        ms(b95),
        ms(n50),
        ms(n95),
        ms(b50) / ms(n50).max(1e-6),
        ms(b95) / ms(n95).max(1e-6),
        ms(flush),
        if measuring { "" } else { " [smoke run]" }
    );
}

/// Runs `iterations` tool iterations on a history starting as `messages`: each appends a call
/// and its result, and hands the state over twice (`save`), as the loop does. The time each
/// iteration spent in `save`.
fn run(
    messages: &[Message],
    iterations: usize,
    save: impl Fn(&StateSnapshot<'_>),
) -> Vec<Duration> {
    let mut history = messages.to_vec();
    let permissions = PermissionState::default();
    let mut samples = Vec::with_capacity(iterations);
    for i in 0..iterations {
        let (call, result) = round_trip(history.len() + i);
        history.push(call);
        let t0 = Instant::now();
        save(&snapshot(&history, &permissions));
        let mut spent = t0.elapsed();
        history.push(result);
        let t1 = Instant::now();
        save(&snapshot(&history, &permissions));
        spent += t1.elapsed();
        samples.push(spent);
    }
    samples
}

fn snapshot<'a>(messages: &'a [Message], permissions: &'a PermissionState) -> StateSnapshot<'a> {
    StateSnapshot {
        messages,
        turns: 1,
        permissions,
        todos: &[],
        model: "m",
        turn_marks: &[],
    }
}

/// The synchronous save every iteration made before the background writer (twice): the whole
/// session as indented JSON, fsynced to a temp file, the old copy linked aside, renamed over.
fn sync_full_save(dir: &Path, s: &SavedSession) {
    let mut value = serde_json::to_value(s).unwrap();
    let obj = value.as_object_mut().unwrap();
    obj.insert("schemaVersion".into(), 2.into());
    if let Some(seal) = cairn_runtime::permission_seal::seal(s) {
        obj.insert("permissionsSeal".into(), seal.into());
    }
    let bytes = serde_json::to_vec_pretty(&value).unwrap();
    fs::create_dir_all(dir).unwrap();
    let path = dir.join("state.json");
    let tmp = dir.join(format!(".state.json.{}.tmp", std::process::id()));
    let mut f = fs::File::create(&tmp).unwrap();
    f.write_all(&bytes).unwrap();
    f.sync_all().unwrap();
    if path.exists() {
        let bak_tmp = dir.join(".state.json.bak.tmp");
        let _ = fs::remove_file(&bak_tmp);
        if fs::hard_link(&path, &bak_tmp).is_ok() {
            let _ = fs::rename(&bak_tmp, dir.join("state.json.bak"));
        }
    }
    fs::rename(&tmp, &path).unwrap();
}

/// A history of `len` messages: a system prompt, a goal, then tool round trips whose results
/// are a few hundred bytes of source each.
fn history_of(len: usize) -> Vec<Message> {
    let mut messages = vec![Message::system("You are Cairn."), Message::user("goal")];
    while messages.len() < len {
        let (call, result) = round_trip(messages.len());
        messages.push(call);
        messages.push(result);
    }
    messages.truncate(len);
    messages
}

fn round_trip(i: usize) -> (Message, Message) {
    let call = Message::Assistant {
        content: Vec::new(),
        tool_calls: vec![ToolCall {
            id: format!("c{i}"),
            name: "read_file".into(),
            arguments: format!("{{\"path\":\"src/file_{i}.rs\"}}"),
        }],
        usage: None,
    };
    let result = Message::Tool(ToolResult {
        call_id: format!("c{i}"),
        name: "read_file".into(),
        content: format!("fn f{i}() {{ println!(\"hello\"); }}\n").repeat(12),
        status: ToolStatus::Ok,
        images: Vec::new(),
    });
    (call, result)
}

fn session(id: &str, workspace: &str) -> SavedSession {
    SavedSession {
        session_id: id.into(),
        name: "bench".into(),
        name_source: String::new(),
        workspace: workspace.into(),
        model: "m".into(),
        provider: "openai".into(),
        messages: Vec::new(),
        permissions: PermissionState::default(),
        turns: 1,
        todos: Vec::new(),
        usage: Default::default(),
        cost_usd: 0.0,
        created_at: "2026-01-01T00:00:00Z".into(),
        updated_at: "2026-01-01T00:00:00Z".into(),
        protocol_version: 1,
        turn_marks: Vec::new(),
        worktree: None,
    }
}

fn percentiles(mut v: Vec<Duration>) -> (Duration, Duration) {
    v.sort();
    let at = |q: f64| v[((v.len() as f64 * q).ceil() as usize).clamp(1, v.len()) - 1];
    (at(0.5), at(0.95))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
