//! Leaf-level differences between two snapshot trees: files, symlinks and empty folders.

use std::collections::BTreeMap;

use git2::{Oid, Repository};

use crate::cache::MODE_TREE;
use crate::error::Result;
use crate::walk::join_rel;

/// A leaf: a blob with its mode, or an empty folder (`mode == MODE_TREE`).
pub(crate) type Leaf = (Oid, u32);

/// One changed leaf path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// Path relative to the workspace.
    pub path: Vec<u8>,
    /// Before (`None` = absent).
    pub old: Option<Leaf>,
    /// After (`None` = absent).
    pub new: Option<Leaf>,
}

fn entries(repo: &Repository, tree: Option<Oid>) -> Result<BTreeMap<Vec<u8>, (Oid, u32)>> {
    let mut out = BTreeMap::new();
    if let Some(id) = tree {
        let t = repo.find_tree(id)?;
        for e in t.iter() {
            out.insert(e.name_bytes().to_vec(), (e.id(), e.filemode() as u32));
        }
    }
    Ok(out)
}

/// Leaf changes from tree `a` to tree `b`, sorted by path.
pub(crate) fn diff(repo: &Repository, a: Option<Oid>, b: Option<Oid>) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    diff_dir(repo, a, b, b"", &mut out)?;
    out.sort_by(|x, y| x.path.cmp(&y.path));
    Ok(out)
}

fn diff_dir(
    repo: &Repository,
    a: Option<Oid>,
    b: Option<Oid>,
    prefix: &[u8],
    out: &mut Vec<Change>,
) -> Result<()> {
    if a == b {
        return Ok(());
    }
    let ea = entries(repo, a)?;
    let eb = entries(repo, b)?;
    if !prefix.is_empty() {
        // An empty folder on one side is itself a leaf.
        let empty_a = a.is_some() && ea.is_empty();
        let empty_b = b.is_some() && eb.is_empty();
        if empty_a != empty_b {
            out.push(Change {
                path: prefix.to_vec(),
                old: a.filter(|_| empty_a).map(|id| (id, MODE_TREE)),
                new: b.filter(|_| empty_b).map(|id| (id, MODE_TREE)),
            });
        }
    }
    let mut names: Vec<&Vec<u8>> = ea.keys().chain(eb.keys()).collect();
    names.sort();
    names.dedup();
    for name in names {
        let p = join_rel(prefix, name);
        let x = ea.get(name).copied();
        let y = eb.get(name).copied();
        if x == y {
            continue;
        }
        let x_tree = x.filter(|(_, m)| *m == MODE_TREE).map(|(id, _)| id);
        let y_tree = y.filter(|(_, m)| *m == MODE_TREE).map(|(id, _)| id);
        let x_leaf = x.filter(|(_, m)| *m != MODE_TREE);
        let y_leaf = y.filter(|(_, m)| *m != MODE_TREE);
        if x_tree.is_some() || y_tree.is_some() {
            diff_dir(repo, x_tree, y_tree, &p, out)?;
        }
        if x_leaf.is_some() || y_leaf.is_some() {
            out.push(Change {
                path: p,
                old: x_leaf,
                new: y_leaf,
            });
        }
    }
    Ok(())
}

/// The entry at `path` in `tree` (a leaf, or `MODE_TREE` for any folder).
pub(crate) fn lookup(repo: &Repository, tree: Oid, path: &[u8]) -> Result<Option<Leaf>> {
    let t = repo.find_tree(tree)?;
    match t.get_path(crate::walk::rel_path(path)) {
        Ok(e) => Ok(Some((e.id(), e.filemode() as u32))),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(e.into()),
    }
}
