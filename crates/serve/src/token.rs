//! The bearer token: created once (`O_EXCL`, `0600`, 32 random bytes as unpadded base64url),
//! reused after, refused when group or others can read it; compared in constant time.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use base64::Engine;
use rand::RngCore;

use crate::config::ServeError;

/// The shortest token accepted from a file.
pub const MIN_TOKEN_LEN: usize = 32;

/// Reads the token at `path`, creating it when absent.
pub fn load_or_create(path: &Path) -> Result<String, ServeError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        if !parent.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(|e| {
                    ServeError::Usage(format!("cannot create {}: {e}", parent.display()))
                })?;
        }
    }
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    let fresh = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(mut f) => {
            f.write_all(format!("{fresh}\n").as_bytes())
                .and_then(|_| f.sync_all())
                .map_err(|e| ServeError::Failed(format!("writing {}: {e}", path.display())))?;
            Ok(fresh)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_existing(path),
        Err(e) => Err(ServeError::Usage(format!(
            "cannot create the token file {}: {e}",
            path.display()
        ))),
    }
}

fn read_existing(path: &Path) -> Result<String, ServeError> {
    let meta = std::fs::metadata(path)
        .map_err(|e| ServeError::Usage(format!("{}: {e}", path.display())))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(ServeError::Usage(format!(
            "the token file {} can be read by group or others: chmod 600 it",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| ServeError::Usage(format!("reading {}: {e}", path.display())))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.len() < MIN_TOKEN_LEN {
        return Err(ServeError::Usage(format!(
            "the token in {} is shorter than {MIN_TOKEN_LEN} characters",
            path.display()
        )));
    }
    Ok(token)
}

/// Whether `a` equals `b`, in time that depends only on their lengths.
pub fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_token_is_created_once_then_reused_and_an_open_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("serve.token");
        let first = load_or_create(&path).unwrap();
        assert_eq!(first.len(), 43);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(load_or_create(&path).unwrap(), first);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(load_or_create(&path), Err(ServeError::Usage(_))));
        std::fs::write(&path, "short\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(matches!(load_or_create(&path), Err(ServeError::Usage(_))));
    }

    #[test]
    fn comparison_needs_equal_bytes() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
    }
}
