//! What a removal keeps besides the worktree's tracked and untracked state: its edited
//! `.worktreeinclude` copies, its ignored files outside the dependency and build folders, and
//! its nested repositories whole (their `.git` folder and so their history included). They go
//! into Cairn's store as one tree, within bounds like the checkpoints'; what cannot be kept
//! (over a bound, unreadable, a nested repository whose history lives elsewhere) is named so
//! the removal can refuse before anything is deleted.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::build::TreeUpdateBuilder;
use git2::{FileMode, Oid, Repository, Status, StatusOptions};
use serde::{Deserialize, Serialize};

use crate::error::{git, Result};
use crate::nofollow::{self, Content};
use crate::record::Record;
use crate::store::StateStore;

/// Folder names never kept (dependency caches and build outputs), as the checkpoints'
/// default excludes.
pub const DEFAULT_EXCLUDES: &[&str] = &[
    "node_modules",
    "target",
    ".venv",
    "venv",
    "dist",
    "build",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".tox",
    ".gradle",
    ".next",
    ".nuxt",
    ".turbo",
    ".parcel-cache",
];

/// How a `.git` name is stored in a tree (git refuses `.git` entries).
const DOTGIT: &str = ".cairn-dotgit";

/// How much a removal keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeepBounds {
    /// A file larger than this is not kept (named).
    pub max_file_bytes: u64,
    /// An ignored folder holding more files than this is not kept (named as a whole).
    pub max_dir_files: usize,
    /// Bytes kept in all; files past it are not kept (named).
    pub max_total_bytes: u64,
    /// Folder names never kept (dependency caches, build output).
    pub excludes: Vec<String>,
}

impl Default for KeepBounds {
    fn default() -> Self {
        KeepBounds {
            max_file_bytes: 10 * 1024 * 1024,
            max_dir_files: 2000,
            max_total_bytes: 512 * 1024 * 1024,
            excludes: DEFAULT_EXCLUDES.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// What a removal keeps, as recorded with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KeptFiles {
    /// Commit in Cairn's store of the kept files' tree (`.git` stored as `.cairn-dotgit`).
    pub state: String,
    /// The kept paths (nested repositories as `dir/`).
    pub files: Vec<String>,
    /// Empty folders to make again (stored paths).
    #[serde(default)]
    pub dirs: Vec<String>,
    /// Permission bits of files whose bits are not what their git mode says (stored paths).
    #[serde(default)]
    pub perms: BTreeMap<String, u32>,
}

/// What [`collect`] found.
#[derive(Debug, Clone, Default)]
pub struct Kept {
    /// The kept files' tree in Cairn's store (`None`: nothing to keep).
    pub tree: Option<Oid>,
    /// Kept paths (files; nested repositories as `dir/`).
    pub files: Vec<String>,
    /// Nested repositories among them.
    pub nested: Vec<String>,
    /// Empty folders (stored paths).
    pub dirs: Vec<String>,
    /// Permission bits that differ from the git mode's (stored paths).
    pub perms: BTreeMap<String, u32>,
    /// Bytes kept.
    pub bytes: u64,
    /// What cannot be kept, each with why: removing loses it, so only `--force` does.
    pub not_kept: Vec<String>,
    /// Dependency and build folders left out by design (named in the output).
    pub dropped: Vec<String>,
}

struct Collector<'a> {
    store: &'a StateStore,
    root: &'a Path,
    bounds: &'a KeepBounds,
    update: TreeUpdateBuilder,
    kept: Kept,
}

/// The stored form of a relative path: every `.git` component becomes `.cairn-dotgit`.
fn stored(rel: &Path) -> PathBuf {
    rel.components()
        .map(|c| {
            let n = c.as_os_str();
            if n == ".git" {
                std::ffi::OsStr::new(DOTGIT)
            } else {
                n
            }
        })
        .collect()
}

/// The path a stored path stands for.
fn unstored(p: &Path) -> PathBuf {
    p.components()
        .map(|c| {
            let n = c.as_os_str();
            if n == DOTGIT {
                std::ffi::OsStr::new(".git")
            } else {
                n
            }
        })
        .collect()
}

fn shown(rel: &Path) -> String {
    rel.to_string_lossy().into_owned()
}

impl Collector<'_> {
    fn excluded(&self, rel: &Path) -> bool {
        rel.components().any(|c| {
            self.bounds
                .excludes
                .iter()
                .any(|e| c.as_os_str() == e.as_str())
        })
    }

    fn not_kept(&mut self, rel: &Path, dir: bool, why: &str) {
        let slash = if dir { "/" } else { "" };
        self.kept
            .not_kept
            .push(format!("{}{slash} ({why})", shown(rel)));
    }

