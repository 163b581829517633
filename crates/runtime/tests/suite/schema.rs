//! Stored checkpoints of every schema version load and migrate forward; newer ones are
//! refused without being touched.

use std::fs;
use std::path::Path;

use cairn_protocol::Mode;
use cairn_runtime::schema::SCHEMA_VERSION;
use cairn_runtime::{SessionStore, StoreError};

/// The fixtures folder, found at run time: a test binary built from another checkout of the
/// same sources (a shared target dir) must not read that checkout's files.
fn fixtures() -> std::path::PathBuf {
    Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("tests/fixtures")
}

/// A store holding the fixture `file` as the checkpoint of session `id`.
fn store_with(file: &str, id: &str) -> (tempfile::TempDir, SessionStore) {
    let tmp = tempfile::tempdir().unwrap();
    let store = SessionStore::new(tmp.path());
    let dir = store.session_dir(id).unwrap();
    fs::create_dir_all(&dir).unwrap();
    fs::copy(fixtures().join(file), dir.join("state.json")).unwrap();
    (tmp, store)
}

fn on_disk_version(store: &SessionStore, id: &str) -> u64 {
    let dir = store.session_dir(id).unwrap();
    let v: serde_json::Value =
        serde_json::from_slice(&fs::read(dir.join("state.json")).unwrap()).unwrap();
    v["schemaVersion"].as_u64().unwrap_or(1)
}

#[test]
fn the_first_checkpoint_format_migrates_with_usage_recovered() {
    let (_tmp, store) = store_with("state_v1_first.json", "legacy-first");
    let s = store.load("legacy-first").unwrap();
    assert_eq!(s.name, "list the files");
    assert_eq!(s.name_source, "");
    assert_eq!(s.messages.len(), 5);
    assert_eq!(s.turns, 1);
    assert!(s.todos.is_empty());
    assert!(s.permissions.allow_commands.contains("cargo"));
    assert_eq!(s.usage.input_tokens, 270);
    assert_eq!(s.usage.output_tokens, 20);
    assert_eq!(s.usage.cached_input_tokens, 100);
    // The original text is kept beside the checkpoint; the next save writes the new schema.
    let dir = store.session_dir("legacy-first").unwrap();
    let original = fs::read_to_string(dir.join("state.json.v1")).unwrap();
    assert_eq!(
        original,
        fs::read_to_string(fixtures().join("state_v1_first.json")).unwrap()
    );
    store.save(&s).unwrap();
    assert_eq!(
        on_disk_version(&store, "legacy-first"),
        u64::from(SCHEMA_VERSION)
    );
    assert_eq!(store.load("legacy-first").unwrap(), s);
}

#[test]
fn the_named_checkpoint_format_keeps_names_todos_and_grants() {
    let (_tmp, store) = store_with("state_v1_named.json", "legacy-named");
    let s = store.load("legacy-named").unwrap();
    assert_eq!(
        (s.name.as_str(), s.name_source.as_str()),
        ("Parser repair", "user")
    );
    assert_eq!(s.todos.len(), 1);
    assert_eq!(s.todos[0].content, "write a test");
    assert_eq!(s.permissions.mode, Mode::Auto);
    assert_eq!(s.permissions.granted_dirs.get("/tmp/x"), Some(&true));
    assert_eq!(s.usage.reasoning_tokens, 10);
    assert_eq!(s.turns, 3);
}

#[test]
fn the_current_format_loads_unchanged() {
    let (_tmp, store) = store_with("state_v3.json", "current-v3");
    let s = store.load("current-v3").unwrap();
    // Stored totals win over anything recomputable from the messages.
    assert_eq!(s.usage.input_tokens, 999);
    assert_eq!(s.cost_usd, 0.25);
    assert_eq!(s.name_source, "auto");
    let dir = store.session_dir("current-v3").unwrap();
    assert!(!dir.join("state.json.v3").exists());
    assert!(!store.upgrade("current-v3").unwrap(), "nothing to rewrite");
    store.save(&s).unwrap();
    assert_eq!(store.load("current-v3").unwrap(), s);
}

