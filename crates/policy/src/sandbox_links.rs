//! Protected entries that are symbolic links (`.git -> ../repo.git`). The sandbox mounts the
//! link's target read-only, but a mount cannot sit on the link itself: the link is a plain
//! entry of the writable workspace, so a command could remove it and put a folder of its own
//! there (a `.git` with hooks that the user's next `git` would run). A [`LinkGuard`] records
//! each protected link before the command and, once the command is gone, puts any link that
//! changed back, moving what replaced it aside (renamed, never deleted) and logging it.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::sandbox::SandboxSpec;

/// A protected link and the target it pointed to before the command.
#[derive(Debug)]
struct Link {
    path: PathBuf,
    target: PathBuf,
}

/// Puts protected links back when dropped; see the module documentation.
#[derive(Debug, Default)]
pub struct LinkGuard {
    links: Vec<Link>,
}

/// What [`LinkGuard::restore`] did to one link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// The link was gone or pointed elsewhere and is back; what stood there, if anything,
    /// was moved to this path.
    Relinked {
        /// The protected link.
        link: PathBuf,
        /// Where the replacement went.
        moved_to: Option<PathBuf>,
    },
    /// The link changed and could not be put back.
    Failed {
        /// The protected link.
        link: PathBuf,
        /// Why.
        error: String,
    },
}

impl LinkGuard {
    /// Records the protected entries of `spec` that are symbolic links now.
    pub fn register(spec: &SandboxSpec) -> LinkGuard {
        let links = spec
            .read_only_inside
            .iter()
            .map(|inside| spec.workspace.join(inside))
            .filter_map(|path| {
                let meta = std::fs::symlink_metadata(&path).ok()?;
                if !meta.file_type().is_symlink() {
                    return None;
                }
                let target = std::fs::read_link(&path).ok()?;
                Some(Link { path, target })
            })
            .collect();
        LinkGuard { links }
    }

    /// Puts back every recorded link that no longer points where it did.
    pub fn restore(&mut self) -> Vec<Restored> {
        self.links.drain(..).filter_map(|l| relink(&l)).collect()
    }
}

impl Drop for LinkGuard {
    fn drop(&mut self) {
        for r in self.restore() {
            match r {
                Restored::Relinked { link, moved_to } => tracing::warn!(
                    link = %link.display(),
                    moved_to = ?moved_to,
                    "a sandboxed command replaced a protected link; it is put back"
                ),
                Restored::Failed { link, error } => tracing::error!(
                    link = %link.display(),
                    %error,
                    "a sandboxed command replaced a protected link that could not be put back"
                ),
            }
        }
    }
}

/// Puts `l` back if it changed.
fn relink(l: &Link) -> Option<Restored> {
    if std::fs::read_link(&l.path).is_ok_and(|t| t == l.target) {
        return None;
    }
    let moved_to = match std::fs::symlink_metadata(&l.path) {
        Ok(_) => match move_aside(&l.path) {
            Ok(to) => Some(to),
            Err(e) => {
                return Some(Restored::Failed {
                    link: l.path.clone(),
                    error: format!("could not move the replacement aside: {e}"),
                })
            }
        },
        Err(_) => None,
    };
    match std::os::unix::fs::symlink(&l.target, &l.path) {
        Ok(()) => Some(Restored::Relinked {
            link: l.path.clone(),
            moved_to,
        }),
        Err(e) => Some(Restored::Failed {
            link: l.path.clone(),
            error: format!("could not recreate the link: {e}"),
        }),
    }
}

/// Renames `path` to a free `<name>.cairn-replaced-<n>` beside it.
fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    loop {
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let to = path.with_file_name(format!("{name}.cairn-replaced-{}-{n}", std::process::id()));
        if std::fs::symlink_metadata(&to).is_ok() {
            continue;
        }
        std::fs::rename(path, &to)?;
        return Ok(to);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    fn world() -> (tempfile::TempDir, SandboxSpec) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join(".agent")).unwrap();
        std::fs::create_dir_all(dir.path().join("repo.git/hooks")).unwrap();
        symlink("../repo.git", ws.join(".git")).unwrap();
        (dir, SandboxSpec::for_workspace(&ws))
    }

    #[test]
    fn only_protected_links_are_recorded() {
        let (_dir, spec) = world();
        let g = LinkGuard::register(&spec);
        assert_eq!(g.links.len(), 1);
        assert_eq!(g.links[0].target, PathBuf::from("../repo.git"));
    }

    #[test]
    fn an_untouched_link_is_left_alone() {
        let (_dir, spec) = world();
        let mut g = LinkGuard::register(&spec);
        assert!(g.restore().is_empty());
    }

    #[test]
    fn a_replaced_link_is_put_back_and_the_replacement_kept_aside() {
        let (_dir, spec) = world();
        let git = spec.workspace.join(".git");
        let mut g = LinkGuard::register(&spec);
        std::fs::remove_file(&git).unwrap();
        std::fs::create_dir_all(git.join("hooks")).unwrap();
        std::fs::write(git.join("hooks/pre-commit"), "#!/bin/sh\nevil\n").unwrap();
        let done = g.restore();
        let [Restored::Relinked {
            link,
            moved_to: Some(aside),
        }] = done.as_slice()
        else {
            panic!("{done:?}");
        };
        assert_eq!(link, &git);
        assert_eq!(
            std::fs::read_link(&git).unwrap(),
            PathBuf::from("../repo.git")
        );
        assert!(aside.join("hooks/pre-commit").exists(), "kept, not deleted");
        assert!(aside
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".git.cairn-replaced-"));
    }

    #[test]
    fn a_removed_or_retargeted_link_is_put_back_on_drop() {
        let (dir, spec) = world();
        let git = spec.workspace.join(".git");
        {
            let _g = LinkGuard::register(&spec);
            std::fs::remove_file(&git).unwrap();
        }
        assert_eq!(
            std::fs::read_link(&git).unwrap(),
            PathBuf::from("../repo.git")
        );
        {
            let _g = LinkGuard::register(&spec);
            std::fs::remove_file(&git).unwrap();
            symlink(dir.path(), &git).unwrap();
        }
        assert_eq!(
            std::fs::read_link(&git).unwrap(),
            PathBuf::from("../repo.git")
        );
    }
}
