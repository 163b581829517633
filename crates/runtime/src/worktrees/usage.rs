//! Disk use of a repository's worktrees against a budget (`CAIRN_WORKTREES_BUDGET`, bytes,
//! or with a `K`/`M`/`G` suffix; default 20 GB), ignored build output counted.

use std::path::Path;

use cairn_worktree::{Repo, WorktreeError};
use serde::Serialize;

/// The default budget for a repository's worktrees: 20 GB.
pub const DEFAULT_BUDGET: u64 = 20 * 1024 * 1024 * 1024;

/// What the worktrees of a repository take on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorktreesUsage {
    /// Live worktrees.
    pub count: usize,
    /// Their bytes on disk (ignored build output included).
    pub bytes: u64,
    /// The budget.
    pub budget_bytes: u64,
    /// Whether they take more than the budget.
    pub over_budget: bool,
    /// Per worktree: NAME and bytes.
    pub worktrees: Vec<(String, u64)>,
}

/// The budget in force.
pub fn budget_bytes() -> u64 {
    std::env::var("CAIRN_WORKTREES_BUDGET")
        .ok()
        .and_then(|v| parse_size(&v))
        .unwrap_or(DEFAULT_BUDGET)
}

fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let (num, mult) = match v.chars().last()?.to_ascii_uppercase() {
        'K' => (&v[..v.len() - 1], 1024),
        'M' => (&v[..v.len() - 1], 1024 * 1024),
        'G' => (&v[..v.len() - 1], 1024 * 1024 * 1024),
        _ => (v, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// Disk use of the worktrees of the repository of `workspace`; `None` outside a repository.
pub fn usage(workspace: &Path, state_dir: &Path) -> Result<Option<WorktreesUsage>, WorktreeError> {
    let repo = match Repo::discover(workspace, &super::layout(state_dir)) {
        Ok(r) => r,
        Err(e) if e.is_usage() => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut worktrees = Vec::new();
    for r in repo.records.all()? {
        if r.removed.is_none() && r.path.is_dir() {
            worktrees.push((r.name.clone(), cairn_worktree::disk_use(&r.path)));
        }
    }
    let bytes = worktrees.iter().map(|(_, b)| b).sum();
    let budget = budget_bytes();
    Ok(Some(WorktreesUsage {
        count: worktrees.len(),
        bytes,
        budget_bytes: budget,
        over_budget: bytes > budget,
        worktrees,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("2K"), Some(2048));
        assert_eq!(parse_size("3g"), Some(3 * 1024 * 1024 * 1024));
        assert_eq!(parse_size("x"), None);
    }
}
