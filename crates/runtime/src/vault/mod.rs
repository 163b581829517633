//! The vault: variables Cairn adds to the environment of the commands the agent runs (a
//! deploy token, a registry password), each scoped to roles. Which entries exist and their
//! roles are `<config folder>/vault.toml` (no values in it); the values are in the OS keyring
//! (entry `vault-<name>`), or, where there is none (headless, CI; `CAIRN_VAULT_STORE=file`),
//! in the sealed `vault.enc` beside it ([`sealed`]), which is said once. A session gets the
//! entries of its role (`*` = every role). The old `<state dir>/vault.toml` (one
//! `NAME = "value"` per line, every role) is migrated by the first `cairn vault` command or
//! the app's vault page, and read as it is until then.
//!
//! ```toml
//! [DEPLOY_TOKEN]
//! roles = ["code"]
//! store = "keyring"
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_secrets::{ApiKey, KeyStore, SecretError};
use serde::{Deserialize, Serialize};

pub mod sealed;

use sealed::SealedFile;

/// Why the vault could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// A name that is not a variable name, or one that controls how programs run.
    #[error("`{0}` cannot be a vault entry: use a variable name (letters, digits, _) other than PATH, HOME, LD_PRELOAD and the like")]
    BadName(String),
    /// No such entry.
    #[error("no vault entry `{0}`")]
    Missing(String),
    /// The index, the sealed file or the keyring failed.
    #[error("{0}")]
    Store(String),
}

/// Where an entry's value is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, export_to = "app/")]
pub enum Stored {
    /// The OS keyring.
    Keyring,
    /// The sealed file of the config folder.
    File,
}

/// One entry as listed (never its value).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export, export_to = "app/")]
pub struct VaultEntry {
    /// The variable's name.
    pub name: String,
    /// The roles that get it (`*` = every role).
    pub roles: Vec<String>,
    /// Where its value is.
    pub store: Stored,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct IndexEntry {
    roles: Vec<String>,
    store: Option<Stored>,
}

/// The user's vault.
pub struct Vault {
    index: PathBuf,
    sealed: SealedFile,
    /// The keyring; `None` = the sealed file only.
    keys: Option<Arc<dyn KeyStore>>,
}

/// Whether a name may be a vault entry.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && name.len() <= 60
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !cairn_engine::execenv::HARDENED_ENV.contains(&name.to_ascii_uppercase().as_str())
}

fn keyring_entry(name: &str) -> String {
    format!("vault-{}", name.to_ascii_lowercase())
}

fn store_err(e: impl std::fmt::Display) -> VaultError {
    VaultError::Store(e.to_string())
}

impl Vault {
    /// The vault of the config folder `folder` over `keys` (`None` = no keyring).
    pub fn open(folder: &Path, keys: Option<Arc<dyn KeyStore>>) -> Vault {
        Vault {
            index: folder.join("vault.toml"),
            sealed: SealedFile::in_folder(folder),
            keys,
        }
    }

    /// The user's: the config folder's, the keyring chosen as for API keys
    /// (`CAIRN_VAULT_STORE=file`: the sealed file only).
    pub fn for_user() -> Option<Vault> {
        let folder = crate::user_config::config_folder()?;
        let env = |n: &str| std::env::var(n).ok();
        let keys = (env("CAIRN_VAULT_STORE").as_deref() != Some("file"))
            .then(|| crate::keys::key_store_from_env(&env));
        Some(Vault::open(&folder, keys))
    }

    /// Where the list of entries is.
    pub fn index_path(&self) -> &Path {
        &self.index
    }

