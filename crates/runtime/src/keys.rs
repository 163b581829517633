//! Which key store a face uses and how a key's state is shown. Keys live only in the OS
//! keyring (service `cairn`, one entry per provider); the UI never receives a key back.

use std::sync::Arc;

use cairn_providers::secrets::{env_var_for, KeyStore, MemoryKeyStore, OsKeyStore, SecretError};

use serde::Serialize;
use ts_rs::TS;

use crate::llm_setup::EnvFn;

/// Whether and where a provider's API key is set. Never carries the key itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(tag = "state", rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum KeyStatus {
    /// Not looked up yet (the start-up answer skips the keyring; `get_settings` fills it).
    Unchecked,
    /// The provider needs no key (local servers).
    NotNeeded,
    /// No key anywhere.
    Missing,
    /// In the OS keyring; `masked` shows only the last characters.
    Stored { masked: String },
    /// From an environment variable, which wins over the keyring.
    Env { var: String, masked: String },
    /// The keyring cannot be reached.
    Unavailable { reason: String },
}

/// The key store selected by the environment: `CAIRN_KEYSTORE=memory` (tests without a
/// keyring), `CAIRN_KEYRING_SERVICE=name` (tests with a real keyring that must not touch the
/// user's entries), else the OS keyring under the service `cairn`.
pub fn key_store_from_env(env: &EnvFn) -> Arc<dyn KeyStore> {
    if env("CAIRN_KEYSTORE").as_deref() == Some("memory") {
        tracing::warn!("CAIRN_KEYSTORE=memory: API keys are kept in memory only");
        return Arc::new(MemoryKeyStore::new());
    }
    match env("CAIRN_KEYRING_SERVICE").filter(|s| !s.trim().is_empty()) {
        Some(service) => Arc::new(OsKeyStore::with_service(service.trim())),
        None => Arc::new(OsKeyStore::new()),
    }
}

/// `••••` plus the last four characters (keys shorter than 12 show nothing of themselves).
pub fn mask(key: &str) -> String {
    crate::user_config::mask(key)
}

/// The key state of `provider` (environment first, as the CLI resolves it).
pub fn key_status(provider: &str, needs_key: bool, keys: &dyn KeyStore, env: &EnvFn) -> KeyStatus {
    if let Some(var) = env_var_for(provider) {
        if let Some(v) = env(var).filter(|v| !v.trim().is_empty()) {
            return KeyStatus::Env {
                var: var.to_string(),
                masked: mask(v.trim()),
            };
        }
    }
    match keys.get(provider) {
        Ok(Some(k)) => KeyStatus::Stored {
            masked: mask(k.expose()),
        },
        Ok(None) if needs_key => KeyStatus::Missing,
        Ok(None) => KeyStatus::NotNeeded,
        Err(SecretError::Unavailable(reason)) => KeyStatus::Unavailable { reason },
        Err(e) if needs_key => KeyStatus::Unavailable {
            reason: e.to_string(),
        },
        Err(_) => KeyStatus::NotNeeded,
    }
}

/// One provider in the settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct ProviderView {
    /// Name (also the keyring entry).
    pub id: String,
    /// Shown name.
    pub label: String,
    /// `cloud`, `compatible` (any OpenAI-compatible endpoint) or `local`.
    pub kind: String,
    /// Default endpoint ("" when the user must give one).
    pub default_base_url: String,
    /// Whether requests need a key.
    pub needs_key: bool,
    /// Key state.
    pub key: KeyStatus,
}

/// Provider `name` as the settings list it; its key read from `keys` (a keyring round trip)
/// only `with_key`, else `unchecked`.
pub fn provider_view(name: &str, with_key: bool, keys: &dyn KeyStore, env: &EnvFn) -> ProviderView {
    let p = cairn_providers::preset(name);
    let needs_key = p.map(|p| p.needs_key).unwrap_or(false);
    let kind = match (name, p.map(|p| p.needs_key)) {
        ("compatible", _) => "compatible",
        (_, Some(false)) => "local",
        _ => "cloud",
    };
    ProviderView {
        id: name.to_string(),
        label: crate::llm_setup::provider_label(name),
        kind: kind.to_string(),
        // The endpoint in effect when the field is left empty: the environment's, else the preset's.
        default_base_url: p
            .and_then(|p| p.base_url_env)
            .and_then(env)
            .filter(|u| !u.trim().is_empty())
            .or_else(|| p.map(|p| p.base_url.to_string()))
            .unwrap_or_default(),
        needs_key,
        key: if with_key {
            key_status(name, needs_key, keys, env)
        } else if needs_key {
            KeyStatus::Unchecked
        } else {
            KeyStatus::NotNeeded
        },
    }
}