#[test]
fn the_indented_format_migrates_and_is_rewritten_compactly_when_opened() {
    // A version 2 file as older builds wrote it (indented), with a seal this build's key
    // did not make.
    let mut v: serde_json::Value =
        serde_json::from_slice(&fs::read(fixtures().join("state_v2.json")).unwrap()).unwrap();
    v["permissionsSeal"] = "not-this-build's-seal".into();
    let old_text = serde_json::to_string_pretty(&v).unwrap();
    let (_tmp, store) = store_with("state_v2.json", "current-v2");
    let dir = store.session_dir("current-v2").unwrap();
    fs::write(dir.join("state.json"), &old_text).unwrap();

    let s = store.load("current-v2").unwrap();
    assert_eq!(s.usage.input_tokens, 999);
    assert_eq!(
        (s.name.as_str(), s.name_source.as_str()),
        ("Add docs", "auto")
    );
    assert_eq!(s.messages.len(), 3);
    // Loading alone writes nothing; the content does not change, so no copy is kept either.
    assert_eq!(
        fs::read_to_string(dir.join("state.json")).unwrap(),
        old_text
    );
    assert!(!dir.join("state.json.v2").exists());

    // Opening it for a run (under its lock) rewrites it in the current format.
    let lock = store.lock("current-v2").unwrap();
    let persister = store.persister(s.clone(), lock).unwrap();
    let text = fs::read_to_string(dir.join("state.json")).unwrap();
    assert!(!text.contains('\n'), "compact: {text}");
    assert_eq!(
        on_disk_version(&store, "current-v2"),
        u64::from(SCHEMA_VERSION)
    );
    let raw: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        raw["permissionsSeal"], "not-this-build's-seal",
        "the seal is kept as found"
    );
    assert_eq!(store.load("current-v2").unwrap(), s);
    assert_eq!(persister.saved(), s);
    // The previous copy is the file as it was.
    assert_eq!(
        fs::read_to_string(dir.join("state.json.bak")).unwrap(),
        old_text
    );
    assert!(!store.upgrade("current-v2").unwrap(), "rewritten once");
    // Its saves are compact too.
    persister.update(|s| s.name = "renamed".into()).unwrap();
    let text = fs::read_to_string(dir.join("state.json")).unwrap();
    assert!(!text.contains('\n') && text.contains("renamed"), "{text}");
}

#[test]
fn a_newer_checkpoint_is_refused_and_left_untouched() {
    let (_tmp, store) = store_with("state_v4_future.json", "from-the-future");
    let dir = store.session_dir("from-the-future").unwrap();
    // Even with an older fallback present, the newer file is never silently replaced.
    fs::copy(fixtures().join("state_v2.json"), dir.join("state.json.bak")).unwrap();
    let before = fs::read(dir.join("state.json")).unwrap();
    let err = store.load("from-the-future").unwrap_err();
    assert!(matches!(err, StoreError::Newer { .. }), "{err}");
    assert!(err.to_string().contains("newer Cairn"), "{err}");
    assert_eq!(fs::read(dir.join("state.json")).unwrap(), before);
}

#[test]
fn every_fixture_version_is_covered() {
    let mut versions: Vec<u64> = fs::read_dir(fixtures())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("state_v"))
        .map(|e| {
            let v: serde_json::Value =
                serde_json::from_slice(&fs::read(e.path()).unwrap()).unwrap();
            v["schemaVersion"].as_u64().unwrap_or(1)
        })
        .filter(|v| *v <= u64::from(SCHEMA_VERSION))
        .collect();
    versions.sort();
    versions.dedup();
    let expected: Vec<u64> = (1..=u64::from(SCHEMA_VERSION)).collect();
    assert_eq!(versions, expected, "add a fixture for each schema version");
}
