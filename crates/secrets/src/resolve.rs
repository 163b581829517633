//! Which key a provider uses: its environment variable first, then the keyring.

use crate::{validate_provider, ApiKey, KeyStore, SecretError};

/// Providers Cairn knows by name, with the environment variable that overrides the keyring.
pub const KNOWN_PROVIDERS: &[(&str, Option<&str>)] = &[
    ("openai", Some("OPENAI_API_KEY")),
    ("anthropic", Some("ANTHROPIC_API_KEY")),
    ("deepseek", Some("DEEPSEEK_API_KEY")),
    ("openrouter", Some("OPENROUTER_API_KEY")),
    ("gemini", Some("GEMINI_API_KEY")),
    ("ollama", None),
    ("lmstudio", None),
];

/// The environment variable holding `provider`'s key, if it has one.
pub fn env_var_for(provider: &str) -> Option<&'static str> {
    KNOWN_PROVIDERS
        .iter()
        .find(|(name, _)| *name == provider)
        .and_then(|(_, var)| *var)
}

/// Where a resolved key came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySource {
    /// This environment variable.
    Env(&'static str),
    /// The key store (the OS keyring).
    Store,
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::Env(var) => write!(f, "environment ({var})"),
            KeySource::Store => f.write_str("keyring"),
        }
    }
}

/// A key and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedKey {
    /// The key.
    pub key: ApiKey,
    /// Its source.
    pub source: KeySource,
}

/// The key for `provider`: a non-empty environment variable (read through `env`) wins over
/// the store. `Ok(None)` means neither has one; a store error is returned only when the
/// environment has no key.
pub fn resolve_key(
    provider: &str,
    env: &dyn Fn(&str) -> Option<String>,
    store: &dyn KeyStore,
) -> Result<Option<ResolvedKey>, SecretError> {
    validate_provider(provider)?;
    if let Some(var) = env_var_for(provider) {
        if let Some(text) = env(var).filter(|v| !v.trim().is_empty()) {
            let key =
                ApiKey::new(&text).map_err(|e| SecretError::InvalidKey(format!("{var}: {e}")))?;
            return Ok(Some(ResolvedKey {
                key,
                source: KeySource::Env(var),
            }));
        }
    }
    Ok(store.get(provider)?.map(|key| ResolvedKey {
        key,
        source: KeySource::Store,
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::MemoryKeyStore;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |n| {
            vars.iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn environment_wins_over_the_store() {
        let store = MemoryKeyStore::new();
        store
            .set("anthropic", &ApiKey::new("from-keyring").unwrap())
            .unwrap();
        let r = resolve_key(
            "anthropic",
            &env(&[("ANTHROPIC_API_KEY", "from-env")]),
            &store,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (r.key.expose(), r.source),
            ("from-env", KeySource::Env("ANTHROPIC_API_KEY"))
        );
        let r = resolve_key("anthropic", &env(&[("ANTHROPIC_API_KEY", " ")]), &store)
            .unwrap()
            .unwrap();
        assert_eq!(
            (r.key.expose(), r.source),
            ("from-keyring", KeySource::Store)
        );
        assert_eq!(resolve_key("deepseek", &env(&[]), &store).unwrap(), None);
    }

    #[test]
    fn unavailable_store_only_matters_without_env() {
        let down = MemoryKeyStore::unavailable("no bus");
        let r = resolve_key("openai", &env(&[("OPENAI_API_KEY", "k-1")]), &down).unwrap();
        assert!(r.is_some());
        assert!(matches!(
            resolve_key("openai", &env(&[]), &down),
            Err(SecretError::Unavailable(_))
        ));
        // Keyless local servers and custom names go straight to the store.
        assert_eq!(env_var_for("ollama"), None);
        assert_eq!(env_var_for("my-gateway"), None);
    }

    #[test]
    fn a_bad_env_key_is_an_error_that_does_not_quote_it() {
        let e = resolve_key(
            "openai",
            &env(&[("OPENAI_API_KEY", "sk-has space")]),
            &MemoryKeyStore::new(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("OPENAI_API_KEY") && !e.contains("sk-has"), "{e}");
    }
}
