//! Restore: plans which covered paths change (with three-way conflict checks), writes a
//! journal, applies the plan through a [`TreeWriter`], and can finish or roll back a plan whose
//! process died half-way.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::path::Path;

use cairn_policy::lexical::{fold_dots, Climb};

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use crate::attrib::Cause;
use crate::cache::{MODE_EXEC, MODE_LINK, MODE_TREE};
use crate::error::{Result, VcsError};
use crate::fsops::{temp_path, TreeWriter};
use crate::tree::{self, split_last, Edit};
use crate::treediff::{self, Leaf};
use crate::walk::{rel_path, Excluded};

/// What to restore.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreOptions {
    /// Target: the state right after this change-turn; `0` = before the first change.
    pub to_turn: u32,
    /// Only these paths (files or folders, relative to the workspace); empty = everything.
    pub paths: Vec<String>,
    /// Report what would happen without changing anything.
    pub dry_run: bool,
    /// Also overwrite paths changed outside the agent's turns and uncertain ones (they stay
    /// in the pre-restore snapshot, so this too is undoable); never another session's.
    pub force: bool,
}

/// A path a restore left alone, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// Path relative to the workspace.
    pub path: String,
    /// Why it was not touched.
    pub reason: String,
    /// Whose change it keeps, when that is why (not in the CLI's JSON, whose `reason` says it;
    /// faces word it themselves).
    #[serde(skip)]
    pub cause: Option<crate::Cause>,
}

/// What a restore did (or, for a dry run, would do).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoreReport {
    /// Paths written back (created or replaced; folders end with `/`).
    pub restored: Vec<String>,
    /// Of those, existing files whose current content was replaced.
    pub overwritten: Vec<String>,
    /// Requested `--path`s that exist neither now nor at the target.
    pub missing: Vec<String>,
    /// Paths removed because they did not exist at the target.
    pub deleted: Vec<String>,
    /// Paths left alone (changed by the user since the agent's snapshots, or unsafe).
    pub conflicts: Vec<Conflict>,
    /// Whether nothing was changed.
    pub dry_run: bool,
    /// The target change-turn.
    pub to_turn: u32,
    /// The change-turn recorded for this restore (restore to the one before it to undo).
    pub turn: Option<u32>,
}

/// One path to change: its state in the pre-restore snapshot and at the target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Action {
    pub path: Vec<u8>,
    pub old: Option<(String, u32)>,
    pub new: Option<(String, u32)>,
}

/// The journal of a restore in progress (`restore-journal.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Journal {
    pub session: String,
    pub to_turn: u32,
    pub pre_commit: String,
    pub pre_tree: String,
    pub target_tree: String,
    pub summary: String,
    pub actions: Vec<Action>,
    /// What the pre-restore snapshot did not cover.
    #[serde(default)]
    pub excluded: Vec<Excluded>,
    /// Set when this is the apply of a worktree (its NAME), not a restore: finishing it
    /// records an apply change-turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_from: Option<String>,
}

impl Journal {
    /// What it does, for messages: "restore to turn N" or "apply of worktree NAME".
    pub(crate) fn what(&self) -> String {
        match &self.applied_from {
            Some(name) => format!("apply of worktree {name}"),
            None => format!("restore to turn {}", self.to_turn),
        }
    }
}

fn leaf_str(l: Option<Leaf>) -> Option<(String, u32)> {
    l.map(|(id, m)| (id.to_string(), m))
}

fn display(path: &[u8], dir: bool) -> String {
    let mut s = String::from_utf8_lossy(path).into_owned();
    if dir {
        s.push('/');
    }
    s
}

/// Normalises a user-given path to a workspace-relative one.
fn normalize(root: &Path, p: &str) -> Result<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let path = Path::new(p);
    let rel = if path.is_absolute() {
        path.strip_prefix(root)
            .map_err(|_| VcsError::PathOutside(p.to_string()))?
    } else {
        path
    };
    // `./a//b/` → `a/b`; `..` may not climb out of the workspace.
    if rel.has_root() {
        return Err(VcsError::PathOutside(p.to_string()));
    }
    let folded =
        fold_dots(rel, Climb::Refuse).ok_or_else(|| VcsError::PathOutside(p.to_string()))?;
    let parts: Vec<&[u8]> = folded.iter().map(|n| n.as_bytes()).collect();
    Ok(parts.join(&b'/'))
}

fn under(path: &[u8], prefix: &[u8]) -> bool {
    prefix.is_empty()
        || path == prefix
        || (path.starts_with(prefix) && path.get(prefix.len()) == Some(&b'/'))
}

