//! Mount points a bubblewrap sandbox leaves on the host. To keep a command from creating a
//! protected folder that does not exist yet (`.git`, `.agent`, `.cairn`), the sandbox mounts an
//! empty read-only directory there; bubblewrap has to create that directory in the writable
//! workspace, so it shows on the host as an empty folder while the command runs. A
//! [`MountPointGuard`] removes it once no sandbox (of this process or another, known through
//! marker files) still uses it, and never removes anything that is not an empty directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// Users of each mount point inside this process.
fn registry() -> MutexGuard<'static, HashMap<PathBuf, usize>> {
    static REGISTRY: OnceLock<Mutex<HashMap<PathBuf, usize>>> = OnceLock::new();
    let m = REGISTRY.get_or_init(|| Mutex::new(HashMap::new()));
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps mount points registered while a sandboxed command runs; dropping it cleans up.
#[derive(Debug)]
pub struct MountPointGuard {
    entries: Vec<Entry>,
}

#[derive(Debug)]
struct Entry {
    mount_point: PathBuf,
    marker: Option<PathBuf>,
}

impl MountPointGuard {
    /// Registers `mount_points` as in use. Markers go under `marker_root` (a folder the
    /// sandbox cannot write) so other processes see them; without one only this process
    /// coordinates.
    pub fn register(mount_points: Vec<PathBuf>, marker_root: Option<&Path>) -> MountPointGuard {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let mut entries = Vec::new();
        for mount_point in mount_points {
            *registry().entry(mount_point.clone()).or_insert(0) += 1;
            let marker = marker_root.and_then(|root| {
                let dir = root.join(hash_path(&mount_point));
                std::fs::create_dir_all(&dir).ok()?;
                let name = format!(
                    "{}-{}",
                    std::process::id(),
                    SEQ.fetch_add(1, Ordering::Relaxed)
                );
                let file = dir.join(name);
                std::fs::write(&file, mount_point.as_os_str().as_encoded_bytes()).ok()?;
                Some(file)
            });
            entries.push(Entry {
                mount_point,
                marker,
            });
        }
        MountPointGuard { entries }
    }

    /// The registered mount points.
    pub fn mount_points(&self) -> Vec<&Path> {
        self.entries
            .iter()
            .map(|e| e.mount_point.as_path())
            .collect()
    }
}

impl Drop for MountPointGuard {
    fn drop(&mut self) {
        for entry in self.entries.drain(..) {
            let last_here = {
                let mut reg = registry();
                match reg.get_mut(&entry.mount_point) {
                    Some(n) if *n > 1 => {
                        *n -= 1;
                        false
                    }
                    _ => {
                        reg.remove(&entry.mount_point);
                        true
                    }
                }
            };
            let others_elsewhere = match &entry.marker {
                Some(marker) => {
                    let _ = std::fs::remove_file(marker);
                    marker.parent().is_some_and(other_live_markers)
                }
                None => false,
            };
            if last_here && !others_elsewhere {
                remove_if_empty_dir(&entry.mount_point);
                if let Some(dir) = entry.marker.as_ref().and_then(|m| m.parent()) {
                    let _ = std::fs::remove_dir(dir);
                }
            }
        }
    }
}

/// Whether `dir` holds a marker of another live process (stale markers are removed). Markers
/// of this process are the registry's business.
fn other_live_markers(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let me = std::process::id();
    let mut live = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        match pid {
            Some(pid) if pid == me => {}
            Some(pid) if Path::new("/proc").join(pid.to_string()).exists() => live = true,
            _ => {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    live
}

/// Removes `path` when it is a real, empty directory (what bubblewrap created); anything else
/// — a file, a symlink, a folder someone filled meanwhile — stays.
fn remove_if_empty_dir(path: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if !meta.file_type().is_dir() {
        return;
    }
    let empty = std::fs::read_dir(path)
        .map(|mut entries| entries.next().is_none())
        .unwrap_or(false);
    if empty {
        if let Err(e) = std::fs::remove_dir(path) {
            tracing::debug!(path = %path.display(), error = %e, "sandbox: mount point kept");
        }
    }
}

/// A stable file name for a path (FNV-1a).
fn hash_path(path: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in path.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn an_empty_mount_point_goes_when_the_last_user_drops() {
        let tmp = tempfile::tempdir().unwrap();
        let markers = tmp.path().join("markers");
        let mp = tmp.path().join("ws/.git");
        std::fs::create_dir_all(&mp).unwrap();
        let a = MountPointGuard::register(vec![mp.clone()], Some(&markers));
        let b = MountPointGuard::register(vec![mp.clone()], Some(&markers));
        drop(a);
        assert!(mp.is_dir(), "another sandbox of this process still uses it");
        drop(b);
        assert!(!mp.exists());
        assert!(!markers.join(hash_path(&mp)).exists());
    }

    #[test]
    fn filled_folders_files_and_symlinks_are_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let filled = tmp.path().join("filled");
        std::fs::create_dir(&filled).unwrap();
        std::fs::write(filled.join("HEAD"), "ref").unwrap();
        let file = tmp.path().join("file");
        std::fs::write(&file, "").unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path().join("empty-target"), &link).unwrap();
        std::fs::create_dir(tmp.path().join("empty-target")).unwrap();
        drop(MountPointGuard::register(
            vec![filled.clone(), file.clone(), link.clone()],
            None,
        ));
        assert!(filled.join("HEAD").is_file());
        assert!(file.is_file());
        assert!(std::fs::symlink_metadata(&link).is_ok());
    }

    #[test]
    fn a_live_marker_of_another_process_keeps_the_mount_point() {
        let tmp = tempfile::tempdir().unwrap();
        let markers = tmp.path().join("markers");
        let mp = tmp.path().join(".agent");
        std::fs::create_dir(&mp).unwrap();
        let dir = markers.join(hash_path(&mp));
        std::fs::create_dir_all(&dir).unwrap();
        // pid 1 is always alive; a pid that cannot exist is stale.
        std::fs::write(dir.join("1-0"), "").unwrap();
        std::fs::write(dir.join("4194305-0"), "").unwrap();
        drop(MountPointGuard::register(vec![mp.clone()], Some(&markers)));
        assert!(mp.is_dir());
        assert!(!dir.join("4194305-0").exists(), "stale marker removed");
        std::fs::remove_file(dir.join("1-0")).unwrap();
        drop(MountPointGuard::register(vec![mp.clone()], Some(&markers)));
        assert!(!mp.exists());
    }
}
