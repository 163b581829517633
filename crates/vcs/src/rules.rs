//! What a snapshot covers: the work tree as git would see it. `.gitignore` and `.ignore` files
//! (in the workspace and in the folders above it up to the repository root), the repository's
//! `info/exclude`, the user's global excludes, LFS patterns from `.gitattributes`, default
//! excluded folder names, and `.git` entries at any depth (nested repositories and submodules
//! are snapshotted as plain files).

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::Match;

use crate::tracked::Tracked;

/// Files whose change alters the rules themselves (a change forces a full walk).
pub(crate) const RULE_FILES: &[&str] = &[".gitignore", ".ignore", ".gitattributes"];

/// The matchers of a folder and its parents, deepest first.
pub(crate) type Chain = Vec<(PathBuf, Arc<Gitignore>)>;

/// An ignore matcher rooted above the workspace, with the workspace's path below its root.
struct Outer {
    ws_prefix: PathBuf,
    matcher: Gitignore,
}

/// The coverage rules of one workspace, with a per-folder matcher cache.
pub(crate) struct Rules {
    root: PathBuf,
    outer: Vec<Outer>,
    dirs: HashMap<PathBuf, Option<Arc<Gitignore>>>,
    excludes: HashSet<OsString>,
    skip: Vec<PathBuf>,
    repo_root: Option<PathBuf>,
}

impl Rules {
    /// Rules for `root` (canonical); `skip` are absolute folders never walked (the state dir).
    pub fn new(root: &Path, default_excludes: &[String], skip: &[PathBuf]) -> Rules {
        let repo_root = find_repo_root(root);
        let mut outer = Vec::new();
        if let Some(repo) = &repo_root {
            // .gitignore files of the folders above the workspace, nearest first.
            let mut dir = root.parent();
            while let Some(d) = dir {
                if !d.starts_with(repo) {
                    break;
                }
                let mut b = GitignoreBuilder::new(d);
                for name in [".gitignore", ".ignore"] {
                    let f = d.join(name);
                    if f.is_file() {
                        let _ = b.add(&f);
                    }
                }
                add_lfs_patterns(&mut b, d);
                if let Ok(m) = b.build() {
                    if !m.is_empty() {
                        outer.push(Outer {
                            ws_prefix: root.strip_prefix(d).unwrap_or(root).to_path_buf(),
                            matcher: m,
                        });
                    }
                }
                if d == repo.as_path() {
                    break;
                }
                dir = d.parent();
            }
            if let Some(exclude) = git_dir(repo).map(|g| g.join("info").join("exclude")) {
                if exclude.is_file() {
                    let mut b = GitignoreBuilder::new(repo);
                    let _ = b.add(&exclude);
                    if let Ok(m) = b.build() {
                        outer.push(Outer {
                            ws_prefix: root.strip_prefix(repo).unwrap_or(root).to_path_buf(),
                            matcher: m,
                        });
                    }
                }
            }
        }
        let global_root = repo_root.clone().unwrap_or_else(|| root.to_path_buf());
        let (global, _) = GitignoreBuilder::new(&global_root).build_global();
        if !global.is_empty() {
            outer.push(Outer {
                ws_prefix: root
                    .strip_prefix(&global_root)
                    .unwrap_or(root)
                    .to_path_buf(),
                matcher: global,
            });
        }
        Rules {
            root: root.to_path_buf(),
            outer,
            dirs: HashMap::new(),
            excludes: default_excludes.iter().map(OsString::from).collect(),
            skip: skip
                .iter()
                .filter_map(|s| s.strip_prefix(root).ok().map(Path::to_path_buf))
                .filter(|s| !s.as_os_str().is_empty())
                .collect(),
            repo_root,
        }
    }

    /// The git repository the workspace is in (itself or a parent folder), if any.
    pub fn repo_root(&self) -> Option<&Path> {
        self.repo_root.as_deref()
    }

    /// Forgets cached matchers (after a rule file changed).
    pub fn invalidate(&mut self) {
        self.dirs.clear();
    }

    /// The ignore matchers that apply to entries of the folder `dir`, deepest first.
    pub fn chain(&mut self, dir: &Path) -> Chain {
        let mut out = Vec::new();
        let mut d = Some(dir);
        while let Some(cur) = d {
            if let Some(m) = self.matcher(cur) {
                out.push((cur.to_path_buf(), m));
            }
            d = cur.parent();
        }
        out
    }

