//! Takes tree snapshots of the workspace: a full walk with the stat cache, or, when the
//! tracker knows exactly what changed, an edit of the previous tree at those paths only.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use crate::cache::{git_mode, Stat, StatCache, MODE_LINK, MODE_TREE};
use crate::config::VcsConfig;
use crate::error::Result;
use crate::hash::{Fed, Feeder};
use crate::progress::{ProgressFn, Ticker};
use crate::rules::{Rules, RULE_FILES};
use crate::tracked::Tracked;
use crate::tracker::{Dirty, Tracker};
use crate::tree::{self, Edit};
use crate::walk::{rel_path, Excluded, Found, WalkCtx};

/// A snapshot of the work tree as a tree object in the store.
#[derive(Debug, Clone)]
pub struct TreeSnapshot {
    /// The tree.
    pub tree: Oid,
    /// Whether the whole tree was walked (else only changed paths were looked at).
    pub full_walk: bool,
    /// Files read and hashed for it.
    pub hashed: usize,
    /// What is present but not covered (size caps).
    pub excluded: Vec<Excluded>,
}

/// Snapshot machinery of one workspace.
pub(crate) struct Snapshotter {
    root: PathBuf,
    repo_dir: PathBuf,
    rules: Rules,
    tracked: Tracked,
    cache: StatCache,
    tracker: Option<Tracker>,
    config: VcsConfig,
    last: Option<Oid>,
    excluded: BTreeMap<String, String>,
    capped: BTreeSet<Vec<u8>>,
    last_hashed: usize,
    progress: Option<ProgressFn>,
    /// Hashing threads to use (`None`: as many as the machine has, up to 4).
    #[cfg(test)]
    pub threads: Option<usize>,
    /// How long a snapshot runs before progress is reported (`None`: a second).
    #[cfg(test)]
    pub quiet: Option<std::time::Duration>,
}

fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

impl Snapshotter {
    /// Sets up rules, the stat cache and (if enabled) the watcher.
    pub fn new(
        root: &Path,
        repo_dir: &Path,
        index_path: &Path,
        sync_dir: &Path,
        skip: &[PathBuf],
        config: VcsConfig,
    ) -> Result<Snapshotter> {
        let rules = Rules::new(root, &config.default_excludes, skip);
        let tracked = Tracked::new(root, rules.repo_root());
        let tracker = if config.watch {
            Tracker::start(sync_dir)
        } else {
            None
        };
        Ok(Snapshotter {
            root: root.to_path_buf(),
            repo_dir: repo_dir.to_path_buf(),
            rules,
            tracked,
            cache: StatCache::open(index_path)?,
            tracker,
            config,
            last: None,
            excluded: BTreeMap::new(),
            capped: BTreeSet::new(),
            last_hashed: 0,
            progress: None,
            #[cfg(test)]
            threads: None,
            #[cfg(test)]
            quiet: None,
        })
    }

    /// The tree of the last snapshot this process took.
    pub fn last(&self) -> Option<Oid> {
        self.last
    }

    /// Tells the snapshotter the work tree now matches `tree` at the given paths (after a
    /// restore wrote them), so the next snapshot need not re-read them.
    pub fn set_last(&mut self, tree: Oid) {
        self.last = Some(tree);
    }

    /// Sets the observer of long snapshots.
    pub fn set_progress(&mut self, progress: Option<ProgressFn>) {
        self.progress = progress;
    }

    /// The hashing threads to use, when not the default.
    fn threads(&self) -> Option<usize> {
        #[cfg(test)]
        return self.threads;
        #[cfg(not(test))]
        None
    }

    /// Writes the stat cache.
    pub fn flush(&mut self) -> Result<()> {
        self.cache.save()
    }

