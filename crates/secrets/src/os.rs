//! [`OsKeyStore`]: keys in the OS keyring (Secret Service on Linux, Keychain, Credential Manager).

use crate::{validate_provider, ApiKey, KeyStore, SecretError, SERVICE};

/// The OS keyring: one entry per provider under a service name (normally [`SERVICE`]).
///
/// Calls block on the platform store (D-Bus on Linux): call them off the async executor
/// (`spawn_blocking`) when latency matters.
#[derive(Debug, Clone)]
pub struct OsKeyStore {
    service: String,
}

impl Default for OsKeyStore {
    fn default() -> Self {
        OsKeyStore::new()
    }
}

impl OsKeyStore {
    /// The store under the service `cairn`.
    pub fn new() -> Self {
        Self::with_service(SERVICE)
    }

    /// A store under another service name (tests use their own, so they never touch real keys).
    pub fn with_service(service: &str) -> Self {
        OsKeyStore {
            service: service.to_string(),
        }
    }

    /// The service name entries are stored under.
    pub fn service(&self) -> &str {
        &self.service
    }

    fn entry(&self, provider: &str) -> Result<keyring::Entry, SecretError> {
        validate_provider(provider)?;
        reachable()?;
        keyring::Entry::new(&self.service, provider).map_err(map_err)
    }
}

/// On Linux the keyring is reached over the D-Bus session bus: without one, fail fast
/// instead of letting libdbus try to auto-launch a bus.
fn reachable() -> Result<(), SecretError> {
    if !cfg!(target_os = "linux") {
        return Ok(());
    }
    let has_address = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty());
    let has_socket = std::env::var_os("XDG_RUNTIME_DIR")
        .map(|d| std::path::Path::new(&d).join("bus").exists())
        .unwrap_or(false);
    if has_address || has_socket {
        Ok(())
    } else {
        Err(SecretError::Unavailable(
            "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)".into(),
        ))
    }
}

/// Maps a keyring error without ever formatting stored bytes.
fn map_err(e: keyring::Error) -> SecretError {
    match e {
        keyring::Error::NoStorageAccess(inner) | keyring::Error::PlatformFailure(inner) => {
            SecretError::Unavailable(inner.to_string())
        }
        keyring::Error::BadEncoding(_) => {
            SecretError::Store("the stored key is not valid UTF-8".into())
        }
        keyring::Error::TooLong(attr, limit) => SecretError::Store(format!(
            "`{attr}` is longer than the keyring allows ({limit})"
        )),
        keyring::Error::Invalid(attr, reason) => {
            SecretError::Store(format!("invalid `{attr}`: {reason}"))
        }
        keyring::Error::Ambiguous(found) => SecretError::Store(format!(
            "{} keyring entries match; remove the duplicates with your keyring manager",
            found.len()
        )),
        keyring::Error::NoEntry => SecretError::Store("no entry".into()),
        other => SecretError::Store(other.to_string()),
    }
}

impl KeyStore for OsKeyStore {
    fn get(&self, provider: &str) -> Result<Option<ApiKey>, SecretError> {
        let entry = self.entry(provider)?;
        match entry.get_password() {
            Ok(text) => ApiKey::new(&text)
                .or_else(|_| ApiKey::stored(&text))
                .map(Some),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(map_err(e)),
        }
    }

    fn set(&self, provider: &str, key: &ApiKey) -> Result<(), SecretError> {
        self.entry(provider)?
            .set_password(key.expose())
            .map_err(map_err)
    }

    fn remove(&self, provider: &str) -> Result<bool, SecretError> {
        match self.entry(provider)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(map_err(e)),
        }
    }
}
