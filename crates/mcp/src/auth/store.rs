//! Where logins are kept: the OS keyring through `cairn_secrets::KeyStore` (one entry per
//! server), or where there is none an encrypted file ([`EncryptedFileTokens`]); nowhere else.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use cairn_secrets::{ApiKey, KeyStore, SecretError};
use sha2::{Digest, Sha256};

use super::{AuthError, Env, StoredAuth};

/// Keeps one [`StoredAuth`] per MCP server URL.
pub trait TokenStore: Send + Sync {
    /// The login kept for `server`.
    fn get(&self, server: &str) -> Result<Option<StoredAuth>, AuthError>;
    /// Keeps (or replaces) the login for `server`.
    fn set(&self, server: &str, auth: &StoredAuth) -> Result<(), AuthError>;
    /// Forgets it; `false` when there was none.
    fn remove(&self, server: &str) -> Result<bool, AuthError>;
    /// Where logins are kept, in words.
    fn describe(&self) -> String;
}

/// The entry name of `server`'s login: `mcp-` and a hash of its URL.
pub fn entry_name(server: &str) -> String {
    let digest = Sha256::digest(server.as_bytes());
    let hex: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    format!("mcp-{hex}")
}

fn encode(auth: &StoredAuth) -> Result<String, AuthError> {
    let json = serde_json::to_vec(auth).map_err(|e| AuthError::Store(e.to_string()))?;
    Ok(URL_SAFE_NO_PAD.encode(json))
}

fn decode(text: &str) -> Result<StoredAuth, AuthError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(text.trim())
        .map_err(|_| AuthError::Store("a stored MCP login is damaged; log in again".into()))?;
    serde_json::from_slice(&bytes)
        .map_err(|_| AuthError::Store("a stored MCP login is damaged; log in again".into()))
}

fn store_err(e: SecretError) -> AuthError {
    AuthError::Store(e.to_string())
}

/// Logins in a [`KeyStore`] (the OS keyring; the memory fake in tests).
pub struct KeyringTokens {
    keys: Arc<dyn KeyStore>,
}

impl KeyringTokens {
    /// Over `keys`.
    pub fn new(keys: Arc<dyn KeyStore>) -> Self {
        KeyringTokens { keys }
    }

    /// Whether the key store answers at all (`Unavailable` → `false`).
    pub fn available(&self) -> bool {
        !matches!(self.keys.get("mcp-probe"), Err(SecretError::Unavailable(_)))
    }
}

impl TokenStore for KeyringTokens {
    fn get(&self, server: &str) -> Result<Option<StoredAuth>, AuthError> {
        match self.keys.get(&entry_name(server)).map_err(store_err)? {
            Some(k) => decode(k.expose()).map(Some),
            None => Ok(None),
        }
    }

    fn set(&self, server: &str, auth: &StoredAuth) -> Result<(), AuthError> {
        let key = ApiKey::stored(&encode(auth)?).map_err(store_err)?;
        self.keys.set(&entry_name(server), &key).map_err(store_err)
    }

    fn remove(&self, server: &str) -> Result<bool, AuthError> {
        self.keys.remove(&entry_name(server)).map_err(store_err)
    }

    fn describe(&self) -> String {
        "the OS keyring".into()
    }
}

/// Logins in one file encrypted with ChaCha20-Poly1305; the key is a separate file (0600)
/// that is created on first use. The file is replaced atomically.
pub struct EncryptedFileTokens {
    file: PathBuf,
    key_file: PathBuf,
    env: Arc<dyn Env>,
    lock: Mutex<()>,
}

impl EncryptedFileTokens {
    /// Tokens in `file`, encrypted with the key in `key_file`.
    pub fn new(file: PathBuf, key_file: PathBuf, env: Arc<dyn Env>) -> Self {
        EncryptedFileTokens {
            file,
            key_file,
            env,
            lock: Mutex::new(()),
        }
    }

    /// The encrypted file.
    pub fn path(&self) -> &Path {
        &self.file
    }

