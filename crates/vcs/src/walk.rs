//! The full walk: every covered entry under a folder of the workspace, as git would see it.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::cache::{git_mode, Stat, MODE_TREE};
use crate::config::VcsConfig;
use crate::rules::Rules;
use crate::tracked::Tracked;

/// A covered entry: a file, symlink, or an empty folder (`mode == MODE_TREE`).
#[derive(Debug, Clone)]
pub(crate) struct Found {
    /// Path relative to the workspace, `/`-separated bytes.
    pub rel: Vec<u8>,
    /// Git mode.
    pub mode: u32,
    /// Stat data (files and symlinks).
    pub stat: Option<Stat>,
}

/// Something present in the workspace that snapshots do not cover, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Excluded {
    /// Path relative to the workspace.
    pub path: String,
    /// Why it is not covered.
    pub reason: String,
}

/// Called with each entry a walk keeps, and its index in [`Walked::found`].
pub(crate) type OnFound<'a> = &'a mut dyn FnMut(usize, &Found);

/// Everything a walk needs besides the tree itself.
pub(crate) struct WalkCtx<'a> {
    /// Workspace root.
    pub root: &'a Path,
    /// Coverage rules.
    pub rules: &'a mut Rules,
    /// Limits.
    pub config: &'a VcsConfig,
    /// The user's tracked paths.
    pub tracked: &'a mut Tracked,
    /// Whether the previous snapshot had this folder (covered folders stay covered).
    pub known_dir: &'a dyn Fn(&[u8]) -> bool,
    /// Called with every folder entered (the watcher adds it).
    pub on_dir: &'a mut dyn FnMut(&Path),
    /// Called with each covered entry (its index in [`Walked::found`]) as soon as it is
    /// certain to be in the result, so its hashing can start while the walk goes on.
    pub on_found: Option<OnFound<'a>>,
}

/// Output of a walk.
#[derive(Default)]
pub(crate) struct Walked {
    /// Covered entries.
    pub found: Vec<Found>,
    /// Entries left out by size caps.
    pub excluded: Vec<Excluded>,
    /// Whether this is the walk's result (not a capped folder's, which may still be dropped).
    top: bool,
    /// How many of `found` were passed to `on_found`.
    reported: usize,
}

/// Joins a parent rel path and a name as git path bytes.
pub(crate) fn join_rel(parent: &[u8], name: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(parent.len() + name.len() + 1);
    v.extend_from_slice(parent);
    if !parent.is_empty() {
        v.push(b'/');
    }
    v.extend_from_slice(name);
    v
}

/// A rel path as a `Path`.
pub(crate) fn rel_path(rel: &[u8]) -> &Path {
    Path::new(std::ffi::OsStr::from_bytes(rel))
}

impl WalkCtx<'_> {
    /// Walks the folder `rel` (already known to be covered; `b""` = the workspace root).
    pub fn walk(&mut self, rel: &[u8]) -> Walked {
        let mut out = Walked {
            top: true,
            ..Walked::default()
        };
        let checked = rel.is_empty() || !self.is_new_untracked(rel);
        if checked {
            self.walk_dir(rel, &mut out, true);
        } else {
            self.walk_capped(rel, &mut out);
        }
        self.report(&mut out);
        out
    }

    /// Passes the entries found since the last call to `on_found` (the walk's result only).
    fn report(&mut self, out: &mut Walked) {
        if !out.top {
            return;
        }
        if let Some(f) = self.on_found.as_mut() {
            for (i, found) in out.found.iter().enumerate().skip(out.reported) {
                f(i, found);
            }
        }
        out.reported = out.found.len();
    }

    fn is_new_untracked(&mut self, rel: &[u8]) -> bool {
        self.tracked.in_repo() && !(self.known_dir)(rel) && !self.tracked.has_under(rel)
    }

    /// Walks a new untracked folder, dropping it whole when it holds too many files.
    fn walk_capped(&mut self, rel: &[u8], out: &mut Walked) {
        let mut sub = Walked::default();
        self.walk_dir(rel, &mut sub, false);
        let files = sub.found.iter().filter(|f| f.mode != MODE_TREE).count();
        if files > self.config.max_untracked_dir_files {
            out.excluded.push(Excluded {
                path: String::from_utf8_lossy(rel).into_owned(),
                reason: format!(
                    "untracked folder with {files} files (limit {})",
                    self.config.max_untracked_dir_files
                ),
            });
        } else {
            out.found.append(&mut sub.found);
            out.excluded.append(&mut sub.excluded);
        }
    }

    fn walk_dir(&mut self, rel: &[u8], out: &mut Walked, check_new: bool) {
        let abs: PathBuf = self.root.join(rel_path(rel));
        (self.on_dir)(&abs);
        let entries = match fs::read_dir(&abs) {
            Ok(e) => e,
            Err(e) => {
                tracing::debug!(path = %abs.display(), error = %e, "cannot list folder");
                return;
            }
        };
        let mut names: Vec<_> = entries.flatten().map(|e| (e.file_name(), e)).collect();
        if names.is_empty() && !rel.is_empty() {
            if crate::snapshot::sandbox_mount_point(rel) {
                return;
            }
            out.found.push(Found {
                rel: rel.to_vec(),
                mode: MODE_TREE,
                stat: None,
            });
            self.report(out);
            return;
        }
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let chain = self.rules.chain(rel_path(rel));
        for (name, entry) in names {
            let child = join_rel(rel, name.as_bytes());
            // `lstat` relative to the open folder (no path lookup from the root).
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_dir() {
                if self
                    .rules
                    .is_ignored_in(&chain, rel_path(&child), true, self.tracked)
                {
                    continue;
                }
                if check_new && self.is_new_untracked(&child) {
                    self.walk_capped(&child, out);
                } else {
                    self.walk_dir(&child, out, check_new);
                }
                continue;
            }
            let Some(mode) = git_mode(&meta) else {
                continue;
            };
            if self
                .rules
                .is_ignored_in(&chain, rel_path(&child), false, self.tracked)
            {
                continue;
            }
            if meta.len() > self.config.max_untracked_file_bytes
                && mode != crate::cache::MODE_LINK
                && !self.tracked.contains(&child)
            {
                out.excluded.push(Excluded {
                    path: String::from_utf8_lossy(&child).into_owned(),
                    reason: format!(
                        "untracked file of {} bytes (limit {})",
                        meta.len(),
                        self.config.max_untracked_file_bytes
                    ),
                });
                continue;
            }
            out.found.push(Found {
                rel: child,
                mode,
                stat: Some(Stat::of(&meta, mode)),
            });
        }
        self.report(out);
    }
}
