//! Storage accounting and garbage collection: retention of old sessions, a size budget, and
//! pruning of objects no session reaches (in place: nothing is copied, so it never needs
//! twice the space).

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use git2::{ObjectType, Oid, Repository};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::log::SessionLog;
use crate::store::read_json;
use crate::vcs::Vcs;

/// Objects younger than this are never pruned (a running snapshot may not be referenced yet).
const PRUNE_GRACE: Duration = Duration::from_secs(3600);

/// How much a workspace's store holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Bytes on disk (sum of file sizes).
    pub bytes: u64,
    /// Sessions with checkpoints.
    pub sessions: usize,
    /// The configured budget.
    pub budget_bytes: u64,
    /// Whether `bytes` exceeds the budget.
    pub over_budget: bool,
}

/// What a garbage collection did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GcReport {
    /// Sessions whose checkpoints were dropped (retention or budget).
    pub dropped_sessions: Vec<String>,
    /// Unreachable objects deleted.
    pub pruned_objects: usize,
    /// Store size before.
    pub bytes_before: u64,
    /// Store size after.
    pub bytes_after: u64,
    /// Whether the store is still over budget (only the newest session is left).
    pub over_budget: bool,
}

/// Sum of the sizes of the files under `path`.
pub(crate) fn dir_size(path: &Path) -> u64 {
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

impl Vcs {
    /// The store's size against its budget.
    pub fn usage(&self) -> Result<Usage> {
        let bytes = dir_size(self.store().root());
        let budget = self.config().budget_bytes;
        Ok(Usage {
            bytes,
            sessions: self.session_files()?.len(),
            budget_bytes: budget,
            over_budget: bytes > budget,
        })
    }

    /// Drops sessions past retention, then the oldest while over budget (never the newest),
    /// then deletes objects no remaining session reaches.
    pub fn gc(&mut self) -> Result<GcReport> {
        let mut report = GcReport {
            bytes_before: dir_size(self.store().root()),
            ..GcReport::default()
        };
        let mut sessions: Vec<(String, String)> = Vec::new();
        for f in self.session_files()? {
            if let Some(log) = read_json::<SessionLog>(&f)? {
                sessions.push((log.updated_at.clone(), log.session_id));
            }
        }
        sessions.sort();
        let cutoff =
            chrono::Utc::now() - chrono::Duration::days(i64::from(self.config().retention_days));
        let cutoff = cutoff.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let mut kept = Vec::new();
        for (at, id) in sessions {
            if at < cutoff {
                self.forget(&id)?;
                report.dropped_sessions.push(id);
            } else {
                kept.push(id);
            }
        }
        report.pruned_objects += self.prune()?;
        while dir_size(self.store().root()) > self.config().budget_bytes && kept.len() > 1 {
            let id = kept.remove(0);
            self.forget(&id)?;
            report.dropped_sessions.push(id);
            report.pruned_objects += self.prune()?;
        }
        report.bytes_after = dir_size(self.store().root());
        report.over_budget = report.bytes_after > self.config().budget_bytes;
        if report.over_budget {
            tracing::warn!(
                bytes = report.bytes_after,
                budget = self.config().budget_bytes,
                "checkpoint store is over its budget with only the newest session left"
            );
        }
        Ok(report)
    }

    fn prune(&mut self) -> Result<usize> {
        let _lock = self.store().lock()?;
        let repo = &self.store().repo;
        let reachable = reachable(repo)?;
        let objects = self.store().repo_dir().join("objects");
        let now = SystemTime::now();
        let mut pruned = 0;
        let Ok(fanout) = fs::read_dir(&objects) else {
            return Ok(0);
        };
        for d in fanout.flatten() {
            let name = d.file_name().to_string_lossy().to_string();
            if name.len() != 2 || !name.chars().all(|c| c.is_ascii_hexdigit()) {
                continue;
            }
            let Ok(files) = fs::read_dir(d.path()) else {
                continue;
            };
            for f in files.flatten() {
                let rest = f.file_name().to_string_lossy().to_string();
                let Ok(id) = Oid::from_str(&format!("{name}{rest}")) else {
                    continue;
                };
                if reachable.contains(&id) {
                    continue;
                }
                let young = f
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .is_none_or(|age| age < PRUNE_GRACE);
                if !young && fs::remove_file(f.path()).is_ok() {
                    pruned += 1;
                }
            }
        }
        Ok(pruned)
    }
}

/// Every object reachable from Cairn's refs.
fn reachable(repo: &Repository) -> Result<HashSet<Oid>> {
    let mut seen = HashSet::new();
    let mut walk = repo.revwalk()?;
    for r in repo.references_glob("refs/cairn/*")?.flatten() {
        if let Some(id) = r.target() {
            walk.push(id)?;
        }
    }
    let mut trees = Vec::new();
    for id in walk.flatten() {
        seen.insert(id);
        if let Ok(c) = repo.find_commit(id) {
            trees.push(c.tree_id());
        }
    }
    while let Some(t) = trees.pop() {
        if !seen.insert(t) {
            continue;
        }
        let tree = repo.find_tree(t)?;
        for e in tree.iter() {
            match e.kind() {
                Some(ObjectType::Tree) => trees.push(e.id()),
                _ => {
                    seen.insert(e.id());
                }
            }
        }
    }
    Ok(seen)
}
