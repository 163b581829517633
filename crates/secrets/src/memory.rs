//! [`MemoryKeyStore`]: the in-memory fake of the OS keyring.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::{validate_provider, ApiKey, KeyStore, SecretError};

/// A [`KeyStore`] in memory: for tests, and for hosts that must not touch the OS keyring.
#[derive(Default)]
pub struct MemoryKeyStore {
    keys: Mutex<BTreeMap<String, ApiKey>>,
    unavailable: Option<String>,
}

impl MemoryKeyStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store that fails every call as [`SecretError::Unavailable`] (a machine without a keyring).
    pub fn unavailable(reason: &str) -> Self {
        MemoryKeyStore {
            keys: Mutex::default(),
            unavailable: Some(reason.to_string()),
        }
    }

    /// Provider names that have a key, sorted.
    pub fn providers(&self) -> Vec<String> {
        self.keys
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect()
    }

    fn check(&self, provider: &str) -> Result<(), SecretError> {
        validate_provider(provider)?;
        match &self.unavailable {
            Some(reason) => Err(SecretError::Unavailable(reason.clone())),
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for MemoryKeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryKeyStore")
            .field("providers", &self.providers())
            .finish()
    }
}

impl KeyStore for MemoryKeyStore {
    fn get(&self, provider: &str) -> Result<Option<ApiKey>, SecretError> {
        self.check(provider)?;
        let keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(keys.get(provider).cloned())
    }

    fn set(&self, provider: &str, key: &ApiKey) -> Result<(), SecretError> {
        self.check(provider)?;
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        keys.insert(provider.to_string(), key.clone());
        Ok(())
    }

    fn remove(&self, provider: &str) -> Result<bool, SecretError> {
        self.check(provider)?;
        let mut keys = self.keys.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(keys.remove(provider).is_some())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn set_get_remove() {
        let s = MemoryKeyStore::new();
        let k = ApiKey::new("sk-one").unwrap();
        assert_eq!(s.get("openai").unwrap(), None);
        s.set("openai", &k).unwrap();
        assert_eq!(s.get("openai").unwrap(), Some(k));
        assert!(!format!("{s:?}").contains("sk-one"));
        assert!(s.remove("openai").unwrap());
        assert!(!s.remove("openai").unwrap());
        assert!(matches!(
            s.get("Bad Name"),
            Err(SecretError::InvalidProvider(_))
        ));
        let down = MemoryKeyStore::unavailable("no keyring");
        assert!(matches!(
            down.get("openai"),
            Err(SecretError::Unavailable(_))
        ));
    }
}