    /// Whether the entry `rel` (its parent folders already known to be covered) is excluded.
    /// Folders with a default-excluded name stay covered when the user's git tracks files in
    /// them.
    pub fn is_ignored(&mut self, rel: &Path, is_dir: bool, tracked: &mut Tracked) -> bool {
        let chain = self.chain(rel.parent().unwrap_or(Path::new("")));
        self.is_ignored_in(&chain, rel, is_dir, tracked)
    }

    /// [`Rules::is_ignored`] with the parent folder's matchers already looked up.
    pub fn is_ignored_in(
        &self,
        chain: &Chain,
        rel: &Path,
        is_dir: bool,
        tracked: &mut Tracked,
    ) -> bool {
        let Some(name) = rel.file_name() else {
            return false;
        };
        if name == ".git" || (!is_dir && is_cairn_temp(name.as_bytes())) {
            return true;
        }
        if is_dir
            && self.excludes.contains(name)
            && !tracked.surely_has_under(rel.as_os_str().as_bytes())
        {
            return true;
        }
        if is_dir && self.skip.iter().any(|s| s == rel) {
            return true;
        }
        for (d, m) in chain {
            let local = rel.strip_prefix(d).unwrap_or(rel);
            match m.matched(local, is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        for o in &self.outer {
            match o.matcher.matched(o.ws_prefix.join(rel), is_dir) {
                Match::Ignore(_) => return true,
                Match::Whitelist(_) => return false,
                Match::None => {}
            }
        }
        false
    }

    /// Whether `rel` or any folder above it is excluded (for single changed paths).
    pub fn is_excluded_path(&mut self, rel: &Path, is_dir: bool, tracked: &mut Tracked) -> bool {
        let parents: Vec<PathBuf> = rel
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .collect();
        for a in parents.iter().rev() {
            if self.is_ignored(a, true, tracked) {
                return true;
            }
        }
        self.is_ignored(rel, is_dir, tracked)
    }

    fn matcher(&mut self, dir: &Path) -> Option<Arc<Gitignore>> {
        if let Some(m) = self.dirs.get(dir) {
            return m.clone();
        }
        let abs = self.root.join(dir);
        let mut b = GitignoreBuilder::new(&abs);
        for name in [".gitignore", ".ignore"] {
            let f = abs.join(name);
            if f.is_file() {
                let _ = b.add(&f);
            }
        }
        add_lfs_patterns(&mut b, &abs);
        let m = b.build().ok().filter(|m| !m.is_empty()).map(Arc::new);
        self.dirs.insert(dir.to_path_buf(), m.clone());
        m
    }
}

/// Whether a file name is one of Cairn's own temp files: `.NAME.cairn-tmp-PID-N` (the file
/// tools' atomic writes) or `.NAME.cairn-restore` (a restore's). Never part of a checkpoint.
pub(crate) fn is_cairn_temp(name: &[u8]) -> bool {
    if !name.starts_with(b".") {
        return false;
    }
    if name.ends_with(b".cairn-restore") {
        return true;
    }
    let marker = b".cairn-tmp-";
    name.windows(marker.len()).any(|w| w == marker)
}

/// Adds the patterns `.gitattributes` in `dir` marks `filter=lfs` (large files kept out).
fn add_lfs_patterns(b: &mut GitignoreBuilder, dir: &Path) {
    let Ok(text) = fs::read_to_string(dir.join(".gitattributes")) else {
        return;
    };
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let Some(pattern) = parts.next() else {
            continue;
        };
        if pattern.starts_with('#') {
            continue;
        }
        if parts.any(|a| a == "filter=lfs") {
            let _ = b.add_line(None, pattern);
        }
    }
}

/// The folder holding `.git` at or above `dir`.
pub(crate) fn find_repo_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// The git dir of a repository root: `.git`, or where a `.git` file points (read only).
pub(crate) fn git_dir(repo_root: &Path) -> Option<PathBuf> {
    let dot = repo_root.join(".git");
    let meta = fs::symlink_metadata(&dot).ok()?;
    if meta.is_dir() {
        return Some(dot);
    }
    let text = fs::read_to_string(&dot).ok()?;
    let target = text.trim().strip_prefix("gitdir:")?.trim();
    let p = PathBuf::from(target);
    Some(if p.is_absolute() {
        p
    } else {
        repo_root.join(p)
    })
}
