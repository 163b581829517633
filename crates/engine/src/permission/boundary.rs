//! Where a call's paths land against the workspace boundary: inside it (lexically and where
//! symlinks lead), in a protected folder, or in one of Cairn's own folders.

use std::path::{Component, Path, PathBuf};

use cairn_policy::lexical::{fold_dots, Climb};
use cairn_policy::paths::{canonical_workspace, physical_path};

use super::{PermissionEngine, PROTECTED};

/// Whether `path` (relative to `workspace` or absolute) stays inside it, by lexical normalisation.
pub fn lexically_inside(workspace: &Path, path: &str) -> bool {
    normalize(workspace, path).is_some_and(|p| p.starts_with(workspace))
}

/// `path` joined to `workspace` and folded; `None` when a `..` climbs above the root.
fn normalize(workspace: &Path, path: &str) -> Option<PathBuf> {
    fold_dots(&workspace.join(path), Climb::Refuse)
}

/// The words of a command line that may be paths (no operators, quotes or options).
fn path_words(command: &str) -> impl Iterator<Item = &str> {
    command
        .split(|c: char| c.is_whitespace() || ";&|<>()'\"`=,{}".contains(c))
        .filter(|t| !t.is_empty() && !t.starts_with('-'))
}

/// The protected folder a workspace path falls in (case-insensitively, so `.GIT` counts), as
/// written or where its symlinks lead.
pub(super) fn protected_component(workspace: &Path, path: &str) -> Option<&'static str> {
    let find = |rel: &Path| {
        rel.components().find_map(|c| match c {
            Component::Normal(s) => {
                let s = s.to_string_lossy().to_lowercase();
                PROTECTED.iter().copied().find(|p| s == *p)
            }
            _ => None,
        })
    };
    let lexical =
        normalize(workspace, path).and_then(|p| p.strip_prefix(workspace).ok().and_then(&find));
    lexical.or_else(|| {
        let real = physical_path(workspace, path)?;
        let rel = real
            .strip_prefix(canonical_workspace(workspace))
            .or_else(|_| real.strip_prefix(workspace))
            .ok()?;
        find(rel)
    })
}

/// The protected folder a command line run in `dir` names as a path (`.git/hooks/x`,
/// `./.agent`, a symlink into one), if any.
pub(super) fn mentioned_protected(
    workspace: &Path,
    dir: &Path,
    command: &str,
) -> Option<&'static str> {
    path_words(command)
        .find_map(|token| protected_component(workspace, &dir.join(token).display().to_string()))
}

impl PermissionEngine {
    /// Whether `path` (as written or where its links lead) is inside a private folder.
    pub(super) fn in_private_dir(&self, path: &str) -> bool {
        let lexical = normalize(&self.workspace, path);
        let real = physical_path(&self.workspace, path);
        self.private_dirs.iter().any(|dir| {
            let canon = canonical_workspace(dir);
            [lexical.as_ref(), real.as_ref()]
                .into_iter()
                .flatten()
                .any(|p| p.starts_with(dir) || p.starts_with(&canon))
        })
    }

    /// The private folder a command line names as a path, if any.
    pub(super) fn mentioned_private(&self, command: &str) -> Option<&Path> {
        for token in path_words(command) {
            if self.in_private_dir(token) {
                let lexical = normalize(&self.workspace, token);
                return self
                    .private_dirs
                    .iter()
                    .find(|d| lexical.as_ref().is_some_and(|p| p.starts_with(d)))
                    .or(self.private_dirs.first())
                    .map(PathBuf::as_path);
            }
        }
        None
    }

    /// Whether a write to `path` stays inside the workspace or a writable granted directory,
    /// both lexically and physically (symlinks followed).
    pub(super) fn may_write_at(&self, path: &str) -> bool {
        let real = physical_path(&self.workspace, path);
        let inside = |dir: &Path| {
            lexically_inside(dir, path)
                && real
                    .as_ref()
                    .is_some_and(|r| r.starts_with(canonical_workspace(dir)) || r.starts_with(dir))
        };
        inside(&self.workspace)
            || self
                .state
                .granted_dirs
                .iter()
                .any(|(dir, w)| *w && inside(Path::new(dir)))
    }
}