/// Plans a restore from the pre-restore tree `pre` to `target`. `user_changed` are paths
/// changed outside the agent's turns since the target.
pub(crate) fn plan(
    repo: &Repository,
    root: &Path,
    pre: Oid,
    target: Oid,
    user_changed: &HashMap<Vec<u8>, Cause>,
    not_covered: &[Excluded],
    opts: &RestoreOptions,
) -> Result<(Vec<Action>, RestoreReport)> {
    let wanted: Vec<Vec<u8>> = opts
        .paths
        .iter()
        .map(|p| normalize(root, p))
        .collect::<Result<_>>()?;
    let changes = treediff::diff(repo, Some(pre), Some(target))?;
    let mut report = RestoreReport {
        dry_run: opts.dry_run,
        to_turn: opts.to_turn,
        ..RestoreReport::default()
    };
    for w in &wanted {
        let touched = changes.iter().any(|c| under(&c.path, w));
        let known = w.is_empty()
            || treediff::lookup(repo, pre, w)?.is_some()
            || treediff::lookup(repo, target, w)?.is_some();
        if !touched && !known {
            report.missing.push(String::from_utf8_lossy(w).into_owned());
        }
    }
    let mut actions = Vec::new();
    // Links this restore removes or replaces (parents come before their children): a path
    // below one is written into a real folder, not through the link.
    let mut removed_links: HashSet<Vec<u8>> = HashSet::new();
    for c in changes {
        if !wanted.is_empty() && !wanted.iter().any(|w| under(&c.path, w)) {
            continue;
        }
        let is_dir = |l: &Option<Leaf>| l.is_some_and(|(_, m)| m == MODE_TREE);
        let name = display(
            &c.path,
            is_dir(&c.new) || (c.new.is_none() && is_dir(&c.old)),
        );
        if let Some(reason) =
            unsafe_reason(repo, root, pre, &c.path, &c.old, &c.new, &removed_links)?
        {
            report.conflicts.push(crate::restore::Conflict {
                path: name,
                reason,
                cause: None,
            });
            continue;
        }
        // Absent from the target only because that checkpoint could not hold it (too large,
        // in a folder too big): deleting it would lose it, whatever --force says.
        if c.new.is_none() {
            if let Some(e) = not_covered
                .iter()
                .find(|e| under(&c.path, e.path.trim_end_matches('/').as_bytes()))
            {
                report.conflicts.push(Conflict {
                    path: name,
                    reason: format!(
                        "was not covered by that checkpoint ({}); kept as it is",
                        e.reason
                    ),
                    cause: None,
                });
                continue;
            }
        }
        if let Some(cause) = user_changed
            .get(&c.path)
            .filter(|cause| !opts.force || !cause.forceable())
        {
            report.conflicts.push(Conflict {
                path: name,
                reason: cause.reason(),
                cause: Some(cause.clone()),
            });
            continue;
        }
        match (&c.old, &c.new) {
            (_, Some(_)) => {
                if c.old.is_some() && !is_dir(&c.old) {
                    report.overwritten.push(name.clone());
                }
                report.restored.push(name);
            }
            (Some(_), None) => report.deleted.push(name),
            (None, None) => continue,
        }
        let is_link = |l: &Option<Leaf>| l.is_some_and(|(_, m)| m == MODE_LINK);
        if is_link(&c.old) && !is_link(&c.new) {
            removed_links.insert(c.path.clone());
        }
        actions.push(Action {
            path: c.path,
            old: leaf_str(c.old),
            new: leaf_str(c.new),
        });
    }
    Ok((actions, report))
}

/// Why touching `path` is unsafe regardless of `--force`, if it is.
fn unsafe_reason(
    repo: &Repository,
    root: &Path,
    pre: Oid,
    path: &[u8],
    old: &Option<Leaf>,
    new: &Option<Leaf>,
    removed_links: &HashSet<Vec<u8>>,
) -> Result<Option<String>> {
    let mut parent = split_last(path).0;
    while !parent.is_empty() {
        if !removed_links.contains(parent)
            && fs::symlink_metadata(root.join(rel_path(parent)))
                .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Ok(Some("a parent folder is a symlink on disk".into()));
        }
        parent = split_last(parent).0;
    }
    // What shows at `path` through a link the restore removes is not what will be there.
    let mut below_removed_link = false;
    let mut p = split_last(path).0;
    while !p.is_empty() {
        below_removed_link |= removed_links.contains(p);
        p = split_last(p).0;
    }
    if old.is_none() && new.is_some_and(|(_, m)| m != MODE_TREE) && !below_removed_link {
        if let Ok(meta) = fs::symlink_metadata(root.join(rel_path(path))) {
            let covered_dir = meta.is_dir()
                && treediff::lookup(repo, pre, path)?.is_some_and(|(_, m)| m == MODE_TREE);
            if !covered_dir {
                return Ok(Some(
                    "exists on disk but is not covered by snapshots (ignored or excluded)".into(),
                ));
            }
        }
    }
    Ok(None)
}