    /// Keeps the file or link `rel`.
    fn file(&mut self, rel: &Path) {
        if rel
            .components()
            .any(|c| c.as_os_str() == DOTGIT || c.as_os_str().as_bytes().contains(&b'\n'))
        {
            self.not_kept(rel, false, "a name Cairn cannot store");
            return;
        }
        if let Ok(m) = std::fs::symlink_metadata(self.root.join(rel)) {
            if m.is_file() && m.len() > self.bounds.max_file_bytes {
                let why = format!(
                    "{} bytes, over the {}-byte bound",
                    m.len(),
                    self.bounds.max_file_bytes
                );
                self.not_kept(rel, false, &why);
                return;
            }
        }
        let content = match nofollow::read(self.root, rel) {
            Ok(Some(c)) => c,
            Ok(None) => return,
            Err(e) => {
                self.not_kept(rel, false, &format!("cannot be read: {e}"));
                return;
            }
        };
        let (bytes, mode, perms) = match &content {
            Content::Link(t) => (t.as_os_str().as_bytes().to_vec(), FileMode::Link, None),
            Content::File { bytes, perms } => {
                let exec = perms & 0o111 != 0;
                let mode = if exec {
                    FileMode::BlobExecutable
                } else {
                    FileMode::Blob
                };
                let usual = if exec { 0o755 } else { 0o644 };
                (bytes.clone(), mode, (*perms != usual).then_some(*perms))
            }
        };
        let size = bytes.len() as u64;
        if self.kept.bytes + size > self.bounds.max_total_bytes {
            let why = format!(
                "past the {}-byte bound of what a removal keeps",
                self.bounds.max_total_bytes
            );
            self.not_kept(rel, false, &why);
            return;
        }
        let oid = match self.store.repo.blob(&bytes) {
            Ok(o) => o,
            Err(e) => {
                self.not_kept(rel, false, &format!("cannot be stored: {e}"));
                return;
            }
        };
        let at = stored(rel);
        if let Some(p) = perms {
            self.kept.perms.insert(shown(&at), p);
        }
        self.update.upsert(&at, oid, mode);
        self.kept.bytes += size;
        self.kept.files.push(shown(rel));
    }

    /// Keeps the ignored folder `rel` (within the folder bound), or names it.
    fn ignored_dir(&mut self, rel: &Path) {
        let mut files = 0;
        if count(&self.root.join(rel), self.bounds, &mut files) {
            let why = format!(
                "over {} files, the bound of a kept folder",
                self.bounds.max_dir_files
            );
            self.not_kept(rel, true, &why);
            return;
        }
        self.walk(rel, false);
    }

    /// Keeps everything below `rel` (`whole`: a nested repository, `.git` and excluded
    /// names included).
    fn walk(&mut self, rel: &Path, whole: bool) {
        let full = self.root.join(rel);
        let entries = match std::fs::read_dir(&full) {
            Ok(e) => e,
            Err(e) => {
                self.not_kept(rel, true, &format!("cannot be listed: {e}"));
                return;
            }
        };
        let mut empty = true;
        let mut names: Vec<_> = entries.flatten().collect();
        names.sort_by_key(|e| e.file_name());
        for e in names {
            empty = false;
            let child = rel.join(e.file_name());
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                self.not_kept(&child, false, "cannot be read");
                continue;
            };
            if meta.is_dir() {
                if !whole && self.excluded(&child) {
                    self.kept.dropped.push(format!("{}/", shown(&child)));
                } else if !whole && e.path().join(".git").symlink_metadata().is_ok() {
                    self.nested(&child);
                } else {
                    self.walk(&child, whole);
                }
            } else if meta.is_file() || meta.file_type().is_symlink() {
                self.file(&child);
            } else {
                self.kept
                    .dropped
                    .push(format!("{} (not a file)", shown(&child)));
            }
        }
        if empty {
            self.kept.dirs.push(shown(&stored(rel)));
        }
    }

    /// Keeps the nested repository `rel` whole (its `.git` folder included), or names it when
    /// its history lives elsewhere (a `.git` file).
    fn nested(&mut self, rel: &Path) {
        let dotgit = self.root.join(rel).join(".git");
        match std::fs::symlink_metadata(&dotgit) {
            Ok(m) if m.is_dir() => {
                let before = self.kept.not_kept.len();
                self.walk(rel, true);
                if self.kept.not_kept.len() == before {
                    self.kept.nested.push(format!("{}/", shown(rel)));
                }
            }
            _ => self.not_kept(
                rel,
                true,
                "a nested repository or submodule whose history lives elsewhere (its .git is a \
                 file or link): move it out first",
            ),
        }
    }
}

/// Counts files below `dir` into `files`; true once over the bound.
fn count(dir: &Path, bounds: &KeepBounds, files: &mut usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    for e in entries.flatten() {
        let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if is_dir {
            if count(&e.path(), bounds, files) {
                return true;
            }
        } else {
            *files += 1;
            if *files > bounds.max_dir_files {
                return true;
            }
        }
    }
    false
}

/// Whether the worktree's copy of included file `rel` differs from the folder's.
fn edited_include(record: &Record, rel: &Path) -> bool {
    let ours = nofollow::read(&record.path, rel).ok().flatten();
    let theirs = nofollow::read(&record.folder, rel).ok().flatten();
    ours.is_some() && ours != theirs
}

