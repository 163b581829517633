//! Where MCP logins are kept for both faces: the OS keyring (the entries of
//! `cairn_secrets`), or where there is none (a headless machine, `CAIRN_KEYSTORE=memory` in
//! tests) the encrypted file `<config dir>/cairn/mcp-logins.enc`, whose key is
//! `<data dir>/cairn/mcp-logins.key` (two folders, so a copy of the config folder alone
//! reveals nothing). The fallback is said once per process.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cairn_mcp::auth::net::ReqwestAuthHttp;
use cairn_mcp::auth::store::{choose, EncryptedFileTokens};
use cairn_mcp::auth::{Authenticator, SystemEnv};
use cairn_secrets::KeyStore;

use crate::llm_setup::EnvFn;

static SAID: AtomicBool = AtomicBool::new(false);

/// The encrypted token file and its key file.
pub fn token_files() -> Option<(PathBuf, PathBuf)> {
    let config = crate::reserved::config_dir()?;
    let data = dirs::data_dir()
        .map(|d| d.join("cairn"))
        .unwrap_or_else(|| config.join("keys"));
    Some((config.join("mcp-logins.enc"), data.join("mcp-logins.key")))
}

/// The authenticator for this process, and (the first time only) a sentence saying that the
/// encrypted file is used instead of the keyring.
pub fn authenticator(env: &EnvFn) -> Result<(Authenticator, Option<String>), String> {
    let (file, key) = token_files()
        .ok_or_else(|| "no config folder on this system for MCP logins".to_string())?;
    let envr = Arc::new(SystemEnv);
    let keyring: Option<Arc<dyn KeyStore>> = if env("CAIRN_KEYSTORE").as_deref() == Some("memory") {
        None
    } else {
        Some(crate::keys::key_store_from_env(env))
    };
    let (store, note) = choose(keyring, EncryptedFileTokens::new(file, key, envr.clone()));
    let note = note.filter(|_| !SAID.swap(true, Ordering::SeqCst));
    if let Some(n) = &note {
        tracing::info!("{n}");
    }
    Ok((
        Authenticator {
            http: Arc::new(ReqwestAuthHttp),
            env: envr,
            store,
        },
        note,
    ))
}

/// The words every "needs a login" failure of a server ends with (before the name).
pub use cairn_mcp::auth::redirect::open_web_page;
pub use cairn_mcp::auth::LOGIN_HINT;