fn oid(s: &str) -> Result<Oid> {
    Ok(Oid::from_str(s)?)
}

fn interrupted(path: &Path) -> impl FnOnce(std::io::Error) -> VcsError + '_ {
    move |source| VcsError::Interrupted {
        path: path.to_path_buf(),
        source,
    }
}

/// Applies one side of `actions` (`forward` = the target; else back to the pre-restore state).
/// `keep_tree` is the tree whose folders must not be removed while cleaning up.
pub(crate) fn apply(
    repo: &Repository,
    root: &Path,
    writer: &dyn TreeWriter,
    actions: &[Action],
    forward: bool,
    keep_tree: Oid,
) -> Result<()> {
    let side = |a: &Action| {
        if forward {
            a.new.clone()
        } else {
            a.old.clone()
        }
    };
    let other = |a: &Action| {
        if forward {
            a.old.clone()
        } else {
            a.new.clone()
        }
    };
    // 1. Removals, deepest first.
    let mut removed_parents: BTreeSet<Vec<u8>> = BTreeSet::new();
    for a in actions.iter().rev().filter(|a| side(a).is_none()) {
        let abs = root.join(rel_path(&a.path));
        let _ = fs::remove_file(temp_path(&abs));
        match other(a) {
            Some((_, MODE_TREE)) => {
                let _ = writer.remove_dir(&abs);
            }
            _ => writer.remove_file(&abs).map_err(interrupted(&abs))?,
        }
        let mut p = split_last(&a.path).0;
        while !p.is_empty() {
            removed_parents.insert(p.to_vec());
            p = split_last(p).0;
        }
    }
    // 2. Folders emptied by the removals and absent from the kept tree.
    for dir in removed_parents.iter().rev() {
        if treediff::lookup(repo, keep_tree, dir)?.is_none() {
            let _ = writer.remove_dir(&root.join(rel_path(dir)));
        }
    }
    // 3. Empty folders, then files.
    for a in actions {
        let Some((id, mode)) = side(a) else { continue };
        let abs = root.join(rel_path(&a.path));
        if mode == MODE_TREE {
            writer.create_dir_all(&abs).map_err(interrupted(&abs))?;
            continue;
        }
        if let Some(parent) = abs.parent() {
            writer.create_dir_all(parent).map_err(interrupted(&abs))?;
        }
        let blob = repo.find_blob(oid(&id)?)?;
        if already(&abs, blob.content(), mode) {
            // Never replaced (a rollback of a write that did not happen), or done before
            // (a finish): nothing to write, so it needs no space either.
            let _ = fs::remove_file(temp_path(&abs));
            continue;
        }
        if mode == MODE_LINK {
            writer.write_symlink(&abs, blob.content())
        } else {
            writer.write_file(&abs, blob.content(), mode == MODE_EXEC)
        }
        .map_err(interrupted(&abs))?;
    }
    Ok(())
}

/// Whether `abs` already is `content` with `mode` (a link to it, or a file with its bytes
/// and executable bit).
fn already(abs: &Path, content: &[u8], mode: u32) -> bool {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = fs::symlink_metadata(abs) else {
        return false;
    };
    if mode == MODE_LINK {
        return meta.file_type().is_symlink()
            && fs::read_link(abs).is_ok_and(|t| t.as_os_str().as_bytes() == content);
    }
    let exec = meta.permissions().mode() & 0o111 != 0;
    meta.is_file()
        && meta.len() == content.len() as u64
        && exec == (mode == MODE_EXEC)
        && fs::read(abs).is_ok_and(|b| b == content)
}

/// The tree after applying one side of `actions` to `base`.
pub(crate) fn result_tree(
    repo: &Repository,
    root: &Path,
    base: Oid,
    actions: &[Action],
    forward: bool,
) -> Result<Oid> {
    let mut edits: BTreeMap<Vec<u8>, Edit> = BTreeMap::new();
    for a in actions {
        let side = if forward { &a.new } else { &a.old };
        let e = match side {
            None => Edit::Delete,
            Some((_, MODE_TREE)) => Edit::EmptyDir,
            Some((id, mode)) => Edit::Put(oid(id)?, *mode),
        };
        // A path that changes type (file ↔ folder) has two actions, a removal and a
        // creation: the result holds what was created, whichever comes first.
        match edits.get(&a.path) {
            Some(_) if e == Edit::Delete => {}
            _ => {
                edits.insert(a.path.clone(), e);
            }
        }
    }
    let mut keep = |rel: &[u8]| crate::snapshot::is_empty_dir(&root.join(rel_path(rel)));
    tree::apply(repo, Some(base), &edits, &mut keep)
}