    /// Takes a snapshot; `prev` is the store's latest tree (used when this process has none).
    pub fn snapshot(&mut self, repo: &Repository, prev: Option<Oid>) -> Result<TreeSnapshot> {
        let started = std::time::Instant::now();
        let mut ticker = Ticker::started_at(self.progress.clone(), started);
        #[cfg(test)]
        if let Some(q) = self.quiet {
            ticker = ticker.with_quiet(q);
        }
        let dirty = match (self.last, self.tracker.as_mut()) {
            (Some(_), Some(t)) => t.take(),
            _ => Dirty::Unknown,
        };
        tracing::trace!(us = started.elapsed().as_micros() as u64, "watcher barrier");
        let paths = match dirty {
            Dirty::Paths(p) => p,
            Dirty::Unknown => return self.full(repo, prev, &mut ticker),
        };
        let rule_change = paths.iter().any(|p| {
            p.file_name()
                .is_some_and(|n| RULE_FILES.iter().any(|r| n == *r))
        });
        let Some(base) = self.last else {
            return self.full(repo, prev, &mut ticker);
        };
        if rule_change {
            return self.full(repo, prev, &mut ticker);
        }
        self.incremental(repo, base, paths, &mut ticker)
    }

    fn full(
        &mut self,
        repo: &Repository,
        prev: Option<Oid>,
        ticker: &mut Ticker,
    ) -> Result<TreeSnapshot> {
        let started = std::time::Instant::now();
        if let Some(t) = self.tracker.as_mut() {
            t.reset();
        }
        self.rules.invalidate();
        self.tracked.reset();
        let prev_tree = match self.last.or(prev) {
            Some(id) => repo.find_tree(id).ok(),
            None => None,
        };
        let known = |rel: &[u8]| {
            prev_tree.as_ref().is_some_and(|t| {
                t.get_path(rel_path(rel))
                    .is_ok_and(|e| e.filemode() == MODE_TREE as i32)
            })
        };
        let mut tracker = self.tracker.take();
        let mut on_dir = |d: &Path| {
            if let Some(t) = tracker.as_mut() {
                t.watch_dir(d);
            }
        };
        // Blobs are stored while the walk goes on: each entry goes to the hashers as soon as
        // the walk is sure to keep it.
        let mut feeder = feeder(&self.repo_dir, &self.root, self.threads(), ticker);
        let cache = &self.cache;
        let mut on_found = |i: usize, f: &Found| {
            let cached = f.stat.as_ref().and_then(|s| cache.lookup(&f.rel, s));
            let hash = f.stat.is_some() && cached.is_none();
            feeder.found(i, &f.rel, f.mode, cached, hash);
        };
        let walked = WalkCtx {
            root: &self.root,
            rules: &mut self.rules,
            config: &self.config,
            tracked: &mut self.tracked,
            known_dir: &known,
            on_dir: &mut on_dir,
            on_found: Some(&mut on_found),
        }
        .walk(b"");
        self.tracker = tracker;
        let walk_ms = started.elapsed().as_millis() as u64;
        let Fed {
            ids,
            hashed: hashed_now,
            count,
        } = feeder.finish(repo)?;
        self.last_hashed = count;
        let hash_ms = started.elapsed().as_millis() as u64;
        let tree = tree::build(repo, &walked.found, &ids)?;
        let tree_ms = started.elapsed().as_millis() as u64;
        let now = now_secs();
        let mut cached: Vec<(&[u8], Stat, Oid)> = walked
            .found
            .iter()
            .zip(&ids)
            .filter_map(|(f, id)| Some((f.rel.as_slice(), f.stat?, (*id)?)))
            .collect();
        if self.last_hashed * 10 > cached.len() || self.cache.len() < cached.len() / 2 {
            // Mostly new content: rebuild the cache in one sorted pass.
            cached.sort_unstable_by(|a, b| a.0.cmp(b.0));
            self.cache.replace_all(cached.into_iter(), now)?;
        } else {
            // Mostly cache hits: update the hashed entries, drop the vanished ones.
            for (i, (f, id)) in walked.found.iter().zip(&ids).enumerate() {
                if let (true, Some(stat), Some(id)) = (hashed_now[i], f.stat, id) {
                    self.cache.record(&f.rel, &stat, *id, now)?;
                }
            }
            if self.cache.len() != cached.len() {
                let live: std::collections::HashSet<&[u8]> = cached.iter().map(|c| c.0).collect();
                self.cache.retain(|p| live.contains(p))?;
            }
        }
        self.cache.save()?;
        tracing::debug!(
            entries = walked.found.len(),
            hashed = self.last_hashed,
            walk_ms,
            hash_ms,
            tree_ms,
            total_ms = started.elapsed().as_millis() as u64,
            "full-walk snapshot"
        );
        self.capped = walked
            .excluded
            .iter()
            .filter(|e| e.reason.starts_with("untracked folder"))
            .map(|e| e.path.as_bytes().to_vec())
            .collect();
        self.excluded = walked
            .excluded
            .iter()
            .map(|e| (e.path.clone(), e.reason.clone()))
            .collect();
        self.last = Some(tree);
        Ok(TreeSnapshot {
            tree,
            full_walk: true,
            hashed: self.last_hashed,
            excluded: walked.excluded,
        })
    }

