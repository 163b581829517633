//! Applying a worktree back to the folder: what changed in the worktree since its last apply
//! is merged into the folder's working tree file by file (3-way: the last applied state, the
//! worktree, the folder). What the user changed in the folder meanwhile is kept; a file that
//! cannot merge cleanly is a conflict and left untouched. Never commits, never touches HEAD
//! or the index.

use std::path::{Path, PathBuf};

use git2::build::TreeUpdateBuilder;
use git2::{FileMode, MergeFileInput, MergeFileOptions, ObjectType, Oid};
use serde::Serialize;

use crate::error::{git, io, Result};
use crate::record::Record;
use crate::store::StateStore;

/// A path left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApplyConflict {
    /// Path relative to the folder.
    pub path: String,
    /// Why it was not applied.
    pub reason: String,
    /// Whether a [`Resolution`] settles it (both sides are files: the folder's kept, or the
    /// worktree's taken); a link or folder in the way, or a file the folder's checkpoints
    /// cannot cover, is for the user to sort out by hand.
    pub resolvable: bool,
}

/// How the user settles a conflicting path of an apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// The folder's version stays; the worktree's counts as applied (the worktree keeps it).
    KeepFolder,
    /// The worktree's version replaces the folder's (the apply's change-turn can undo it).
    TakeWorktree,
}

/// One path an apply writes: its bytes and git mode (`0o100644`, `0o100755`, `0o120000`), or
/// `None` to remove it.
pub type Edit = (String, Option<(Vec<u8>, u32)>);

/// What one path becomes in the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Action {
    /// Already as in the worktree.
    Same,
    /// Written with this content and mode.
    Write(Vec<u8>, FileMode),
    /// Removed.
    Remove,
}

/// What an apply does (or, for a dry run, would do).
#[derive(Debug, Clone)]
pub struct ApplyPlan {
    /// The worktree's state now (a tree in Cairn's store).
    pub state: Oid,
    actions: Vec<(String, Action)>,
    /// Paths left alone.
    pub conflicts: Vec<ApplyConflict>,
    /// The worktree's version of each resolvable conflict (`None`: deleted there).
    theirs: Vec<(String, Option<Version>)>,
    /// Entries of the worktree that are not applied as files, each with why (a nested git
    /// repository, a file that cannot be read).
    pub skipped: Vec<String>,
}

impl ApplyPlan {
    /// Paths that are applied (written, removed or already the same).
    pub fn applied(&self) -> Vec<String> {
        self.actions.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Paths this apply changes in the folder.
    pub fn writes(&self) -> Vec<String> {
        self.actions
            .iter()
            .filter(|(_, a)| *a != Action::Same)
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// What this apply writes: each changed path with its bytes and git mode, or `None`
    /// to remove it.
    pub fn edits(&self) -> Vec<Edit> {
        self.actions
            .iter()
            .filter_map(|(p, a)| match a {
                Action::Same => None,
                Action::Remove => Some((p.clone(), None)),
                Action::Write(bytes, mode) => {
                    Some((p.clone(), Some((bytes.clone(), u32::from(*mode)))))
                }
            })
            .collect()
    }

    /// Leaves `paths` out of this apply, as conflicts with `reason`.
    pub fn set_aside(&mut self, paths: &[String], reason: &str) {
        self.actions.retain(|(p, _)| !paths.contains(p));
        for p in paths {
            self.conflicts.push(ApplyConflict {
                path: p.clone(),
                reason: reason.to_string(),
                resolvable: false,
            });
        }
    }

    /// Settles the conflicting `path` as `how` says: it leaves the conflicts and becomes an
    /// action of this apply. Returns whether it did (a path that is no resolvable conflict
    /// is left as it is).
    pub fn resolve(&mut self, store: &StateStore, path: &str, how: Resolution) -> Result<bool> {
        let Some(at) = self.theirs.iter().position(|(p, _)| p == path) else {
            return Ok(false);
        };
        let (path, theirs) = self.theirs.remove(at);
        let action = match (how, theirs) {
            (Resolution::KeepFolder, _) => Action::Same,
            (Resolution::TakeWorktree, Some(v)) => Action::Write(store.blob(v.oid)?, v.mode),
            (Resolution::TakeWorktree, None) => Action::Remove,
        };
        self.conflicts.retain(|c| c.path != path);
        self.actions.push((path, action));
        Ok(true)
    }

    /// Whether nothing changed in the worktree since the last apply.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty() && self.conflicts.is_empty()
    }
}

/// A file as it is in one of the three versions.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Version {
    oid: Oid,
    mode: FileMode,
}