    fn read_index(&self) -> Result<BTreeMap<String, IndexEntry>, VaultError> {
        match std::fs::read_to_string(&self.index) {
            Ok(t) => {
                toml::from_str(&t).map_err(|e| store_err(format!("{}: {e}", self.index.display())))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(store_err(format!("{}: {e}", self.index.display()))),
        }
    }

    fn write_index(&self, index: &BTreeMap<String, IndexEntry>) -> Result<(), VaultError> {
        let text = toml::to_string_pretty(index).map_err(store_err)?;
        if let Some(dir) = self.index.parent() {
            std::fs::create_dir_all(dir).map_err(store_err)?;
        }
        let tmp = self.index.with_extension("toml.tmp");
        std::fs::write(&tmp, text).map_err(store_err)?;
        std::fs::rename(&tmp, &self.index).map_err(store_err)
    }

    /// Every entry, by name.
    pub fn list(&self) -> Result<Vec<VaultEntry>, VaultError> {
        Ok(self
            .read_index()?
            .into_iter()
            .map(|(name, e)| VaultEntry {
                name,
                roles: e.roles,
                store: e.store.unwrap_or(Stored::Keyring),
            })
            .collect())
    }

    /// Sets `name` to `value` for `roles` (empty = every role): in the keyring, else in the
    /// sealed file. The second value says why the file was used, the first time it is (to
    /// tell the user once).
    pub fn set(
        &self,
        name: &str,
        value: &str,
        roles: &[String],
    ) -> Result<(Stored, Option<String>), VaultError> {
        if !valid_name(name) {
            return Err(VaultError::BadName(name.to_string()));
        }
        if value.is_empty() {
            return Err(store_err("an empty value"));
        }
        let mut index = self.read_index()?;
        if let Some(other) = index
            .keys()
            .find(|k| k.eq_ignore_ascii_case(name) && k.as_str() != name)
        {
            return Err(store_err(format!(
                "`{other}` already exists (names ignore case)"
            )));
        }
        let (store, why) = match &self.keys {
            Some(keys) => {
                let key = ApiKey::stored(value).map_err(store_err)?;
                match keys.set(&keyring_entry(name), &key) {
                    Ok(()) => (Stored::Keyring, None),
                    Err(SecretError::Unavailable(reason)) => (Stored::File, Some(reason)),
                    Err(e) => return Err(store_err(e)),
                }
            }
            None => (Stored::File, Some("no OS keyring in use".to_string())),
        };
        // The first value sealed is said; later ones go where the user was told.
        let first_sealed = !self.sealed.path().exists();
        let mut values = self.sealed.read()?;
        if store == Stored::File {
            values.insert(name.to_string(), value.to_string());
            self.sealed.write(&values)?;
        } else if values.remove(name).is_some() {
            self.sealed.write(&values)?;
        }
        let roles = if roles.is_empty() {
            vec!["*".to_string()]
        } else {
            roles.to_vec()
        };
        index.insert(
            name.to_string(),
            IndexEntry {
                roles,
                store: Some(store),
            },
        );
        self.write_index(&index)?;
        let note = why.filter(|_| first_sealed).map(|reason| {
            format!(
                "no OS keyring ({reason}): vault values are kept sealed in {} (key: vault.key \
                 beside it)",
                self.sealed.path().display()
            )
        });
        Ok((store, note))
    }

    /// Removes `name` and its value; false when there was none.
    pub fn remove(&self, name: &str) -> Result<bool, VaultError> {
        let mut index = self.read_index()?;
        let Some(entry) = index.remove(name) else {
            return Ok(false);
        };
        match entry.store.unwrap_or(Stored::Keyring) {
            Stored::Keyring => {
                if let Some(keys) = &self.keys {
                    keys.remove(&keyring_entry(name)).map_err(store_err)?;
                }
            }
            Stored::File => {
                let mut values = self.sealed.read()?;
                values.remove(name);
                self.sealed.write(&values)?;
            }
        }
        self.write_index(&index)?;
        Ok(true)
    }

    /// The variables a session of role `role` gets (entries scoped `*` or to `role`); an
    /// entry whose value cannot be read is logged and left out.
    pub fn env_for_role(&self, role: &str) -> Result<Vec<(String, String)>, VaultError> {
        let index = self.read_index()?;
        let mut sealed: Option<BTreeMap<String, String>> = None;
        let mut out = Vec::new();
        for (name, entry) in index {
            if !entry.roles.iter().any(|r| r == "*" || r == role) {
                continue;
            }
            let value = match entry.store.unwrap_or(Stored::Keyring) {
                Stored::Keyring => match self.keys.as_ref().map(|k| k.get(&keyring_entry(&name))) {
                    Some(Ok(Some(v))) => Some(v.expose().to_string()),
                    Some(Err(e)) => {
                        tracing::warn!("vault entry {name} not read: {e}");
                        None
                    }
                    _ => None,
                },
                Stored::File => {
                    if sealed.is_none() {
                        sealed = Some(self.sealed.read()?);
                    }
                    sealed.as_ref().and_then(|m| m.get(&name).cloned())
                }
            };
            if let Some(v) = value {
                out.push((name, v));
            }
        }
        Ok(out)
    }

    /// Moves `<state_dir>/vault.toml` (every entry for every role) into this vault, once: the
    /// old file is kept as `vault.toml.migrated`. Returns what to tell the user.
    pub fn migrate_legacy(&self, state_dir: &Path) -> Result<Option<String>, VaultError> {
        let old = state_dir.join("vault.toml");
        if !old.is_file() || old == self.index {
            return Ok(None);
        }
        let entries = crate::sandbox::load_vault(state_dir).map_err(store_err)?;
        let existing = self.read_index()?;
        let mut notes = Vec::new();
        for (name, value) in &entries {
            if existing.contains_key(name) || !valid_name(name) {
                continue;
            }
            if let (_, Some(note)) = self.set(name, value, &[])? {
                notes.push(note);
            }
        }
        std::fs::rename(&old, old.with_extension("toml.migrated")).map_err(store_err)?;
        let mut note =
            format!(
            "vault: {} entr{} moved from {} to {} (every role; values in the {}); the old file \
             is kept as vault.toml.migrated",
            entries.len(),
            if entries.len() == 1 { "y" } else { "ies" },
            old.display(),
            self.index.display(),
            if notes.is_empty() { "OS keyring" } else { "sealed file" },
        );
        if let Some(n) = notes.into_iter().next() {
            note.push_str(&format!("; {n}"));
        }
        Ok(Some(note))
    }
}

/// What the app's vault page shows: the entries (never a value) and what to tell the user
/// (a migration, the sealed file in use).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export, export_to = "app/")]
pub struct VaultView {
    /// The entries, by name.
    pub entries: Vec<VaultEntry>,
    /// A notice to show once, if any.
    pub notice: Option<String>,
}

/// The vault variables of a session of role `role`: the user's vault (when the session reads
/// user config), plus the entries of a `<state_dir>/vault.toml` not migrated yet (every role).
pub fn session_env(
    state_dir: &Path,
    role: &str,
    scope: &crate::config_scope::ConfigScope,
) -> Result<Vec<(String, String)>, crate::error::RuntimeError> {
    let mut out = crate::sandbox::load_vault(state_dir)?;
    if scope.user_config {
        if let Some(v) = Vault::for_user() {
            match v.env_for_role(role) {
                Ok(mine) => {
                    for (k, val) in mine {
                        if !out.iter().any(|(n, _)| n == &k) {
                            out.push((k, val));
                        }
                    }
                }
                Err(e) => tracing::warn!("the vault is not read: {e}"),
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
