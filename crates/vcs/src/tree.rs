//! Builds snapshot trees: from a full list of entries, or by editing the previous tree so only
//! the folders on the paths of changed entries are rewritten. Empty folders are kept as empty
//! trees (Cairn's store only; git itself cannot hold them).

use std::collections::{BTreeMap, HashSet};

use git2::{ObjectType, Oid, Repository, Tree};

use crate::cache::MODE_TREE;
use crate::error::Result;
use crate::pack::{object_id, PackBatch};
use crate::walk::{join_rel, Found};

/// A change to one path of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Edit {
    /// Remove whatever is at the path (file or whole folder).
    Delete,
    /// A file or symlink with this blob and mode.
    Put(Oid, u32),
    /// An empty folder.
    EmptyDir,
}

#[derive(Default)]
struct Node {
    files: Vec<(Vec<u8>, Oid, u32)>,
    dirs: BTreeMap<Vec<u8>, Node>,
}

impl Node {
    fn dir(&mut self, rel: &[u8]) -> &mut Node {
        let mut node = self;
        for part in rel.split(|b| *b == b'/').filter(|p| !p.is_empty()) {
            node = node.dirs.entry(part.to_vec()).or_default();
        }
        node
    }
}

/// Writes the tree of a full walk (`ids[i]` is the blob of `found[i]`, `None` = left out).
pub(crate) fn build(repo: &Repository, found: &[Found], ids: &[Option<Oid>]) -> Result<Oid> {
    let mut root = Node::default();
    for (f, id) in found.iter().zip(ids) {
        if f.mode == MODE_TREE {
            root.dir(&f.rel);
            continue;
        }
        let Some(id) = id else { continue };
        let (parent, name) = split_last(&f.rel);
        root.dir(parent).files.push((name.to_vec(), *id, f.mode));
    }
    let odb = repo.odb()?;
    let mut new = NewTrees::default();
    let id = write_node(&odb, &root, &mut new)?;
    if new.list.len() < PACK_TREES {
        for (_, buf) in &new.list {
            odb.write(ObjectType::Tree, buf)?;
        }
    } else {
        // A first snapshot of a big tree: thousands of trees, one pack instead of as many
        // loose files.
        let mut pack = PackBatch::new(repo.path());
        for (id, buf) in &new.list {
            pack.add(ObjectType::Tree, *id, buf)?;
        }
        pack.write()?;
        odb.refresh()?;
    }
    Ok(id)
}

/// New trees of one build are written as a pack from this many on.
const PACK_TREES: usize = 64;

/// Trees a build must store (each once), children before parents.
#[derive(Default)]
struct NewTrees {
    seen: HashSet<Oid>,
    list: Vec<(Oid, Vec<u8>)>,
}

/// Serialises a node as a git tree object, to be stored unless it already exists (one
/// existence check per folder instead of one per entry).
fn write_node(odb: &git2::Odb<'_>, node: &Node, new: &mut NewTrees) -> Result<Oid> {
    let mut entries: Vec<(Vec<u8>, u32, Oid)> =
        Vec::with_capacity(node.files.len() + node.dirs.len());
    for (name, id, mode) in &node.files {
        entries.push((name.clone(), *mode, *id));
    }
    for (name, child) in &node.dirs {
        let id = write_node(odb, child, new)?;
        let mut key = name.clone();
        key.push(b'/');
        entries.push((key, MODE_TREE, id));
    }
    // Git orders entries by name, folders as if their name ended with `/`.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut buf = Vec::with_capacity(entries.len() * 48);
    for (key, mode, id) in &entries {
        let name = if *mode == MODE_TREE {
            &key[..key.len() - 1]
        } else {
            &key[..]
        };
        buf.extend_from_slice(format!("{mode:o} ").as_bytes());
        buf.extend_from_slice(name);
        buf.push(0);
        buf.extend_from_slice(id.as_bytes());
    }
    let id = object_id(ObjectType::Tree, &buf)?;
    if !new.seen.contains(&id) && !odb.exists_ext(id, git2::OdbLookupFlags::NO_REFRESH) {
        new.seen.insert(id);
        new.list.push((id, buf));
    }
    Ok(id)
}

/// Splits `a/b/c` into (`a/b`, `c`).
pub(crate) fn split_last(rel: &[u8]) -> (&[u8], &[u8]) {
    match rel.iter().rposition(|b| *b == b'/') {
        Some(i) => (&rel[..i], &rel[i + 1..]),
        None => (&[], rel),
    }
}

/// Applies `edits` (keyed by path) to the tree `base`. A folder left empty by the edits is
/// kept as an empty tree only when `keep_empty(path)` says it is an empty folder on disk.
pub(crate) fn apply(
    repo: &Repository,
    base: Option<Oid>,
    edits: &BTreeMap<Vec<u8>, Edit>,
    keep_empty: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<Oid> {
    let base_tree = match base {
        Some(id) => Some(repo.find_tree(id)?),
        None => None,
    };
    let list: Vec<(&[u8], &Edit)> = edits.iter().map(|(k, v)| (k.as_slice(), v)).collect();
    match apply_dir(repo, base_tree.as_ref(), b"", &list, keep_empty)? {
        Some(id) => Ok(id),
        None => Ok(repo.treebuilder(None)?.write()?),
    }
}

type Group<'a> = (Option<&'a Edit>, Vec<(&'a [u8], &'a Edit)>);

fn apply_dir(
    repo: &Repository,
    base: Option<&Tree<'_>>,
    prefix: &[u8],
    edits: &[(&[u8], &Edit)],
    keep_empty: &mut dyn FnMut(&[u8]) -> bool,
) -> Result<Option<Oid>> {
    let mut b = repo.treebuilder(base)?;
    let mut groups: BTreeMap<&[u8], Group<'_>> = BTreeMap::new();
    for (path, edit) in edits {
        match path.iter().position(|c| *c == b'/') {
            Some(i) => groups
                .entry(&path[..i])
                .or_default()
                .1
                .push((&path[i + 1..], *edit)),
            None => groups.entry(path).or_default().0 = Some(*edit),
        }
    }
    for (name, (direct, sub)) in groups {
        let full = join_rel(prefix, name);
        let mut current: Option<Oid> = match b.get(name)? {
            Some(e) if e.filemode() == MODE_TREE as i32 => Some(e.id()),
            _ => None,
        };
        match direct {
            Some(Edit::Put(id, mode)) => {
                b.insert(name, *id, *mode as i32)?;
                continue;
            }
            Some(Edit::Delete) => {
                if b.get(name)?.is_some() {
                    b.remove(name)?;
                }
                current = None;
            }
            Some(Edit::EmptyDir) | None => {}
        }
        if sub.is_empty() && direct != Some(&Edit::EmptyDir) {
            continue;
        }
        let result = if sub.is_empty() {
            None
        } else {
            let sub_base = match current {
                Some(id) => Some(repo.find_tree(id)?),
                None => None,
            };
            apply_dir(repo, sub_base.as_ref(), &full, &sub, keep_empty)?
        };
        match result {
            Some(id) => {
                b.insert(name, id, MODE_TREE as i32)?;
            }
            None if direct == Some(&Edit::EmptyDir) || keep_empty(&full) => {
                let empty = repo.treebuilder(None)?.write()?;
                b.insert(name, empty, MODE_TREE as i32)?;
            }
            None => {
                if b.get(name)?.is_some() {
                    b.remove(name)?;
                }
            }
        }
    }
    if b.is_empty() {
        Ok(None)
    } else {
        Ok(Some(b.write()?))
    }
}