/// Plans the apply of the worktree of `record` into its folder.
pub fn plan(store: &StateStore, record: &Record) -> Result<ApplyPlan> {
    let skip: std::collections::HashSet<String> = record.included.iter().cloned().collect();
    let (state, skipped) = store.capture_named(&record.path, &skip)?;
    let applied = store.tree_of(&record.applied)?;
    let paths = crate::status::changed_paths(store, applied, state)?;
    let mut actions = Vec::new();
    let mut conflicts = Vec::new();
    let mut resolvable = Vec::new();
    for path in paths {
        let base = store.entry(applied, &path)?.map(version);
        let theirs = store.entry(state, &path)?.map(version);
        if matches!(
            theirs,
            Some(Version {
                mode: FileMode::Tree,
                ..
            })
        ) || matches!(
            base,
            Some(Version {
                mode: FileMode::Tree,
                ..
            })
        ) {
            continue; // the files inside come one by one
        }
        let folder_file = record.folder.join(&path);
        if let Some(reason) = unsafe_target(&record.folder, &path) {
            conflicts.push(ApplyConflict {
                path,
                reason,
                resolvable: false,
            });
            continue;
        }
        let ours = folder_version(&folder_file)?;
        let decided = decide(
            store,
            &path,
            base.as_ref(),
            ours.as_ref(),
            theirs.as_ref(),
            &folder_file,
        )?;
        match decided {
            Ok(a) => actions.push((path, a)),
            Err(reason) => {
                resolvable.push((path.clone(), theirs));
                conflicts.push(ApplyConflict {
                    path,
                    reason,
                    resolvable: true,
                })
            }
        }
    }
    Ok(ApplyPlan {
        state,
        actions,
        conflicts,
        theirs: resolvable,
        skipped,
    })
}

fn version((oid, mode): (Oid, FileMode)) -> Version {
    Version { oid, mode }
}

/// What to do with one path, or why it conflicts.
fn decide(
    store: &StateStore,
    path: &str,
    base: Option<&Version>,
    ours: Option<&Version>,
    theirs: Option<&Version>,
    folder_file: &Path,
) -> Result<std::result::Result<Action, String>> {
    let take = |v: Option<&Version>| -> Result<Action> {
        Ok(match v {
            Some(v) => Action::Write(store.blob(v.oid)?, v.mode),
            None => Action::Remove,
        })
    };
    if ours == theirs {
        return Ok(Ok(Action::Same));
    }
    if ours == base {
        return Ok(Ok(take(theirs)?));
    }
    let (Some(b), Some(o), Some(t)) = (base, ours, theirs) else {
        let reason = match (base, ours, theirs) {
            (_, None, Some(_)) => "deleted in the folder, changed in the worktree",
            (_, Some(_), None) => "changed in the folder, deleted in the worktree",
            (None, Some(_), Some(_)) => "added in both with different content",
            _ => "changed in both",
        };
        return Ok(Err(reason.into()));
    };
    if [b, o, t].iter().any(|v| v.mode == FileMode::Link) {
        return Ok(Err("a link changed in both".into()));
    }
    let base_bytes = store.blob(b.oid)?;
    let ours_bytes =
        std::fs::read(folder_file).map_err(io(format!("reading {}", folder_file.display())))?;
    let theirs_bytes = store.blob(t.oid)?;
    if [&base_bytes, &ours_bytes, &theirs_bytes]
        .iter()
        .any(|c| is_binary(c))
    {
        return Ok(Err("binary file changed in both".into()));
    }
    let mut bi = MergeFileInput::new();
    bi.content(&base_bytes).path(path);
    let mut oi = MergeFileInput::new();
    oi.content(&ours_bytes).path(path);
    let mut ti = MergeFileInput::new();
    ti.content(&theirs_bytes).path(path);
    let mut opts = MergeFileOptions::new();
    opts.ancestor_label("applied")
        .our_label("folder")
        .their_label("worktree");
    let merged =
        git2::merge_file(&bi, &oi, &ti, Some(&mut opts)).map_err(git(format!("merging {path}")))?;
    if !merged.is_automergeable() {
        return Ok(Err("changed in both and the changes overlap".into()));
    }
    // A mode change in the worktree wins over an unchanged one in the folder.
    let mode = if t.mode != b.mode { t.mode } else { o.mode };
    Ok(Ok(Action::Write(merged.content().to_vec(), mode)))
}

