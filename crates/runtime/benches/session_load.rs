#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Loading a 10,000-event session (checkpoint + event log + a usable engine session) against
//! merely reading its files. Prints both and the ratio; target: load < 200 ms.
//!
//! `cargo bench -p cairn-runtime --bench session_load` measures; under `cargo test` it runs a
//! small smoke round.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_engine::testing::FakeLlm;
use cairn_engine::{EngineConfig, EngineHook, Session};
use cairn_protocol::{Event, IterationEnd, Message, ToolCall, ToolResult, ToolStatus};
use cairn_runtime::{SavedSession, SessionStore};

fn main() {
    let measuring = std::env::args().any(|a| a == "--bench");
    let events = if measuring { 10_000 } else { 500 };
    let runs = if measuring { 9 } else { 1 };
    let tmp = tempfile::tempdir().unwrap();
    let store = SessionStore::new(tmp.path());
    // A session whose history matches its events: one tool round trip per 4 events.
    let mut messages = vec![Message::system("s"), Message::user("goal")];
    for i in 0..events / 4 {
        messages.push(Message::Assistant {
            content: vec![],
            tool_calls: vec![ToolCall {
                id: format!("c{i}"),
                name: "read_file".into(),
                arguments: format!("{{\"path\":\"src/file_{i}.rs\"}}"),
            }],
            usage: None,
        });
        messages.push(Message::Tool(ToolResult {
            call_id: format!("c{i}"),
            name: "read_file".into(),
            content: "fn main() { println!(\"hello\"); }\n".repeat(8),
            status: ToolStatus::Ok,
            images: Vec::new(),
        }));
    }
    let saved = SavedSession {
        session_id: "bench".into(),
        name: "bench".into(),
        name_source: String::new(),
        workspace: tmp.path().display().to_string(),
        model: "m".into(),
        provider: "openai".into(),
        messages,
        permissions: Default::default(),
        turns: 1,
        todos: Vec::new(),
        usage: Default::default(),
        cost_usd: 0.0,
        created_at: "2026-01-01T00:00:00Z".into(),
        updated_at: "2026-01-01T00:00:00Z".into(),
        protocol_version: 1,
        turn_marks: Vec::new(),
        worktree: None,
    };
    store.save(&saved).unwrap();
    let log = store.event_log("bench").unwrap();
    for i in 0..events {
        log.on_event(&Event::IterationEnd(IterationEnd {
            iteration: i as u32,
            task_id: "t".into(),
        }));
    }
    let dir = store.session_dir("bench").unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (mut read_t, mut load_t) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        let t0 = Instant::now();
        let a = std::fs::read(dir.join("state.json")).unwrap();
        let b = std::fs::read(dir.join("events.jsonl")).unwrap();
        read_t.push(t0.elapsed());
        assert!(!a.is_empty() && !b.is_empty());

        let t0 = Instant::now();
        let s = store.load("bench").unwrap();
        let evs = store.read_events("bench").unwrap();
        let session = Session::builder(
            EngineConfig::new(tmp.path().to_path_buf(), dir.clone(), "m"),
            Arc::new(FakeLlm::new(vec![])),
        )
        .messages(s.messages)
        .build();
        load_t.push(t0.elapsed());
        assert_eq!(evs.len(), events);
        let n = rt.block_on(session.messages()).len();
        assert!(n >= events / 2);
    }
    let read = median(&mut read_t);
    let load = median(&mut load_t);
    println!(
        "session load, {events} events ({} KiB checkpoint): read files {:.1} ms, load {:.1} ms, ratio {:.1}x (target: load < 200 ms){}",
        std::fs::metadata(dir.join("state.json")).unwrap().len() / 1024,
        read.as_secs_f64() * 1e3,
        load.as_secs_f64() * 1e3,
        load.as_secs_f64() / read.as_secs_f64().max(1e-9),
        if measuring { "" } else { " [smoke run]" }
    );
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}
