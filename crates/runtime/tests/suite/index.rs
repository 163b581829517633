//! The SQLite session index: listing and searching, kept in line with the checkpoints and
//! rebuilt when missing, corrupt or stale.

use std::fs;

use cairn_engine::PermissionState;
use cairn_protocol::Message;
use cairn_runtime::index::{SessionIndex, INDEX_FILE};
use cairn_runtime::{SavedSession, SessionQuery, SessionStore};

fn saved(id: &str, workspace: &str, updated: &str, said: &str) -> SavedSession {
    SavedSession {
        session_id: id.into(),
        name: format!("topic-{id}"),
        name_source: String::new(),
        workspace: workspace.into(),
        model: "m".into(),
        provider: "openai".into(),
        messages: vec![Message::user(said), Message::assistant_text("Sure thing")],
        permissions: PermissionState::default(),
        turns: 1,
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

fn ids(list: Vec<cairn_runtime::SessionSummary>) -> Vec<String> {
    list.into_iter().map(|s| s.id).collect()
}

fn search(store: &SessionStore, text: &str) -> Vec<String> {
    ids(store
        .search(&SessionQuery {
            search: Some(text.into()),
            workspace: None,
        })
        .unwrap())
}

fn populated() -> (tempfile::TempDir, SessionStore) {
    let tmp = tempfile::tempdir().unwrap();
    let store = SessionStore::new(tmp.path());
    store
        .save(&saved(
            "a",
            "/w/one",
            "2026-01-01T00:00:00Z",
            "Fix the Parser bug",
        ))
        .unwrap();
    store
        .save(&saved(
            "b",
            "/w/two",
            "2026-03-01T00:00:00Z",
            "Écrire la documentation",
        ))
        .unwrap();
    store
        .save(&saved(
            "c",
            "/w/one",
            "2026-02-01T00:00:00Z",
            "add a parser test",
        ))
        .unwrap();
    (tmp, store)
}

#[test]
fn listing_matches_the_checkpoints_newest_first() {
    let (_tmp, store) = populated();
    let all = store.search(&SessionQuery::default()).unwrap();
    // The index keeps no first prompt (the board reads it from the checkpoints).
    let listed: Vec<_> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|mut s| {
            s.first_prompt.clear();
            s
        })
        .collect();
    assert_eq!(all, listed);
    assert_eq!(ids(all), vec!["b", "c", "a"]);
    assert!(store.root().join(INDEX_FILE).exists());
}

#[test]
fn search_by_text_name_and_workspace() {
    let (_tmp, store) = populated();
    assert_eq!(search(&store, "PARSER"), vec!["c", "a"]);
    assert_eq!(search(&store, "parser bug"), vec!["a"]);
    assert_eq!(search(&store, "écrire"), vec!["b"]);
    assert_eq!(search(&store, "sure thing"), vec!["b", "c", "a"]);
    assert_eq!(search(&store, "TOPIC-c"), vec!["c"]);
    assert_eq!(search(&store, "/w/two"), vec!["b"]);
    assert!(search(&store, "nothing like this").is_empty());
    let one = store
        .search(&SessionQuery {
            search: None,
            workspace: Some("/w/one".into()),
        })
        .unwrap();
    assert_eq!(ids(one), vec!["c", "a"]);
}

#[test]
fn changed_added_and_removed_sessions_are_picked_up() {
    let (_tmp, store) = populated();
    assert_eq!(search(&store, "parser"), vec!["c", "a"]);
    let mut a = store.load("a").unwrap();
    a.messages.push(Message::user("now the lexer"));
    a.updated_at = "2026-04-01T00:00:00Z".into();
    store.save(&a).unwrap();
    store
        .save(&saved("d", "/w/one", "2026-05-01T00:00:00Z", "lexer again"))
        .unwrap();
    fs::remove_dir_all(store.session_dir("c").unwrap()).unwrap();
    assert_eq!(search(&store, "lexer"), vec!["d", "a"]);
    assert_eq!(search(&store, "parser"), vec!["a"]);
    let mut index = SessionIndex::open(&store).unwrap();
    let stats = index.refresh(&store).unwrap();
    assert_eq!((stats.indexed, stats.removed, stats.rebuilt), (0, 0, false));
}

#[test]
fn a_missing_or_corrupt_index_is_rebuilt() {
    let (_tmp, store) = populated();
    let expected = search(&store, "parser");
    let path = store.root().join(INDEX_FILE);
    fs::remove_file(&path).unwrap();
    assert_eq!(search(&store, "parser"), expected);
    fs::write(&path, b"this is not a database at all, just garbage bytes").unwrap();
    let mut index = SessionIndex::open(&store).unwrap();
    let stats = index.refresh(&store).unwrap();
    assert!(stats.rebuilt);
    assert_eq!(stats.indexed, 3);
    assert_eq!(search(&store, "parser"), expected);
}

#[test]
fn an_index_row_for_a_now_unreadable_session_disappears() {
    let (_tmp, store) = populated();
    assert_eq!(search(&store, "parser").len(), 2);
    let dir = store.session_dir("a").unwrap();
    let _ = fs::remove_file(dir.join("state.json.bak"));
    fs::write(dir.join("state.json"), "{garbage").unwrap();
    assert_eq!(search(&store, "parser"), vec!["c"]);
    assert_eq!(ids(store.list().unwrap()), vec!["b", "c"]);
}

#[test]
fn an_unusable_index_location_falls_back_to_scanning() {
    let (_tmp, store) = populated();
    // A directory where the index file should be: SQLite cannot open or delete it.
    let path = store.root().join(INDEX_FILE);
    fs::create_dir_all(path.join("blocker")).unwrap();
    assert_eq!(search(&store, "parser"), vec!["c", "a"]);
    assert_eq!(
        ids(store.search(&SessionQuery::default()).unwrap()),
        vec!["b", "c", "a"]
    );
}
