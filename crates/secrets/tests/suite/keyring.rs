//! A real round trip through the OS keyring (Secret Service on Linux).
//!
//! Run it as
//! `dbus-run-session -- sh -c 'echo pw | gnome-keyring-daemon --unlock --components=secrets;
//! CAIRN_KEYRING_TEST=1 cargo test -p cairn-secrets --test all suite::keyring'`.
//! Without a reachable keyring it prints why and skips, unless `CAIRN_KEYRING_TEST=1`
//! demands that it run (and pass).

use cairn_secrets::{ApiKey, KeyStore, OsKeyStore, SecretError};

const FAKE_KEY: &str = "sk-cairn-keyring-roundtrip-0123456789";

#[test]
fn os_keyring_round_trip() {
    let required = std::env::var("CAIRN_KEYRING_TEST").is_ok_and(|v| v == "1");
    // A service of its own: never reads or clobbers the user's real `cairn` entries.
    let service = format!("cairn-test-{}", std::process::id());
    let store = OsKeyStore::with_service(&service);
    let key = ApiKey::new(FAKE_KEY).unwrap();
    match store.set("roundtrip", &key) {
        Err(SecretError::Unavailable(reason)) if !required => {
            eprintln!(
                "SKIPPED os_keyring_round_trip: no Secret Service reachable ({reason}); \
                 set CAIRN_KEYRING_TEST=1 to require it"
            );
            return;
        }
        other => other.unwrap(),
    }
    // A fresh store object (a new keyring entry) reads what the first one wrote.
    let again = OsKeyStore::with_service(&service);
    assert_eq!(again.get("roundtrip").unwrap(), Some(key.clone()));
    // Replacing works and the other provider stays empty.
    let newer = ApiKey::new("sk-cairn-keyring-roundtrip-replaced").unwrap();
    again.set("roundtrip", &newer).unwrap();
    assert_eq!(store.get("roundtrip").unwrap(), Some(newer));
    assert_eq!(store.get("other").unwrap(), None);
    // Removal is reported once, then the entry is gone.
    assert!(store.remove("roundtrip").unwrap());
    assert_eq!(again.get("roundtrip").unwrap(), None);
    assert!(!again.remove("roundtrip").unwrap());
}