    fn key(&self, create: bool) -> Result<Option<ring::aead::LessSafeKey>, AuthError> {
        use ring::aead::{LessSafeKey, UnboundKey, CHACHA20_POLY1305};
        let bytes = match std::fs::read(&self.key_file) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                let mut b = vec![0u8; 32];
                self.env.random(&mut b)?;
                write_private(&self.key_file, &b)?;
                b
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(AuthError::Store(format!(
                    "cannot read {}: {e}",
                    self.key_file.display()
                )))
            }
        };
        let key = UnboundKey::new(&CHACHA20_POLY1305, &bytes).map_err(|_| {
            AuthError::Store(format!("{} is not a usable key", self.key_file.display()))
        })?;
        Ok(Some(LessSafeKey::new(key)))
    }

    fn load(&self) -> Result<BTreeMap<String, String>, AuthError> {
        use ring::aead::{Aad, Nonce};
        let data = match std::fs::read(&self.file) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => {
                return Err(AuthError::Store(format!(
                    "cannot read {}: {e}",
                    self.file.display()
                )))
            }
        };
        let damaged = || {
            AuthError::Store(format!(
                "{} cannot be decrypted (damaged, or its key changed); remove it and log in again",
                self.file.display()
            ))
        };
        let key = self.key(false)?.ok_or_else(damaged)?;
        if data.len() < 12 {
            return Err(damaged());
        }
        let (nonce, sealed) = data.split_at(12);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| damaged())?;
        let mut sealed = sealed.to_vec();
        let plain = key
            .open_in_place(nonce, Aad::empty(), &mut sealed)
            .map_err(|_| damaged())?;
        serde_json::from_slice(plain).map_err(|_| damaged())
    }

    fn save(&self, map: &BTreeMap<String, String>) -> Result<(), AuthError> {
        use ring::aead::{Aad, Nonce};
        let key = self
            .key(true)?
            .ok_or_else(|| AuthError::Store("no key for the token file".into()))?;
        let mut nonce = [0u8; 12];
        self.env.random(&mut nonce)?;
        let mut buf = serde_json::to_vec(map).map_err(|e| AuthError::Store(e.to_string()))?;
        key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut buf)
            .map_err(|_| AuthError::Store("encryption failed".into()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&buf);
        write_private(&self.file, &out)
    }
}

/// Writes `bytes` to `path` atomically, readable by the owner only.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), AuthError> {
    use std::io::Write;
    let err = |e: std::io::Error| AuthError::Store(format!("cannot write {}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(err)?;
    }
    let tmp = path.with_extension("tmp");
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut f = opts.open(&tmp).map_err(err)?;
    f.write_all(bytes).map_err(err)?;
    f.sync_all().map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)
}

impl TokenStore for EncryptedFileTokens {
    fn get(&self, server: &str) -> Result<Option<StoredAuth>, AuthError> {
        let _g = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        match self.load()?.get(&entry_name(server)) {
            Some(t) => decode(t).map(Some),
            None => Ok(None),
        }
    }

    fn set(&self, server: &str, auth: &StoredAuth) -> Result<(), AuthError> {
        let _g = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut map = self.load()?;
        map.insert(entry_name(server), encode(auth)?);
        self.save(&map)
    }

    fn remove(&self, server: &str) -> Result<bool, AuthError> {
        let _g = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        let mut map = self.load()?;
        let had = map.remove(&entry_name(server)).is_some();
        if had {
            self.save(&map)?;
        }
        Ok(had)
    }

    fn describe(&self) -> String {
        format!("the encrypted file {}", self.file.display())
    }
}

/// Logins in memory (tests).
#[derive(Default)]
pub struct MemoryTokens {
    map: Mutex<BTreeMap<String, StoredAuth>>,
}

impl TokenStore for MemoryTokens {
    fn get(&self, server: &str) -> Result<Option<StoredAuth>, AuthError> {
        Ok(self
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(server)
            .cloned())
    }

    fn set(&self, server: &str, auth: &StoredAuth) -> Result<(), AuthError> {
        self.map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(server.to_string(), auth.clone());
        Ok(())
    }

    fn remove(&self, server: &str) -> Result<bool, AuthError> {
        Ok(self
            .map
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(server)
            .is_some())
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}

/// The keyring when it answers, else the encrypted file; the second value says (once, for
/// the caller to show) that the file is used.
pub fn choose(
    keyring: Option<Arc<dyn KeyStore>>,
    file: EncryptedFileTokens,
) -> (Arc<dyn TokenStore>, Option<String>) {
    if let Some(k) = keyring {
        let store = KeyringTokens::new(k);
        if store.available() {
            return (Arc::new(store), None);
        }
    }
    let note = format!(
        "no OS keyring here: MCP logins are kept in the encrypted file {}",
        file.path().display()
    );
    (Arc::new(file), Some(note))
}
