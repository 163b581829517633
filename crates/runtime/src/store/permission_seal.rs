//! The seal on a saved session's permissions (mode, allowlists, granted folders): an
//! HMAC-SHA-256 over the session id, its workspace and its permission state, written into
//! `state.json` as `permissionsSeal`. A restored session whose seal does not match (the file
//! was edited by anything but Cairn, or predates seals) comes back in `interactive` mode (or
//! the stricter mode it names) with no allowlists or grants, and the user is told.
//!
//! The key is 32 random bytes in `<config dir>/cairn/session-seal.key` (mode 0600): outside
//! the state dir, in a folder no workspace may contain, that tools never write and the
//! sandbox keeps read-only. Not the OS keyring: every process of the user can read the keyring too, and
//! where it is unavailable (headless CI) the key would come and go with it.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cairn_engine::PermissionState;
use cairn_protocol::Mode;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::store::SavedSession;

/// The JSON field of `state.json` holding the seal.
pub const SEAL_FIELD: &str = "permissionsSeal";

/// The key file: `<config dir>/cairn/session-seal.key`.
pub fn key_path() -> Option<PathBuf> {
    crate::reserved::config_dir().map(|d| d.join("session-seal.key"))
}

static KEY: OnceLock<Option<Vec<u8>>> = OnceLock::new();

fn key() -> Option<&'static [u8]> {
    KEY.get_or_init(|| match key_path().map(|p| load_or_create(&p)) {
        Some(Ok(k)) => Some(k),
        Some(Err(e)) => {
            tracing::warn!(
                "cannot read or create the session seal key: {e}; restored sessions will ask again"
            );
            None
        }
        None => None,
    })
    .as_deref()
}

fn load_or_create(path: &Path) -> std::io::Result<Vec<u8>> {
    match std::fs::read(path) {
        Ok(k) if k.len() >= 32 => return Ok(k),
        Ok(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} is too short", path.display()),
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut key = Vec::with_capacity(32);
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    key.extend_from_slice(uuid::Uuid::new_v4().as_bytes());
    // Written whole to a private temp file, then linked into place: a concurrent start never
    // reads half a key, and the first one to link wins.
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&key)?;
        f.sync_all()?;
    }
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => std::fs::read(path),
        Err(e) => Err(e),
    }
}

fn mac_with(key: &[u8], session_id: &str, workspace: &str, p: &PermissionState) -> Option<String> {
    let body = serde_json::to_vec(p).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(key).ok()?;
    for part in [session_id.as_bytes(), workspace.as_bytes(), &body] {
        mac.update(&(part.len() as u64).to_le_bytes());
        mac.update(part);
    }
    Some(
        mac.finalize()
            .into_bytes()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    )
}

/// The seal of `s`'s permissions; `None` when no key is available.
pub fn seal(s: &SavedSession) -> Option<String> {
    mac_with(key()?, &s.session_id, &s.workspace, &s.permissions)
}

/// Whether `seal` is the current seal of `s`'s permissions.
fn matches(s: &SavedSession, seal: Option<&str>) -> bool {
    match (key(), seal) {
        (Some(k), Some(found)) => {
            mac_with(k, &s.session_id, &s.workspace, &s.permissions).as_deref() == Some(found)
        }
        _ => false,
    }
}

/// The seals found in the session's checkpoint files (`state.json`, `state.json.bak`).
fn stored_seals(session_dir: &Path) -> Vec<String> {
    ["state.json", "state.json.bak"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(session_dir.join(f)).ok())
        .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .filter_map(|v| v.get(SEAL_FIELD)?.as_str().map(str::to_string))
        .collect()
}

/// The permissions a restored session may come back with: its own when their seal matches,
/// else `interactive` (or the stricter `discuss` / `plan` it names) with nothing allowed or
/// granted; the second value says why they were dropped.
pub fn restored_permissions(
    s: &SavedSession,
    session_dir: &Path,
) -> (PermissionState, Option<String>) {
    if stored_seals(session_dir)
        .iter()
        .any(|seal| matches(s, Some(seal)))
    {
        return (s.permissions.clone(), None);
    }
    let mode = match s.permissions.mode {
        m @ (Mode::Discuss | Mode::Plan) => m,
        _ => Mode::Interactive,
    };
    let p = &s.permissions;
    let dropped = p.mode != mode
        || !p.allow_tools.is_empty()
        || !p.allow_commands.is_empty()
        || !p.granted_dirs.is_empty();
    let why = dropped.then(|| {
        format!(
            "the saved permissions of session {} do not carry Cairn's seal (the file was changed \
             outside Cairn, or saved by an older version): it continues in {} mode with no \
             session allowlists or granted folders",
            s.session_id,
            mode.as_str()
        )
    });
    (
        PermissionState {
            mode,
            ..Default::default()
        },
        why,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn the_mac_covers_mode_grants_and_identity() {
        let key = [7u8; 32];
        let mut p = PermissionState::default();
        let base = mac_with(&key, "s1", "/ws", &p).unwrap();
        assert_eq!(mac_with(&key, "s1", "/ws", &p).unwrap(), base);
        assert_ne!(mac_with(&key, "s2", "/ws", &p).unwrap(), base);
        assert_ne!(mac_with(&[8u8; 32], "s1", "/ws", &p).unwrap(), base);
        p.mode = Mode::Auto;
        assert_ne!(mac_with(&key, "s1", "/ws", &p).unwrap(), base);
        p.mode = PermissionState::default().mode;
        p.granted_dirs.insert("/etc".into(), true);
        assert_ne!(mac_with(&key, "s1", "/ws", &p).unwrap(), base);
    }

    #[test]
    fn a_key_is_created_once_and_private() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("cairn/session-seal.key");
        let k = load_or_create(&path).unwrap();
        assert_eq!(k.len(), 32);
        assert_eq!(load_or_create(&path).unwrap(), k);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
