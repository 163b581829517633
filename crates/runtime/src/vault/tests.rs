#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use cairn_secrets::MemoryKeyStore;

#[test]
fn a_role_sees_only_its_entries_and_values_stay_out_of_the_index() {
    let d = tempfile::tempdir().unwrap();
    let keys: Arc<dyn KeyStore> = Arc::new(MemoryKeyStore::new());
    let v = Vault::open(d.path(), Some(keys.clone()));
    v.set("DEPLOY_TOKEN", "dep-0123456789", &["code".into()])
        .unwrap();
    v.set("SHARED", "shared-value-1", &[]).unwrap();
    v.set("WRITER_KEY", "writer-value-1", &["cowork".into()])
        .unwrap();
    let code: Vec<String> = v
        .env_for_role("code")
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(code, ["DEPLOY_TOKEN", "SHARED"]);
    let cowork = v.env_for_role("cowork").unwrap();
    assert_eq!(
        cowork,
        [
            ("SHARED".to_string(), "shared-value-1".to_string()),
            ("WRITER_KEY".to_string(), "writer-value-1".to_string())
        ]
    );
    let index = std::fs::read_to_string(v.index_path()).unwrap();
    assert!(
        !index.contains("dep-0123") && index.contains("DEPLOY_TOKEN"),
        "{index}"
    );
    assert_eq!(v.list().unwrap()[0].store, Stored::Keyring);
    assert!(v.remove("DEPLOY_TOKEN").unwrap());
    assert!(!v.remove("DEPLOY_TOKEN").unwrap());
    assert!(keys.get("vault-deploy_token").unwrap().is_none());
    for bad in ["PATH", "LD_PRELOAD", "1X", "A-B", ""] {
        assert!(v.set(bad, "x", &[]).is_err(), "{bad}");
    }
}

#[test]
fn without_a_keyring_values_are_sealed_in_the_config_folder_and_it_is_said() {
    let d = tempfile::tempdir().unwrap();
    let down: Arc<dyn KeyStore> = Arc::new(MemoryKeyStore::unavailable("no bus"));
    let v = Vault::open(d.path(), Some(down));
    let (store, note) = v.set("TOKEN", "sealed-secret-42", &[]).unwrap();
    assert_eq!(store, Stored::File);
    assert!(note.unwrap().contains("no OS keyring"));
    let (_, again) = v.set("OTHER", "sealed-secret-43", &[]).unwrap();
    assert_eq!(again, None, "said once");
    let raw = std::fs::read(d.path().join("vault.enc")).unwrap();
    assert!(!String::from_utf8_lossy(&raw).contains("sealed-secret-42"));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(d.path().join("vault.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // Another process (a new Vault) reads it back.
    let again = Vault::open(d.path(), None);
    assert_eq!(
        again.env_for_role("code").unwrap(),
        [
            ("OTHER".to_string(), "sealed-secret-43".to_string()),
            ("TOKEN".to_string(), "sealed-secret-42".to_string())
        ]
    );
}

#[test]
fn the_old_state_dir_vault_is_migrated_once_for_every_role() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("vault.toml"), "OLD_TOKEN = \"old-value-123\"\n").unwrap();
    let v = Vault::open(&d.path().join("config"), None);
    let note = v.migrate_legacy(&state).unwrap().unwrap();
    assert!(note.contains("1 entry moved"), "{note}");
    assert!(!state.join("vault.toml").exists());
    assert!(state.join("vault.toml.migrated").exists());
    assert_eq!(
        v.env_for_role("anything").unwrap(),
        [("OLD_TOKEN".to_string(), "old-value-123".to_string())]
    );
    assert_eq!(v.migrate_legacy(&state).unwrap(), None, "once");
}