/// Collects what a removal of the worktree of `record` keeps, into `store`.
pub fn collect(store: &StateStore, record: &Record, bounds: &KeepBounds) -> Result<Kept> {
    let wt = Repository::open(&record.path).map_err(git("opening the worktree"))?;
    let mut c = Collector {
        store,
        root: &record.path,
        bounds,
        update: TreeUpdateBuilder::new(),
        kept: Kept::default(),
    };
    let included: std::collections::HashSet<&str> =
        record.included.iter().map(String::as_str).collect();
    for rel in &record.included {
        if edited_include(record, Path::new(rel)) {
            c.file(Path::new(rel));
        }
    }
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(true)
        .recurse_ignored_dirs(false)
        .exclude_submodules(true)
        .renames_head_to_index(false)
        .renames_index_to_workdir(false);
    let statuses = wt
        .statuses(Some(&mut opts))
        .map_err(git("reading the worktree's ignored files"))?;
    let mut ignored = Vec::new();
    let mut nested = Vec::new();
    for entry in statuses.iter() {
        let raw = entry.path_bytes();
        let trimmed = raw.strip_suffix(b"/").unwrap_or(raw);
        let rel = PathBuf::from(std::ffi::OsStr::from_bytes(trimmed));
        let st = entry.status();
        if st.contains(Status::IGNORED) {
            ignored.push(rel);
        } else if st.contains(Status::WT_NEW)
            && std::fs::symlink_metadata(record.path.join(&rel)).is_ok_and(|m| m.is_dir())
        {
            nested.push(rel);
        }
    }
    // Submodules (tracked) whose folder holds a repository.
    if let Ok(subs) = wt.submodules() {
        for s in subs {
            let p = s.path().to_path_buf();
            if record.path.join(&p).join(".git").symlink_metadata().is_ok() {
                nested.push(p);
            }
        }
    }
    for rel in ignored {
        if included.contains(shown(&rel).as_str()) {
            continue;
        }
        if c.excluded(&rel) {
            c.kept.dropped.push(format!("{}/", shown(&rel)));
            continue;
        }
        let full = record.path.join(&rel);
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.is_dir() => {
                if full.join(".git").symlink_metadata().is_ok() {
                    c.nested(&rel);
                } else {
                    c.ignored_dir(&rel);
                }
            }
            Ok(_) => c.file(&rel),
            Err(_) => {}
        }
    }
    for rel in nested {
        c.nested(&rel);
    }
    let Collector {
        mut update,
        mut kept,
        ..
    } = c;
    if !kept.files.is_empty() || !kept.dirs.is_empty() {
        let empty = store
            .repo
            .treebuilder(None)
            .and_then(|b| b.write())
            .map_err(git("recording the kept files"))?;
        let base = store
            .repo
            .find_tree(empty)
            .map_err(git("recording the kept files"))?;
        kept.tree = Some(
            update
                .create_updated(&store.repo, &base)
                .map_err(git("recording the kept files"))?,
        );
    }
    // A nested repository's files are listed once, as the repository.
    kept.files
        .retain(|f| !kept.nested.iter().any(|n| f.starts_with(n.as_str())));
    kept.files.extend(kept.nested.iter().cloned());
    kept.files.sort();
    Ok(kept)
}

/// Writes the kept files of `kept` back into the worktree at `root`, byte for byte (modes,
/// links and nested repositories' `.git` included); links on the way are never followed.
pub fn write_back(store: &StateStore, kept: &KeptFiles, root: &Path) -> Result<()> {
    let tree = store.tree_of(&kept.state)?;
    let tree = store
        .repo
        .find_tree(tree)
        .map_err(git("reading the kept files"))?;
    let mut files: Vec<(PathBuf, Oid, i32)> = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, e| {
        if e.kind() == Some(git2::ObjectType::Blob) {
            let p = PathBuf::from(std::ffi::OsStr::from_bytes(dir.as_bytes()))
                .join(std::ffi::OsStr::from_bytes(e.name_bytes()));
            files.push((p, e.id(), e.filemode()));
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(git("reading the kept files"))?;
    for (at, oid, mode) in files {
        let bytes = store.blob(oid)?;
        let content = if mode == i32::from(FileMode::Link) {
            Content::Link(PathBuf::from(std::ffi::OsStr::from_bytes(&bytes)))
        } else {
            let usual = if mode == i32::from(FileMode::BlobExecutable) {
                0o755
            } else {
                0o644
            };
            let perms = kept.perms.get(&shown(&at)).copied().unwrap_or(usual);
            Content::File { bytes, perms }
        };
        let rel = unstored(&at);
        nofollow::write(root, &rel, &content).map_err(|e| crate::error::WorktreeError::Io {
            context: format!("writing {}", root.join(&rel).display()),
            source: std::io::Error::other(e.to_string()),
        })?;
    }
    for d in &kept.dirs {
        let rel = unstored(Path::new(d));
        nofollow::make_dir(root, &rel).map_err(|e| crate::error::WorktreeError::Io {
            context: format!("making {}", root.join(&rel).display()),
            source: std::io::Error::other(e.to_string()),
        })?;
    }
    Ok(())
}
