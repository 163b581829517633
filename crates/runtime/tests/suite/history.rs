//! A long session's log read back in pages and searched: Home's page from the first turn, a
//! checkpoint turn's page, and a search of every turn (case-insensitive, counted, a garbled
//! line skipped and counted instead of failing the search).

use std::io::Write;

use cairn_engine::EngineHook;
use cairn_runtime::history_search::HitRole;
use cairn_runtime::store::SessionStore;
use cairn_testkit::long_session;

/// Writes session `id`'s log of `turns` turns, turn 7 holding "Quokka"; then a torn line.
fn seeded(state: &std::path::Path, id: &str, turns: u32) -> SessionStore {
    let store = SessionStore::new(state);
    let log = store.event_log(id).unwrap();
    for e in long_session::events(id, turns, 7, "Quokka") {
        log.on_event(&e);
    }
    assert!(log.failure().is_none());
    drop(log);
    let path = store.session_dir(id).unwrap().join("events.jsonl");
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    // A crash mid-write: half a line, then the session went on.
    f.write_all(b"{\"type\":\"assistant_message\",\"data\":{\"text\":\"quokka quo\n")
        .unwrap();
    store
}

#[test]
fn a_two_thousand_turn_log_is_searched_whole_and_paged_from_its_start() {
    let state = tempfile::tempdir().unwrap();
    let store = seeded(state.path(), "long", 2000);

    let found = store.search_log("long", "  quokka ").unwrap();
    assert_eq!(found.query, "quokka");
    assert_eq!(found.skipped_lines, 1, "the torn line is named, not fatal");
    assert_eq!(found.matches, 1);
    assert_eq!(found.hits.len(), 1);
    let hit = &found.hits[0];
    assert_eq!((hit.group, hit.turn, hit.role), (6, 7, HitRole::Assistant));
    assert_eq!(hit.id, "long-7-r1");
    assert!(hit.snippet.contains("The Quokka case"), "{}", hit.snippet);

    // Case-insensitive, counted per message and in all; prompts count as well.
    let stage = store.search_log("long", "STAGE 1999").unwrap();
    assert_eq!(stage.matches, 2);
    assert_eq!(
        stage.hits.iter().map(|h| h.role).collect::<Vec<_>>(),
        vec![HitRole::User, HitRole::Assistant]
    );
    let tidy = store.search_log("long", "tidy").unwrap();
    assert_eq!(tidy.matches, 4000);
    assert!(tidy.truncated);
    assert_eq!(tidy.hits.len(), cairn_runtime::history_search::MAX_HITS);
    assert!(store.search_log("long", "   ").unwrap().hits.is_empty());
    assert_eq!(store.search_log("long", "zebra").unwrap().matches, 0);

    // Home's page starts at the first turn; the hit's page holds it.
    let home = store.history_from("long", 0, 100).unwrap();
    assert_eq!((home.first, home.end, home.total), (0, 100, 2000));
    assert!(
        matches!(&home.events[0], cairn_protocol::Event::TurnStart(t) if t.input == long_session::prompt(1))
    );
    let at = store.history_at_turn("long", 1500, 100).unwrap().unwrap();
    assert_eq!((at.first, at.end), (1449, 1549));
    assert!(store.history_at_turn("long", 4000, 100).unwrap().is_none());
}

/// The pages and searches the UI's tests fold (`ui/src/fixtures/long-session.json`), as the
/// runtime returns them for a 12-turn log; `CAIRN_UPDATE_BINDINGS=1` writes the file again.
#[test]
fn the_ui_fixture_is_what_the_runtime_returns() {
    let state = tempfile::tempdir().unwrap();
    let store = seeded(state.path(), "short", 12);
    let recorded = serde_json::json!({
        "_": "Recorded from the runtime by crates/runtime/tests/suite/history.rs (a 12-turn log, turn 7 holding \"Quokka\", one torn line).",
        "newest": store.history("short", None, 4).unwrap(),
        "older": store.history("short", Some(8), 4).unwrap(),
        "home": store.history_from("short", 0, 4).unwrap(),
        "second": store.history_from("short", 4, 4).unwrap(),
        "atTurn7": store.history_at_turn("short", 7, 4).unwrap(),
        "quokka": store.search_log("short", "quokka").unwrap(),
        "stage1": store.search_log("short", "stage 1").unwrap(),
    });
    let text = serde_json::to_string_pretty(&recorded).unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../ui/src/fixtures/long-session.json");
    if std::env::var("CAIRN_UPDATE_BINDINGS").as_deref() == Ok("1") {
        std::fs::write(&path, &text).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap_or_default(),
        text,
        "ui/src/fixtures/long-session.json is stale: run with CAIRN_UPDATE_BINDINGS=1"
    );
}
