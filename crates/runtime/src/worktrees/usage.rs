//! Disk use of a repository's worktrees against a budget (`CAIRN_WORKTREES_BUDGET`, bytes or
//! with a `K`/`M`/`G` suffix, else the setting in `<state dir>/worktrees/budget` that the
//! app's Settings writes, else 20 GB), ignored build output counted.

use std::path::Path;

use cairn_worktree::{Repo, WorktreeError};
use serde::Serialize;

/// The default budget for a repository's worktrees: 20 GB.
pub const DEFAULT_BUDGET: u64 = 20 * 1024 * 1024 * 1024;

/// What the worktrees of a repository take on disk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct WorktreesUsage {
    /// Live worktrees.
    pub count: usize,
    /// Their bytes on disk (ignored build output included).
    #[ts(type = "number")]
    pub bytes: u64,
    /// The budget.
    #[ts(type = "number")]
    pub budget_bytes: u64,
    /// Whether they take more than the budget.
    pub over_budget: bool,
    /// Per worktree: NAME and bytes.
    #[ts(type = "Array<[string, number]>")]
    pub worktrees: Vec<(String, u64)>,
}

/// The budget in force for state dir `state_dir`.
pub fn budget_bytes(state_dir: &Path) -> u64 {
    std::env::var("CAIRN_WORKTREES_BUDGET")
        .ok()
        .and_then(|v| parse_size(&v))
        .or_else(|| {
            std::fs::read_to_string(budget_file(state_dir))
                .ok()
                .and_then(|v| parse_size(&v))
        })
        .unwrap_or(DEFAULT_BUDGET)
}

/// The file holding the budget setting.
fn budget_file(state_dir: &Path) -> std::path::PathBuf {
    state_dir.join("worktrees").join("budget")
}

/// Sets the budget for every face using `state_dir` (at least 1 GB).
pub fn set_budget(state_dir: &Path, bytes: u64) -> std::io::Result<()> {
    let file = budget_file(state_dir);
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes = bytes.max(1024 * 1024 * 1024);
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, bytes.to_string())?;
    std::fs::rename(&tmp, &file)
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

/// What Settings show of the worktrees' disk: their use (`None` outside a repository) and
/// the budget in force, and whether the environment sets it (then Settings cannot).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, export_to = "app/")]
pub struct WorktreeDiskView {
    /// What the repository's worktrees take.
    pub usage: Option<WorktreesUsage>,
    /// The budget in force.
    #[ts(type = "number")]
    pub budget_bytes: u64,
    /// `CAIRN_WORKTREES_BUDGET` sets it.
    pub from_env: bool,
}

/// The disk view of the worktrees of the repository of `workspace`.
pub fn disk_view(workspace: &Path, state_dir: &Path) -> Result<WorktreeDiskView, WorktreeError> {
    Ok(WorktreeDiskView {
        usage: usage(workspace, state_dir)?,
        budget_bytes: budget_bytes(state_dir),
        from_env: std::env::var("CAIRN_WORKTREES_BUDGET")
            .ok()
            .and_then(|v| parse_size(&v))
            .is_some(),
    })
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
    let budget = budget_bytes(state_dir);
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
    fn the_budget_setting_is_shared_through_the_state_dir() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        if std::env::var_os("CAIRN_WORKTREES_BUDGET").is_some() {
            return;
        }
        assert_eq!(budget_bytes(d.path()), DEFAULT_BUDGET);
        set_budget(d.path(), 5 * 1024 * 1024 * 1024).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(budget_bytes(d.path()), 5 * 1024 * 1024 * 1024);
        set_budget(d.path(), 10).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(budget_bytes(d.path()), 1024 * 1024 * 1024, "at least 1 GB");
    }

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("2K"), Some(2048));
        assert_eq!(parse_size("3g"), Some(3 * 1024 * 1024 * 1024));
        assert_eq!(parse_size("x"), None);
    }
}