/// Whether a component on the way to `rel` inside `folder` is a link or not a folder.
fn unsafe_target(folder: &Path, rel: &str) -> Option<String> {
    let mut cur = PathBuf::from(folder);
    let parts: Vec<&str> = rel.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        cur.push(part);
        match std::fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => {
                return Some(format!("{} is a link in the folder", cur.display()))
            }
            Ok(m) if !m.is_dir() => {
                return Some(format!("{} is a file in the folder", cur.display()))
            }
            _ => {}
        }
    }
    match std::fs::symlink_metadata(folder.join(rel)) {
        Ok(m) if m.is_dir() => Some("a folder is in the way in the folder".into()),
        _ => None,
    }
}

/// The folder's version of a file (hashed, not stored).
fn folder_version(path: &Path) -> Result<Option<Version>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(format!("reading {}", path.display()))(e)),
    };
    let (bytes, mode) = if meta.file_type().is_symlink() {
        let t = std::fs::read_link(path).map_err(io(format!("reading {}", path.display())))?;
        (t.as_os_str().as_encoded_bytes().to_vec(), FileMode::Link)
    } else if meta.is_file() {
        let b = std::fs::read(path).map_err(io(format!("reading {}", path.display())))?;
        (b, crate::store::file_mode(&meta))
    } else {
        return Ok(None);
    };
    let oid = Oid::hash_object(ObjectType::Blob, &bytes).map_err(git("hashing a file"))?;
    Ok(Some(Version { oid, mode }))
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8000).any(|b| *b == 0)
}

/// Carries out `plan` in `folder`; returns the paths written or removed.
pub fn execute(plan: &ApplyPlan, folder: &Path) -> Result<Vec<String>> {
    let mut done = Vec::new();
    for (path, action) in &plan.actions {
        let target = folder.join(path);
        match action {
            Action::Same => continue,
            Action::Remove => match std::fs::remove_file(&target) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(io(format!("removing {}", target.display()))(e))
                }
                _ => {}
            },
            Action::Write(bytes, mode) => write_file(&target, bytes, *mode)?,
        }
        done.push(path.clone());
    }
    Ok(done)
}

pub(crate) fn write_file(target: &Path, bytes: &[u8], mode: FileMode) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(io(format!("creating {}", parent.display())))?;
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = target.with_file_name(format!(".{name}.cairn-apply"));
    let _ = std::fs::remove_file(&tmp);
    if mode == FileMode::Link {
        let link = PathBuf::from(String::from_utf8_lossy(bytes).into_owned());
        std::os::unix::fs::symlink(&link, &tmp)
            .map_err(io(format!("writing {}", target.display())))?;
    } else {
        std::fs::write(&tmp, bytes).map_err(io(format!("writing {}", target.display())))?;
        let bits = if mode == FileMode::BlobExecutable {
            0o755
        } else {
            0o644
        };
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(bits))
            .map_err(io(format!("writing {}", target.display())))?;
    }
    std::fs::rename(&tmp, target).map_err(io(format!("writing {}", target.display())))
}

/// Records in Cairn's store that `plan`'s applied paths are now as in the worktree; returns
/// the commit of the new last-applied state.
pub fn record_applied(store: &StateStore, record: &Record, plan: &ApplyPlan) -> Result<Oid> {
    let applied = store.tree_of(&record.applied)?;
    let base = store
        .repo
        .find_tree(applied)
        .map_err(git("reading a state"))?;
    let mut update = TreeUpdateBuilder::new();
    for (path, _) in &plan.actions {
        match store.entry(plan.state, path)? {
            Some((oid, mode)) => update.upsert(path.as_str(), oid, mode),
            None => update.remove(path.as_str()),
        };
    }
    let tree = update
        .create_updated(&store.repo, &base)
        .map_err(git("recording the apply"))?;
    store.keep(
        &StateStore::applied_ref(&record.name),
        tree,
        "cairn: applied to the folder",
    )
}
