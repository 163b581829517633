//! The vault's values where no OS keyring exists (headless machines, CI): one file in the
//! config folder, `vault.enc`, sealed with ChaCha20-Poly1305 under a random key kept beside
//! it in `vault.key` (both owner-only). It keeps the values out of plain text and out of
//! every Cairn file a session reads; it is no stronger than the folder's permissions.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};

use super::VaultError;

/// The sealed file and its key.
#[derive(Debug, Clone)]
pub struct SealedFile {
    data: PathBuf,
    key: PathBuf,
}

fn io(path: &Path, e: impl std::fmt::Display) -> VaultError {
    VaultError::Store(format!("{}: {e}", path.display()))
}

/// Writes `bytes` to `path` (owner-only), through a temp file renamed over it.
fn write_private(path: &Path, bytes: &[u8]) -> Result<(), VaultError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(|e| io(&tmp, e))?;
    f.write_all(bytes)
        .and_then(|_| f.sync_all())
        .map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io(path, e))
}

impl SealedFile {
    /// `vault.enc` and `vault.key` in `folder`.
    pub fn in_folder(folder: &Path) -> SealedFile {
        SealedFile {
            data: folder.join("vault.enc"),
            key: folder.join("vault.key"),
        }
    }

    /// Where the values are.
    pub fn path(&self) -> &Path {
        &self.data
    }

    fn cipher(&self, create: bool) -> Result<Option<LessSafeKey>, VaultError> {
        let bytes = match std::fs::read(&self.key) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                let mut k = [0u8; 32];
                SystemRandom::new()
                    .fill(&mut k)
                    .map_err(|_| VaultError::Store("no random numbers".into()))?;
                write_private(&self.key, &k)?;
                k.to_vec()
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&self.key, e)),
        };
        let key = UnboundKey::new(&CHACHA20_POLY1305, &bytes)
            .map_err(|_| io(&self.key, "not a vault key"))?;
        Ok(Some(LessSafeKey::new(key)))
    }

    /// Every value, by name (none when there is no file).
    pub fn read(&self) -> Result<BTreeMap<String, String>, VaultError> {
        let sealed = match std::fs::read(&self.data) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(io(&self.data, e)),
        };
        let Some(cipher) = self.cipher(false)? else {
            return Err(io(&self.data, "its key (vault.key) is missing"));
        };
        if sealed.len() < NONCE_LEN {
            return Err(io(&self.data, "damaged"));
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let nonce =
            Nonce::try_assume_unique_for_key(nonce).map_err(|_| io(&self.data, "damaged"))?;
        let mut body = body.to_vec();
        let plain = cipher
            .open_in_place(nonce, Aad::empty(), &mut body)
            .map_err(|_| io(&self.data, "cannot be opened with vault.key"))?;
        serde_json::from_slice(plain).map_err(|e| io(&self.data, e))
    }

    /// Replaces every value.
    pub fn write(&self, values: &BTreeMap<String, String>) -> Result<(), VaultError> {
        let Some(cipher) = self.cipher(true)? else {
            return Err(io(&self.key, "cannot be created"));
        };
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new()
            .fill(&mut nonce)
            .map_err(|_| VaultError::Store("no random numbers".into()))?;
        let mut body = serde_json::to_vec(values).map_err(|e| io(&self.data, e))?;
        cipher
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut body)
            .map_err(|_| io(&self.data, "cannot be sealed"))?;
        let mut out = nonce.to_vec();
        out.extend(body);
        write_private(&self.data, &out)
    }
}