    /// Blob ids for entries: from the stat cache, else hashed into the store.
    fn ids_for(
        &mut self,
        repo: &Repository,
        found: &[Found],
        ticker: &mut Ticker,
    ) -> Result<Vec<Option<Oid>>> {
        let mut feeder = feeder(&self.repo_dir, &self.root, self.threads(), ticker);
        for (i, f) in found.iter().enumerate() {
            let cached = f.stat.as_ref().and_then(|s| self.cache.lookup(&f.rel, s));
            let hash = f.stat.is_some() && cached.is_none();
            feeder.found(i, &f.rel, f.mode, cached, hash);
        }
        let fed = feeder.finish(repo)?;
        self.last_hashed = fed.count;
        Ok(fed.ids)
    }

    fn incremental(
        &mut self,
        repo: &Repository,
        base: Oid,
        paths: Vec<PathBuf>,
        ticker: &mut Ticker,
    ) -> Result<TreeSnapshot> {
        let mut edits: BTreeMap<Vec<u8>, Edit> = BTreeMap::new();
        let mut found: Vec<Found> = Vec::new();
        let mut excluded = Vec::new();
        let mut rels: Vec<Vec<u8>> = paths
            .iter()
            .filter_map(|p| p.strip_prefix(&self.root).ok())
            .map(|r| r.as_os_str().as_bytes().to_vec())
            .filter(|r| !r.is_empty())
            .collect();
        rels.sort();
        rels.dedup();
        for rel in rels {
            let abs = self.root.join(rel_path(&rel));
            let in_capped = self
                .capped
                .iter()
                .any(|c| rel == *c || (rel.starts_with(c) && rel.get(c.len()) == Some(&b'/')));
            let meta = match fs::symlink_metadata(&abs) {
                Ok(m) => m,
                Err(_) => {
                    edits.insert(rel.clone(), Edit::Delete);
                    self.cache.remove(&rel)?;
                    self.excluded
                        .remove(&String::from_utf8_lossy(&rel).into_owned());
                    continue;
                }
            };
            let is_dir = meta.is_dir();
            if in_capped
                || self
                    .rules
                    .is_excluded_path(rel_path(&rel), is_dir, &mut self.tracked)
            {
                edits.insert(rel.clone(), Edit::Delete);
                continue;
            }
            if is_dir {
                let tree = repo.find_tree(base)?;
                let known = |r: &[u8]| {
                    tree.get_path(rel_path(r))
                        .is_ok_and(|e| e.filemode() == MODE_TREE as i32)
                };
                let mut tracker = self.tracker.take();
                let mut on_dir = |d: &Path| {
                    if let Some(t) = tracker.as_mut() {
                        t.watch_dir(d);
                    }
                };
                let walked = WalkCtx {
                    root: &self.root,
                    rules: &mut self.rules,
                    config: &self.config,
                    tracked: &mut self.tracked,
                    known_dir: &known,
                    on_dir: &mut on_dir,
                    on_found: None,
                }
                .walk(&rel);
                self.tracker = tracker;
                edits.insert(rel.clone(), Edit::Delete);
                for e in &walked.excluded {
                    if e.reason.starts_with("untracked folder") {
                        self.capped.insert(e.path.as_bytes().to_vec());
                    }
                }
                excluded.extend(walked.excluded);
                found.extend(walked.found);
                continue;
            }
            let Some(mode) = git_mode(&meta) else {
                edits.insert(rel.clone(), Edit::Delete);
                continue;
            };
            if meta.len() > self.config.max_untracked_file_bytes
                && mode != MODE_LINK
                && !self.tracked.contains(&rel)
            {
                edits.insert(rel.clone(), Edit::Delete);
                excluded.push(Excluded {
                    path: String::from_utf8_lossy(&rel).into_owned(),
                    reason: format!(
                        "untracked file of {} bytes (limit {})",
                        meta.len(),
                        self.config.max_untracked_file_bytes
                    ),
                });
                continue;
            }
            found.push(Found {
                stat: Some(Stat::of(&meta, mode)),
                rel,
                mode,
            });
        }
        let ids = self.ids_for(repo, &found, ticker)?;
        let now = now_secs();
        for (f, id) in found.iter().zip(&ids) {
            match (f.mode, id, &f.stat) {
                // An empty protected folder at the root is a sandbox's mount point while a
                // command runs (bubblewrap makes it on the host), not a change to record.
                (MODE_TREE, _, _) if sandbox_mount_point(&f.rel) => {
                    edits.insert(f.rel.clone(), Edit::Delete);
                }
                (MODE_TREE, _, _) => {
                    edits.insert(f.rel.clone(), Edit::EmptyDir);
                }
                (_, Some(id), Some(stat)) => {
                    edits.insert(f.rel.clone(), Edit::Put(*id, f.mode));
                    self.cache.record(&f.rel, stat, *id, now)?;
                }
                _ => {
                    edits.insert(f.rel.clone(), Edit::Delete);
                }
            }
        }
        for e in &excluded {
            self.excluded.insert(e.path.clone(), e.reason.clone());
        }
        let tree = if edits.is_empty() {
            base
        } else {
            let root = self.root.clone();
            let mut keep_empty =
                |rel: &[u8]| !sandbox_mount_point(rel) && is_empty_dir(&root.join(rel_path(rel)));
            tree::apply(repo, Some(base), &edits, &mut keep_empty)?
        };
        self.last = Some(tree);
        Ok(TreeSnapshot {
            tree,
            full_walk: false,
            hashed: self.last_hashed,
            excluded: self
                .excluded
                .iter()
                .map(|(p, r)| Excluded {
                    path: p.clone(),
                    reason: r.clone(),
                })
                .collect(),
        })
    }
}

/// A feeder for one snapshot's blobs (`threads`: other than the default).
fn feeder<'a>(
    repo_dir: &'a Path,
    root: &'a Path,
    threads: Option<usize>,
    ticker: &'a mut Ticker,
) -> Feeder<'a> {
    let f = Feeder::new(repo_dir, root, ticker);
    match threads {
        Some(n) => f.with_threads(n),
        None => f,
    }
}

/// Whether `rel` names a protected folder at the workspace root (`.git`, `.agent`, …): empty,
/// it is where a sandbox mounts a read-only placeholder, and never a recorded change.
pub(crate) fn sandbox_mount_point(rel: &[u8]) -> bool {
    cairn_policy::PROTECTED_FOLDERS
        .iter()
        .any(|f| f.as_bytes() == rel)
}

/// Whether `abs` is a folder with nothing in it.
pub(crate) fn is_empty_dir(abs: &Path) -> bool {
    fs::symlink_metadata(abs).is_ok_and(|m| m.is_dir())
        && fs::read_dir(abs).is_ok_and(|mut d| d.next().is_none())
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