/// Every provider as the settings list them, the keys looked up in parallel (each is a
/// D-Bus round trip); a lookup that fails shows as unavailable.
pub fn provider_views(with_keys: bool, keys: &dyn KeyStore, env: &EnvFn) -> Vec<ProviderView> {
    let names = crate::llm_setup::provider_names();
    std::thread::scope(|scope| {
        let handles: Vec<_> = names
            .iter()
            .map(|n| scope.spawn(move || provider_view(n, with_keys, keys, env)))
            .collect();
        handles
            .into_iter()
            .zip(&names)
            .map(|(h, n)| {
                h.join().unwrap_or_else(|_| ProviderView {
                    id: n.clone(),
                    label: crate::llm_setup::provider_label(n),
                    kind: "cloud".into(),
                    default_base_url: String::new(),
                    needs_key: true,
                    key: KeyStatus::Unavailable {
                        reason: "the keyring lookup failed".into(),
                    },
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use cairn_providers::secrets::ApiKey;

    #[test]
    fn masks_show_at_most_four_characters() {
        assert_eq!(mask("sk-abcdefgh1234"), "••••••••1234");
        assert_eq!(mask("short"), "••••••••");
    }

    #[test]
    fn status_prefers_the_environment_and_never_carries_the_key() {
        let store = MemoryKeyStore::new();
        let none = |_: &str| None;
        assert_eq!(
            key_status("openai", true, &store, &none),
            KeyStatus::Missing
        );
        assert_eq!(
            key_status("ollama", false, &store, &none),
            KeyStatus::NotNeeded
        );
        store
            .set("openai", &ApiKey::new("sk-secret-value-9876").unwrap())
            .unwrap();
        let s = key_status("openai", true, &store, &none);
        assert_eq!(
            s,
            KeyStatus::Stored {
                masked: "••••••••9876".into()
            }
        );
        assert!(!serde_json::to_string(&s).unwrap().contains("secret"));
        let env = |k: &str| (k == "OPENAI_API_KEY").then(|| "sk-from-env-abcd".to_string());
        assert!(matches!(
            key_status("openai", true, &store, &env),
            KeyStatus::Env { .. }
        ));
        let down = MemoryKeyStore::unavailable("no bus");
        assert!(matches!(
            key_status("anthropic", true, &down, &none),
            KeyStatus::Unavailable { .. }
        ));
    }

    /// With a real Secret Service (`CAIRN_KEYRING_TEST=1` in the test command), the memory
    /// store neither reads nor writes the OS keyring: a key already there stays unseen and
    /// unchanged, and what the memory store keeps never reaches it. A service of the test's
    /// own (`CAIRN_KEYRING_SERVICE`, which memory wins over) keeps the user's entries apart.
    #[test]
    fn the_memory_store_leaves_the_os_keyring_untouched() {
        use cairn_secrets::{OsKeyStore, SecretError};
        let required = std::env::var("CAIRN_KEYRING_TEST").is_ok_and(|v| v == "1");
        let service = format!("cairn-memory-test-{}", std::process::id());
        let os = OsKeyStore::with_service(&service);
        let there = ApiKey::new("sk-already-in-the-os-keyring-0123").unwrap();
        match os.set("openai", &there) {
            Err(SecretError::Unavailable(reason)) if !required => {
                eprintln!("SKIPPED: no Secret Service reachable ({reason})");
                return;
            }
            other => other.unwrap(),
        }
        let own = service.clone();
        let env = move |k: &str| match k {
            "CAIRN_KEYSTORE" => Some("memory".to_string()),
            "CAIRN_KEYRING_SERVICE" => Some(own.clone()),
            _ => None,
        };
        let checked = std::panic::catch_unwind(|| {
            let memory = key_store_from_env(&env);
            assert_eq!(
                memory.get("openai").unwrap(),
                None,
                "it read the OS keyring"
            );
            memory
                .set("openai", &ApiKey::new("sk-memory-only-value-4567").unwrap())
                .unwrap();
            memory
                .set(
                    "anthropic",
                    &ApiKey::new("sk-memory-only-other-8910").unwrap(),
                )
                .unwrap();
            assert!(memory.remove("openai").unwrap());
            assert_eq!(
                os.get("openai").unwrap(),
                Some(there.clone()),
                "it changed a key"
            );
            assert_eq!(os.get("anthropic").unwrap(), None, "it wrote a key");
        });
        let _ = os.remove("openai");
        let _ = os.remove("anthropic");
        if let Err(p) = checked {
            std::panic::resume_unwind(p);
        }
    }

    #[test]
    fn memory_store_is_selected_by_the_environment() {
        let env = |k: &str| (k == "CAIRN_KEYSTORE").then(|| "memory".to_string());
        let s = key_store_from_env(&env);
        s.set("openai", &ApiKey::new("sk-x").unwrap()).unwrap();
        assert!(s.get("openai").unwrap().is_some());
    }
}
