//! API keys for Cairn, shared by the CLI and the desktop app without any provider code.
//!
//! Keys live in the OS keyring (service [`SERVICE`], one entry per provider name) behind the
//! [`KeyStore`] trait; [`MemoryKeyStore`] is the fake for tests. The provider's environment
//! variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, …) wins over the keyring: see
//! [`resolve_key`]. An [`ApiKey`] never shows its value in `Debug` or `Display`.

mod key;
mod memory;
mod os;
mod resolve;

pub use key::ApiKey;
pub use memory::MemoryKeyStore;
pub use os::OsKeyStore;
pub use resolve::{env_var_for, resolve_key, KeySource, ResolvedKey, KNOWN_PROVIDERS};

/// The keyring service name every Cairn entry is stored under.
pub const SERVICE: &str = "cairn";

/// Why a key could not be read, stored or removed.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// The provider name is not usable as an entry name.
    #[error("invalid provider name `{0}`: use lower-case letters, digits, `-` or `_`")]
    InvalidProvider(String),
    /// The key text is not a plausible API key (never contains the key itself).
    #[error("invalid API key: {0}")]
    InvalidKey(String),
    /// No keyring is reachable (no Secret Service, no D-Bus session, locked, …).
    #[error("the OS keyring is not available: {0}")]
    Unavailable(String),
    /// The keyring answered with an error.
    #[error("the OS keyring failed: {0}")]
    Store(String),
}

/// Where API keys are kept, one per provider name.
pub trait KeyStore: Send + Sync {
    /// The key stored for `provider`, `None` when there is none.
    fn get(&self, provider: &str) -> Result<Option<ApiKey>, SecretError>;
    /// Stores (or replaces) the key for `provider`.
    fn set(&self, provider: &str, key: &ApiKey) -> Result<(), SecretError>;
    /// Removes the key for `provider`; `false` when there was none.
    fn remove(&self, provider: &str) -> Result<bool, SecretError>;
}

/// Checks that a provider name is a short `[a-z0-9_-]` word.
pub fn validate_provider(provider: &str) -> Result<(), SecretError> {
    let ok = !provider.is_empty()
        && provider.len() <= 64
        && provider
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(SecretError::InvalidProvider(
            provider.chars().take(64).collect(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names() {
        for ok in ["openai", "lm-studio", "my_gateway2"] {
            assert!(validate_provider(ok).is_ok(), "{ok}");
        }
        for bad in ["", "OpenAI", "a b", "x/y", &"a".repeat(65)] {
            assert!(validate_provider(bad).is_err(), "{bad}");
        }
    }
}
